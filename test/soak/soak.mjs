// Soak: steady calls, lease churn, crashes and reloads at once for
// SOAK_SECONDS (default 600), against the optimised daemon. Healthy servers
// must see zero failures; RSS must stay within ±10 % and descriptors and
// children flat between the first and the last sample.
// Run with `make soak`; not part of `make test`.
import fs from 'node:fs';
import path from 'node:path';
import { start, fixtures, sleep, waitFor } from '../integration/lib/harness.mjs';

const seconds = Number(process.env.SOAK_SECONDS || 600);
const FIXTURE = path.join(fixtures, 'mcp_fixture');

const yaml = (variant) => `version: 1
gateway:
  warm_spares: 2
  max_instances_per_server: 64
  lease_idle_timeout: 5s
  reload: {debounce_ms: 100, poll_interval_ms: 500}
servers:
  calm:
    truely-stateless: true
    command: ${FIXTURE}
    transform: [{prefix: calm_}]
  leased:
    command: ${FIXTURE}
    transform: [{prefix: lease_}]
  crashy:
    truely-stateless: true
    command: ${FIXTURE}
    args: [--crash-on-call, tool_0, --tools, '${variant % 2 ? 2 : 1}']
    transform: [{prefix: '${variant % 3 ? 'crash_' : 'boom_'}'}]
`;

function sample(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
  const fds = fs.readdirSync(`/proc/${pid}/fd`).length;
  let children = 0, zombies = 0;
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const st = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      if (Number(f[1]) === pid) { children++; if (f[0] === 'Z') zombies++; }
    } catch { /* gone */ }
  }
  return { rssKb: rss, fds, children, zombies };
}

const stats = { calls: 0, healthyFailures: 0, crashes: 0, crashAnswers: {}, reloads: 0, leases: 0, releases: 0 };
const failures = [];

async function worker(d, id, deadline) {
  let n = 0;
  while (Date.now() < deadline) {
    const dialog = `w${id}-${Math.floor(n / 20)}`;
    const r1 = await d.post('/v1/tools/calm_echo/call', { arguments: { text: `c${n}` } });
    const r2 = await d.post('/v1/tools/lease_echo/call', { dialog, arguments: { text: `l${n}` } });
    stats.calls += 2;
    for (const [r, want] of [[r1, `c${n}`], [r2, `l${n}`]]) {
      if (r.status !== 200 || r.json.contentItems[0].text !== want) {
        stats.healthyFailures++;
        if (failures.length < 20) failures.push(`${r.status} ${r.body.slice(0, 200)}`);
      }
    }
    if (r2.json?.lease?.reminder) stats.leases++;
    if (n % 20 === 19) {
      await d.post(`/v1/dialogs/${dialog}/release`, {});
      stats.releases++;
    }
    n++;
  }
}

async function chaos(d, deadline) {
  let variant = 0;
  while (Date.now() < deadline) {
    const tools = (await d.get('/v1/tools?toolset=crashy')).json.tools.map((t) => t.name);
    const boom = tools.find((t) => t.endsWith('tool_0'));
    if (boom) {
      const r = await d.post(`/v1/tools/${boom}/call`, {});
      stats.crashes++;
      stats.crashAnswers[r.status] = (stats.crashAnswers[r.status] || 0) + 1;
    }
    await sleep(1500);
    if (++variant % 3 === 0) {
      fs.writeFileSync(`${d.configPath}.tmp`, yaml(variant));
      fs.renameSync(`${d.configPath}.tmp`, d.configPath);
      stats.reloads++;
    }
  }
}

const d = await start(yaml(0), { waitReady: true, keepLog: 1 << 16 });
try {
  // Warm up, then take the first sample.
  const warm = Date.now() + 5000;
  await Promise.all([0, 1, 2, 3].map((i) => worker(d, i, warm)));
  await sleep(1000);
  const first = sample(d.pid);
  const deadline = Date.now() + seconds * 1000;
  const t0 = Date.now();
  await Promise.all([...Array.from({ length: 6 }, (_, i) => worker(d, i + 10, deadline)), chaos(d, deadline)]);
  // Let idle leases expire and replaced instances stop before the last sample.
  await sleep(8000);
  const last = sample(d.pid);
  const elapsed = (Date.now() - t0) / 1000;
  const rssChange = (last.rssKb - first.rssKb) / first.rssKb;
  const report = {
    seconds: Math.round(elapsed), ...stats, callsPerSecond: Math.round(stats.calls / elapsed),
    first, last, rssChangePercent: Math.round(rssChange * 1000) / 10, failures,
  };
  console.log(JSON.stringify(report, null, 2));
  console.log(`\n| figure | start | end |\n| --- | --- | --- |\n| RSS (kB) | ${first.rssKb} | ${last.rssKb} |\n| descriptors | ${first.fds} | ${last.fds} |\n| children | ${first.children} | ${last.children} |\n| zombies | ${first.zombies} | ${last.zombies} |`);
  console.log(`\n${stats.calls} calls in ${Math.round(elapsed)} s, ${stats.healthyFailures} failures on healthy servers, ${stats.crashes} crashes, ${stats.reloads} reloads, ${stats.leases} leases, ${stats.releases} releases`);
  const ok = stats.healthyFailures === 0 && Math.abs(rssChange) <= 0.10 && last.fds <= first.fds + 2 && last.zombies === 0;
  await d.stop();
  if (!ok) {
    console.error('soak FAILED');
    process.exit(1);
  }
  console.log('soak passed');
} catch (e) {
  await d.stop('SIGKILL').catch(() => {});
  throw e;
}
