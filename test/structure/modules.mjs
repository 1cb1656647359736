// The shape of src/ (style.md, docs/architecture.md). Prints what it finds
// and exits 1 when a rule is broken:
//
// - no source file over MAX_LINES lines;
// - src/ holds main.c and one folder per layer (LAYERS), nothing deeper;
// - no include cycle between modules;
// - layers point down: a file includes headers, and names functions, of its
//   own folder or of folders below, never of a folder above or of a peer
//   (folders in one row of LAYERS know nothing of each other).
//
// A module is a header's name and the files that extend it:
// include/gw/X.h, include/gw/X_internal.h, X.c and X_*.c, unless X_* names
// a module of its own (upstream_http_xfer.c belongs to upstream_http,
// http_xfer.c to http_xfer, not to http). A module's .c files sit in one
// folder, and its headers belong to that folder: include/gw/ stays flat
// (docs/architecture.md says why). A header without a .c names its folder
// in HEADER_ONLY. A function belongs to the folder of the file that
// defines it (non-static, at the start of a line) or of the header that
// defines it inline.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const MAX_LINES = 800;
// Top to bottom. '.' is src/ itself (main.c).
const LAYERS = [
  ['.'],
  ['daemon', 'import', 'cli'],
  ['rest', 'mcp'],
  ['dispatch'],
  ['servers'],
  ['client'],
  ['upstream'],
  ['oauth', 'process'],
  ['net'],
  ['http', 'config'],
  ['base'],
];
const HEADER_ONLY = { errors: 'base', version: 'base', transport: 'upstream' };
// Folders of src/ that hold no C: the status page's files, compiled into
// rest/ui.c's table by the Makefile.
const ASSETS = ['ui'];

const root = new URL('../..', import.meta.url).pathname;
const src = join(root, 'src');
const inc = join(root, 'include/gw');
const rel = (path) => path.slice(root.length);
const rank = new Map(LAYERS.flatMap((row, i) => row.map((f) => [f, i])));
const dirOf = (folder) => (folder === '.' ? 'src/' : `src/${folder}/`);

const problems = [];

const headers = readdirSync(inc).filter((f) => f.endsWith('.h')).map((f) => f.slice(0, -2));
const names = [...new Set(headers.map((h) => h.replace(/_internal$/, '')))]
  .sort((a, b) => b.length - a.length);
const moduleOf = (base) => names.find((m) => base === m || base.startsWith(`${m}_`)) ?? base;

// The .c files and their folders.
const sources = [];
for (const entry of readdirSync(src)) {
  const path = join(src, entry);
  if (statSync(path).isDirectory()) {
    if (ASSETS.includes(entry)) {
      for (const f of readdirSync(path)) {
        if (f.endsWith('.c') || f.endsWith('.h')) problems.push(`src/${entry}/${f}: src/${entry}/ holds the page's files, no C`);
      }
      continue;
    }
    if (!rank.has(entry)) {
      problems.push(`src/${entry}/: not a folder of LAYERS in test/structure/modules.mjs`);
      continue;
    }
    for (const f of readdirSync(path)) {
      if (f.endsWith('.c')) sources.push({ path: join(path, f), base: f.slice(0, -2), folder: entry });
      else if (statSync(join(path, f)).isDirectory()) problems.push(`src/${entry}/${f}/: src/ is one level of folders`);
    }
  } else if (entry.endsWith('.c')) {
    if (entry === 'main.c') sources.push({ path, base: 'main', folder: '.' });
    else problems.push(`src/${entry}: only main.c sits in src/ itself; a layer's files go in its folder`);
  }
}

// One name per file: modules, objects in the fuzz archive and the docs go by it.
const seen = new Map();
for (const s of sources) {
  if (seen.has(s.base)) problems.push(`${rel(s.path)} and ${rel(seen.get(s.base).path)}: two files of one name`);
  else seen.set(s.base, s);
}

