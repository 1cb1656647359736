// The shape of src/ (style.md, docs/architecture.md): no source file over
// MAX_LINES lines, and no include cycle between modules. A module is a
// header's name and the files that extend it: include/gw/X.h,
// include/gw/X_internal.h, src/X.c and src/X_*.c, unless X_* names a
// module of its own (upstream_http_xfer.c belongs to upstream_http,
// http_xfer.c to http_xfer, not to http). Prints what it finds and exits
// 1 when either rule is broken.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const MAX_LINES = 800;
const root = new URL('../..', import.meta.url).pathname;
const src = join(root, 'src');
const inc = join(root, 'include/gw');

const headers = readdirSync(inc).filter((f) => f.endsWith('.h')).map((f) => f.slice(0, -2));
const names = [...new Set(headers.map((h) => h.replace(/_internal$/, '')))]
  .sort((a, b) => b.length - a.length);
const moduleOf = (base) => names.find((m) => base === m || base.startsWith(`${m}_`)) ?? base;

const files = [
  ...readdirSync(src).filter((f) => f.endsWith('.c')).map((f) => ({ path: join(src, f), base: f.slice(0, -2) })),
  ...headers.map((h) => ({ path: join(inc, `${h}.h`), base: h })),
];

const problems = [];
const edges = new Map();
for (const { path, base } of files) {
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n').length - 1;
  if (path.endsWith('.c') && lines > MAX_LINES) problems.push(`${path.slice(root.length)}: ${lines} lines (at most ${MAX_LINES})`);
  const from = moduleOf(base);
  if (!edges.has(from)) edges.set(from, new Map());
  for (const m of text.matchAll(/^#include "gw\/([a-z0-9_]+)\.h"/gm)) {
    const to = moduleOf(m[1]);
    if (to !== from && !edges.get(from).has(to)) edges.get(from).set(to, `${path.slice(root.length)} includes gw/${m[1]}.h`);
  }
}

// Tarjan's strongly connected components: a component of more than one
// module is a cycle.
let index = 0;
const idx = new Map(), low = new Map(), stack = [], on = new Set(), comps = [];
function visit(v) {
  idx.set(v, index); low.set(v, index); index++;
  stack.push(v); on.add(v);
  for (const w of (edges.get(v) ?? new Map()).keys()) {
    if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
    else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
  }
  if (low.get(v) === idx.get(v)) {
    const comp = [];
    let w;
    do { w = stack.pop(); on.delete(w); comp.push(w); } while (w !== v);
    if (comp.length > 1) comps.push(comp);
  }
}
for (const v of edges.keys()) if (!idx.has(v)) visit(v);
for (const comp of comps) {
  const set = new Set(comp);
  const why = comp.flatMap((v) => [...edges.get(v)].filter(([w]) => set.has(w)).map(([, how]) => `    ${how}`));
  problems.push(`include cycle between ${comp.sort().join(', ')}:\n${why.join('\n')}`);
}

const nmods = edges.size;
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`src/: ${files.length} files in ${nmods} modules, none over ${MAX_LINES} lines, no include cycle`);
