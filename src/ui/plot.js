// Per-server calls/s and p50/p99 latency, kept by the page: each read of
// /metrics is one sample; rates and quantiles come from the differences
// between samples (the daemon keeps no history for this).
import { h, svg } from './dom.js';

const KEEP_MS = 10 * 60 * 1000;
const history = new Map(); // server -> [{t, calls, buckets: Map(le -> count)}]
const series = new Map(); // server -> [{t, rate, p50, p99}]

function labels(s) {
  const out = {};
  for (const m of s.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) out[m[1]] = m[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
  return out;
}

// Sums the calls and the duration histogram of each server over fronts,
// tools and statuses.
export function parseMetrics(text) {
  const per = new Map();
  const get = (s) => {
    if (!per.has(s)) per.set(s, { calls: 0, buckets: new Map() });
    return per.get(s);
  };
  for (const line of text.split('\n')) {
    const m = /^(mcpgw_tool_calls_total|mcpgw_tool_call_duration_seconds_bucket)\{(.*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const l = labels(m[2]);
    const v = Number(m[3]);
    if (!l.server) continue;
    const s = get(l.server);
    if (m[1] === 'mcpgw_tool_calls_total') s.calls += v;
    else s.buckets.set(l.le, (s.buckets.get(l.le) || 0) + v);
  }
  return per;
}

function quantile(deltas, q) {
  const total = deltas.get('+Inf') || 0;
  if (total <= 0) return null;
  const buckets = [...deltas].filter(([k]) => k !== '+Inf').map(([k, c]) => [Number(k), c]).sort((x, y) => x[0] - y[0]);
  let prevLe = 0, prevCount = 0;
  for (const [le, c] of buckets) {
    if (c >= q * total) {
      // Linear within the bucket, as Prometheus' histogram_quantile does.
      const inBucket = c - prevCount;
      return inBucket > 0 ? prevLe + (le - prevLe) * ((q * total - prevCount) / inBucket) : le;
    }
    prevLe = le; prevCount = c;
  }
  return prevLe;
}

export function sample(text, now = Date.now()) {
  for (const [server, cur] of parseMetrics(text)) {
    const hist = history.get(server) || [];
    const prev = hist[hist.length - 1];
    hist.push({ t: now, ...cur });
    while (hist.length > 2 && now - hist[0].t > KEEP_MS) hist.shift();
    history.set(server, hist);
    if (!prev) continue;
    const dt = (now - prev.t) / 1000;
    const deltas = new Map();
    for (const [le, c] of cur.buckets) deltas.set(le, Math.max(0, c - (prev.buckets.get(le) || 0)));
    const pts = series.get(server) || [];
    pts.push({ t: now, rate: Math.max(0, cur.calls - prev.calls) / dt, p50: quantile(deltas, 0.5), p99: quantile(deltas, 0.99) });
    while (pts.length && now - pts[0].t > KEEP_MS) pts.shift();
    series.set(server, pts);
  }
}

function fmtMs(s) {
  if (s === null || s === undefined) return '–';
  const ms = s * 1000;
  return ms < 10 ? `${ms.toFixed(1)} ms` : ms < 10000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function line(pts, key, max, w, hgt, t0, span) {
  const xy = pts.filter((p) => p[key] !== null).map((p) => `${(((p.t - t0) / span) * w).toFixed(1)},${(hgt - 2 - (p[key] / max) * (hgt - 4)).toFixed(1)}`);
  return xy.length ? xy.join(' ') : null;
}

// The plot of one server: calls/s on its own scale, p50 and p99 (dashed)
// on the latency scale, over what the page has seen of the last 10
// minutes (at least one); the last values and the peaks as text.
export function plot(server) {
  const pts = series.get(server) || [];
  const last = pts[pts.length - 1];
  const w = 300, hgt = 56, now = Date.now();
  const span = Math.min(KEEP_MS, Math.max(60000, pts.length ? now - pts[0].t : 0));
  const t0 = now - span;
  const root = svg('svg', { viewBox: `0 0 ${w} ${hgt}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': `calls per second and latency of ${server} over the last ${Math.round(span / 60000)} minutes` });
  const maxRate = Math.max(0.1, ...pts.map((p) => p.rate));
  const peakLat = Math.max(0, ...pts.map((p) => p.p99 || 0));
  const maxLat = Math.max(0.001, peakLat);
  for (const [key, max] of [['rate', maxRate], ['p50', maxLat], ['p99', maxLat]]) {
    const points = line(pts, key, max, w, hgt, t0, span);
    if (points) root.append(svg('polyline', { points, class: key === 'rate' ? 'calls' : key, 'vector-effect': 'non-scaling-stroke' }));
  }
  return h('div', { class: 'plot' },
    root,
    h('span', { class: 'key key-calls' }, `calls/s ${last ? last.rate.toFixed(2) : '–'}`),
    h('span', { class: 'key key-p50' }, `p50 ${fmtMs(last && last.p50)}`),
    h('span', { class: 'key key-p99' }, `p99 ${fmtMs(last && last.p99)}`),
    h('span', { class: 'muted' }, pts.length ? `peaks ${Math.max(0, ...pts.map((p) => p.rate)).toFixed(2)}/s, ${fmtMs(peakLat || null)} · last ${Math.round(span / 60000)} min` : 'collecting…'));
}