// Each module's folder: where its .c files are, all of them.
const folderOf = new Map(Object.entries(HEADER_ONLY));
const foldersOf = new Map();
for (const s of sources) {
  const m = moduleOf(s.base);
  if (!foldersOf.has(m)) foldersOf.set(m, new Set());
  foldersOf.get(m).add(s.folder);
}
for (const [m, set] of foldersOf) {
  if (set.size > 1) problems.push(`module ${m}: files in ${[...set].map(dirOf).join(' and ')} (a module's files stay in one folder)`);
  if (m in HEADER_ONLY) problems.push(`module ${m}: has a .c file, so it is not HEADER_ONLY`);
  folderOf.set(m, [...set][0]);
}
for (const h of headers) {
  if (!folderOf.has(moduleOf(h))) problems.push(`include/gw/${h}.h: no .c of its module; name its folder in HEADER_ONLY`);
}

const files = [
  ...sources,
  ...headers.map((h) => ({ path: join(inc, `${h}.h`), base: h, folder: folderOf.get(moduleOf(h)) })),
];

// Comments and string literals removed, so a sentence that names a
// function above is not a call.
const code = (text) =>
  text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g, (m) =>
    m.startsWith('"') ? '""' : m.startsWith("'") ? "''" : m.replace(/[^\n]/g, ' '));

// Who defines each function.
const owner = new Map();
for (const f of files) {
  const text = code(readFileSync(f.path, 'utf8'));
  f.text = text;
  const defs = f.path.endsWith('.c')
    ? text.matchAll(/^(?!static\b|typedef\b|extern\b)[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*\{/gm)
    : text.matchAll(/^static inline\b[\w \t*]*?\b([A-Za-z_]\w*)\s*\(/gm);
  for (const [, name] of defs) if (name !== 'main') owner.set(name, f);
}

const above = (from, to) => from !== undefined && to !== undefined && from !== to && rank.get(to) <= rank.get(from);
const why = (from, to) =>
  rank.get(to) < rank.get(from) ? `${dirOf(to)} is above ${dirOf(from)}` : `${dirOf(to)} and ${dirOf(from)} are peers`;

const edges = new Map();
for (const f of files) {
  const raw = readFileSync(f.path, 'utf8');
  const lines = raw.split('\n').length - 1;
  if (f.path.endsWith('.c') && lines > MAX_LINES) problems.push(`${rel(f.path)}: ${lines} lines (at most ${MAX_LINES})`);
  const from = moduleOf(f.base);
  if (!edges.has(from)) edges.set(from, new Map());
  for (const m of raw.matchAll(/^#include "gw\/([a-z0-9_]+)\.h"/gm)) {
    const to = moduleOf(m[1]);
    if (to !== from && !edges.get(from).has(to)) edges.get(from).set(to, `${rel(f.path)} includes gw/${m[1]}.h`);
    const toFolder = folderOf.get(to);
    if (above(f.folder, toFolder)) problems.push(`${rel(f.path)} includes gw/${m[1]}.h: ${why(f.folder, toFolder)}`);
  }
  const named = new Set();
  for (const [name] of f.text.matchAll(/\b[A-Za-z_]\w*\b/g)) {
    const def = owner.get(name);
    if (def === undefined || named.has(name) || !above(f.folder, def.folder)) continue;
    named.add(name);
    problems.push(`${rel(f.path)} names ${name}() of ${rel(def.path)}: ${why(f.folder, def.folder)}`);
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
  const how = comp.flatMap((v) => [...edges.get(v)].filter(([w]) => set.has(w)).map(([, e]) => `    ${e}`));
  problems.push(`include cycle between ${comp.sort().join(', ')}:\n${how.join('\n')}`);
}

if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
const nfolders = new Set(sources.map((s) => s.folder)).size;
console.log(`src/: ${files.length} files in ${edges.size} modules and ${nfolders} folders, none over ${MAX_LINES} lines, ` +
  'no include cycle, no include or call upward or between peers');
