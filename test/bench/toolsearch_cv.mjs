// Cross-validation of the ranking's constants by server (issue 34 item 11):
// the benchmark is run once per candidate (the defaults, and each constant
// moved one step either way) with TS_RANKS, on mcpgw's own tasks and fold
// A of the external set only (TS_TUNING: fold B is never run). The tasks'
// servers are split into K groups; for each group, the candidate best on
// the others (recall@1 + recall@5 + MRR) is scored on it. Prints what the
// choice would have scored on servers it did not see, beside the defaults.
//   node test/bench/toolsearch_cv.mjs [K]   (after make bench-toolsearch)
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const K = Number(process.argv[2] || 5);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const data = path.join(root, 'test/bench/toolsearch');
const bench = path.join(root, 'build/bench/toolsearch_bench');
// struct gw_ts_weights, in order
const BASE = {
  wn: 3, wo: 1.5, wt: 2, wd: 1, wp: 0.5, ws: 1.5, bn: 0.3, bo: 0.3, bt: 0.3, bd: 0.75, bp: 0.75, bs: 0.2,
  k1: 1.2, cover: 2, syn: 1, assoc: 0.6, syncover: 1, path: 0.5, ask: 0.3, verb: 0.3, payload: 0.3,
};
const GRID = {
  wn: [2, 4], wo: [1, 2], wt: [1.5, 3], wd: [0.5, 1.5], wp: [0.25, 1], bn: [0.1, 0.5], bt: [0.1, 0.5],
  bd: [0.5, 0.9], bp: [0.5, 0.9], k1: [0.9, 1.6, 2], cover: [1.5, 3], syn: [0.8, 1.2],
  assoc: [0.4, 0.8], syncover: [0.7, 1.3], ask: [0.2, 0.5], verb: [0.2, 0.5], payload: [0.2, 0.5],
};

function run(c) {
  const out = execFileSync(bench, [`${data}/catalog.json`, `${data}/tasks.json`,
    `${data}/external/catalog.json`, `${data}/external/queries.jsonl`], {
    env: { ...process.env, TS_TUNE: Object.keys(BASE).map((k) => c[k]).join(','), TS_RANKS: '1',
      TS_TUNING: '1', TS_QUALITY_ONLY: '1' },
    encoding: 'utf8',
  });
  return out.split('\n').map((l) => l.match(/^rank (\d+) (\S+) "/)).filter(Boolean)
    .map((m) => ({ server: m[2], rank: Number(m[1]) }));
}

function metrics(res, idx) {
  const n = idx.length;
  const r1 = idx.filter((i) => res[i].rank === 1).length / n;
  const r5 = idx.filter((i) => res[i].rank >= 1 && res[i].rank <= 5).length / n;
  const mrr = idx.reduce((s, i) => s + (res[i].rank ? 1 / res[i].rank : 0), 0) / n;
  return [r1, r5, mrr];
}
const score = (res, idx) => metrics(res, idx).reduce((a, b) => a + b, 0);
const show = (m) => m.map((v) => v.toFixed(3)).join(' / ');

const cands = [{ ...BASE }];
for (const [k, vs] of Object.entries(GRID)) for (const v of vs) cands.push({ ...BASE, [k]: v });
const desc = (c) => Object.keys(BASE).filter((k) => c[k] !== BASE[k]).map((k) => `${k}=${c[k]}`).join(',') || 'defaults';
const results = cands.map(run);
const all = results[0].map((_, i) => i);
// servers in a fixed shuffled order (the same server of both sets in one group)
const servers = [...new Set(results[0].map((r) => r.server))].sort();
let seed = 34;
for (let i = servers.length - 1; i > 0; i--) {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  const j = seed % (i + 1);
  [servers[i], servers[j]] = [servers[j], servers[i]];
}
const group = new Map(servers.map((s, i) => [s, i % K]));
const held = [];
const chosen = [];
for (let f = 0; f < K; f++) {
  const train = all.filter((i) => group.get(results[0][i].server) !== f);
  let best = 0;
  for (let c = 1; c < cands.length; c++)
    if (score(results[c], train) > score(results[best], train)) best = c;
  chosen.push(desc(cands[best]));
  for (const i of all) if (group.get(results[0][i].server) === f) held[i] = results[best][i];
}
console.log(`${servers.length} servers, ${all.length} tasks, ${cands.length} candidates, ${K} groups`);
console.log(`chosen per group: ${chosen.join('; ')}`);
console.log(`defaults, recall@1 / recall@5 / MRR:            ${show(metrics(results[0], all))}`);
console.log(`chosen on the other groups, on servers unseen: ${show(metrics(held, all))}`);
