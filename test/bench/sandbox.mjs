// What the sandbox costs (issue 36), as a table (`make bench-sandbox`, also
// the last part of `make bench`): one mcpgw with the same servers twice,
// sandboxed and not, measured interleaved.
//
//  - start → ready: the first call of a new dialog with warm_spares: 0 (a
//    spawn, initialize, the call), C echo server and server-memory;
//  - bubblewrap alone: the daemon's own bwrap command line (read from a
//    sandboxed instance's /proc/PID/cmdline) running /bin/true, against
//    /bin/true;
//  - memory per instance: RSS and PSS of bubblewrap's two processes (the
//    monitor the daemon spawns and the PID namespace's init) beside the
//    server's own; and what BENCH_MEM_INSTANCES (20) leased instances add
//    to the host, sandboxed and not, alternated: the sum of the USS
//    (private pages), PSS and RSS of every process they add, the kernel's
//    memory charged for them (the daemon run in a memory cgroup of the
//    bench's own where cgroup v1's memory controller is writable:
//    anonymous, page cache and tmpfs, kernel memory), and /proc/meminfo's
//    MemAvailable, Slab and PageTables (global: other processes move
//    them); and what bubblewrap's resident pages are, by mapping;
//  - the daemon's own CPU time per start (its threads' schedstat around
//    each first call), which the load does not move as it moves wall time;
//  - call latency through a leased instance at c=1 (bench_client http),
//    BENCH_ROUNDS alternated runs (24) of BENCH_DURATION seconds (0.5),
//    the sandboxed run compared with the unsandboxed one next to it, and
//    single calls alternated one by one in blocks of 500: the figure is
//    the median of those per-pair (per-block) ratios of p50s, with their
//    interquartile range, so that one slow second of the machine cannot
//    make or hide a difference.
//
//   node test/bench/sandbox.mjs         (BENCH_QUICK=1: fewer samples)
// Listens on 127.0.0.1 only; stops what it starts by pid; bounded waits.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import nodeHttp from 'node:http';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const OUT = path.join(ROOT, 'build/bench');
const MCPGW = process.env.MCPGW_BIN || path.join(OUT, 'mcpgw');
const CLIENT = path.join(OUT, 'bench_client');
const ECHO_C = path.join(OUT, 'echo_server');
const MEMORY = path.join(ROOT, 'test/node_modules/@modelcontextprotocol/server-memory/dist/index.js');
const QUICK = process.env.BENCH_QUICK === '1';
const COLD_C = QUICK ? 8 : 30;
const COLD_NODE = QUICK ? 3 : 8;
const RSS_INSTANCES = 5;
const MEM_INSTANCES = Number(process.env.BENCH_MEM_INSTANCES || 20);
const MEM_ROUNDS = QUICK ? 1 : 3;
// Latency: many short runs alternated, so that the load of a shared machine
// drifts across both sides alike; and single calls alternated one by one.
const LAT_ROUNDS = Number(process.env.BENCH_ROUNDS || (QUICK ? 4 : 24));
const LAT_SECONDS = Number(process.env.BENCH_DURATION || 0.5);
const BLOCK = 500;
const PAIRS = QUICK ? 2000 : 10000;
const log = (...a) => process.stderr.write(a.join(' ') + '\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const v = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!v.length) return NaN;
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '—');
const quartiles = (xs) => {
  const v = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return { q1: v[Math.floor((v.length - 1) / 4)], med: median(v), q3: v[Math.ceil((v.length - 1) * 3 / 4)] };
};
// "+1.2 % (IQR −0.5 … +2.9 %)" of ratios b/a − 1.
const pct = (x) => `${x >= 0 ? '+' : '−'}${fmt(Math.abs(x * 100))}`;
const ratioCell = (ratios) => { const q = quartiles(ratios.map((r) => r - 1)); return `${pct(q.med)} % (IQR ${pct(q.q1)} … ${pct(q.q3)} %)`; };

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpgw-bench-sandbox-'));
const freePort = () => new Promise((r) => { const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => r(p)); }); });

const agent = new nodeHttp.Agent({ keepAlive: true, maxSockets: 1 });
function req(method, port, p, obj) {
  const body = obj === undefined ? '' : JSON.stringify(obj);
  return new Promise((resolve, reject) => {
    const r = nodeHttp.request({ host: '127.0.0.1', port, path: p, method, agent, timeout: 60000,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => { let json = null; try { json = JSON.parse(text); } catch { /* text */ } resolve({ status: res.statusCode, text, json }); });
    });
    r.on('error', reject);
    r.on('timeout', () => r.destroy(new Error('timeout')));
    r.end(body);
  });
}

// ---- /proc

function children(pid) {
  try { return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number); } catch { return []; }
}
function comm(pid) { try { return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim(); } catch { return '?'; } }
function mem(pid) {
  try {
    const t = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (k) => Number((new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(t) || [])[1]);
    return { rss: kb('Rss'), pss: kb('Pss'), anon: kb('Anonymous'), uss: kb('Private_Clean') + kb('Private_Dirty') };
  } catch { return { rss: NaN, pss: NaN, anon: NaN, uss: NaN }; }
}
// An instance's processes from its leader down: [{pid, comm, rss, pss}].
function tree(pid) {
  const out = [];
  for (const todo = [pid]; todo.length && out.length < 32;) {
    const p = todo.shift();
    out.push({ pid: p, comm: comm(p), ...mem(p) });
    todo.push(...children(p));
  }
  return out;
}

// A process's resident pages by mapping (/proc/PID/smaps): kB of RSS, PSS
// and private pages per file, [heap], [stack] or anonymous.
function smapsByMapping(pid) {
  const out = new Map();
  let cur = null;
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const name = head[1] || '[anon]';
      cur = out.get(name) || { name, rss: 0, pss: 0, priv: 0 };
      out.set(name, cur);
      continue;
    }
    const f = /^(Rss|Pss|Private_Clean|Private_Dirty):\s+(\d+)/.exec(line);
    if (f && cur) cur[f[1] === 'Rss' ? 'rss' : f[1] === 'Pss' ? 'pss' : 'priv'] += Number(f[2]);
  }
  return [...out.values()].filter((x) => x.rss > 0).sort((a, b) => b.rss - a.rss);
}

// A memory cgroup (v1) of the bench's own under its own, for the daemon and
// everything it starts: what their processes and the kernel allocate for
// them is charged there, whatever else runs on the machine. null where
// cgroup v1's memory controller is not there or not writable.
function memCgroup() {
  try {
    const line = fs.readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => /^\d+:memory:/.test(l));
    if (!line) return null;
    const dir = path.join('/sys/fs/cgroup/memory', line.split(':')[2], `mcpgw-bench-${process.pid}`);
    fs.mkdirSync(dir);
    return dir;
  } catch { return null; }
}

function snapshot(cg) {
  const info = fs.readFileSync('/proc/meminfo', 'utf8');
  const mi = (k) => Number((new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(info) || [])[1]);
  const out = { avail: mi('MemAvailable'), slab: mi('Slab'), pagetables: mi('PageTables'), kstack: mi('KernelStack') };
  if (cg) {
    const rd = (f) => Number(fs.readFileSync(path.join(cg, f), 'utf8')) / 1024;
    const st = fs.readFileSync(path.join(cg, 'memory.stat'), 'utf8');
    const sv = (k) => Number((new RegExp(`^${k} (\\d+)`, 'm').exec(st) || [])[1]) / 1024;
    Object.assign(out, { cgUsage: rd('memory.usage_in_bytes'), cgKmem: rd('memory.kmem.usage_in_bytes'), cgAnon: sv('rss'), cgCache: sv('cache'), cgShmem: sv('shmem') });
  }
  return out;
}

// ---- the daemon

const stateDir = path.join(TMP, 'state');
const yaml = `version: 1
gateway:
  warm_spares: 0
  state_dir: ${stateDir}
servers:
  c_plain: {command: ${ECHO_C}, sandbox: false, transform: [{prefix: cp_}]}
  c_boxed: {command: ${ECHO_C}, sandbox: {home: dialog}, transform: [{prefix: cb_}]}
  c_net: {command: ${ECHO_C}, sandbox: {home: dialog, network: ["127.0.0.1:9"]}, transform: [{prefix: cn_}]}
  m_plain: {command: node, args: [${MEMORY}], sandbox: false, env: {MEMORY_FILE_PATH: ${TMP}/plain.jsonl}, transform: [{prefix: mp_}]}
  m_boxed: {command: node, args: [${MEMORY}], sandbox: {home: dialog, read: [${path.join(ROOT, 'test')}]}, env: {MEMORY_FILE_PATH: /home/sandbox/memory.jsonl}, transform: [{prefix: mb_}]}
`;
const TOOL = { c_plain: 'cp_echo', c_boxed: 'cb_echo', c_net: 'cn_echo', m_plain: 'mp_read_graph', m_boxed: 'mb_read_graph' };
const ARGS = { c_plain: { text: 'hello' }, c_boxed: { text: 'hello' }, c_net: { text: 'hello' }, m_plain: {}, m_boxed: {} };

async function startDaemon(cg) {
  fs.mkdirSync(stateDir, { recursive: true });
  fs.writeFileSync(path.join(TMP, 'mcp.yaml'), yaml);
  const port = await freePort();
  const fd = fs.openSync(path.join(TMP, 'mcpgw.log'), 'a');
  const child = spawn(MCPGW, ['-c', path.join(TMP, 'mcp.yaml'), '--listen', `127.0.0.1:${port}`], { stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  let inCg = false;
  if (cg) try { fs.writeFileSync(path.join(cg, 'cgroup.procs'), String(child.pid)); inCg = true; } catch { /* not ours to use */ }
  const exit = new Promise((r) => child.on('exit', r));
  for (let i = 0; i < 600; i++) {
    try { if ((await req('GET', port, '/readyz')).status === 200) break; } catch { /* not yet */ }
    await sleep(50);
  }
  return { port, pid: child.pid, inCg, stop: async () => { child.kill('SIGTERM'); await Promise.race([exit, sleep(8000)]); } };
}

const servers = async (d) => (await req('GET', d.port, '/v1/servers')).json.servers;
const instancePids = async (d, id) => (await servers(d)).find((s) => s.id === id).instances.map((i) => i.pid).filter(Boolean);

async function call(d, server, dialog) {
  const r = await req('POST', d.port, `/v1/tools/${TOOL[server]}/call`, { dialog, arguments: ARGS[server] });
  if (r.status !== 200 || r.json?.isError) throw new Error(`${server}: ${r.status} ${r.text.slice(0, 300)}`);
}

async function release(d, dialog) {
  await req('POST', d.port, `/v1/dialogs/${dialog}/release`, {});
}

// The daemon's CPU time so far, in ms: every thread's (the loop's, the
// thread pool's).
function daemonCpu(pid) {
  let ns = 0;
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    try { ns += Number(fs.readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]); } catch { /* gone */ }
  }
  return ns / 1e6;
}

// The first call of a new dialog: a spawn each time (warm_spares: 0).
async function coldCalls(d, a, b, n) {
  const res = { [a]: [], [b]: [], cpu: { [a]: [], [b]: [] } };
  for (let i = 0; i < n; i++) {
    for (const s of i % 2 ? [b, a] : [a, b]) {
      const dialog = `cold-${s}-${i}`;
      const c0 = daemonCpu(d.pid);
      const t0 = performance.now();
      await call(d, s, dialog);
      res[s].push(performance.now() - t0);
      res.cpu[s].push(daemonCpu(d.pid) - c0);
      await release(d, dialog);
      await sleep(50);
    }
  }
  return res;
}

// bwrap's own cost: the command line of a sandboxed instance, with /bin/true
// in place of the server, against /bin/true alone. The files it copies in
// (`--file N PATH`) are opened afresh for each run at the numbers the
// daemon gives them. Wall time, and where perf is installed the CPU time
// of bwrap's processes (task-clock: what the load does not move), the
// number of context switches, and the mounts (strace, once).
const hasPerf = spawnSync('perf', ['--version'], { stdio: 'ignore' }).status === 0;
const hasStrace = spawnSync('strace', ['-V'], { stdio: 'ignore' }).status === 0;
function bwrapAlone(leader, n) {
  const argv = fs.readFileSync(`/proc/${leader}/cmdline`, 'utf8').split('\0').filter((x, i, a) => i < a.length - 1);
  const cut = argv.indexOf('--');
  const box = [...argv.slice(0, cut + 1), '/bin/true'];
  const files = [];
  for (let i = 0; i < cut; i++) if (box[i] === '--file') files[Number(box[i + 1])] = box[i + 2];
  const run = (cmd, args, err = 'ignore') => {
    const fds = Array.from(files, (p) => (p ? fs.openSync(p, 'r') : 'ignore')).slice(3);
    const t0 = performance.now();
    const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', err, ...fds], encoding: 'utf8' });
    const ms = performance.now() - t0;
    for (const fd of fds) if (typeof fd === 'number') fs.closeSync(fd);
    if (r.status !== 0 && err === 'ignore') throw new Error(`${cmd} exited ${r.status}`);
    return { ms, stderr: r.stderr };
  };
  const time = (cmd, args) => run(cmd, args).ms;
  const perf = (cmd, args) => {
    const out = run('perf', ['stat', '-x', ',', '-e', 'task-clock,context-switches', '--', cmd, ...args], 'pipe').stderr;
    const v = (name) => Number((out.split('\n').find((l) => l.split(',')[2] === name) || '').split(',')[0]);
    return { cpu: v('task-clock'), cs: v('context-switches') };
  };
  const res = { bwrap: [], plain: [], asPid1: [], cpu: [], cs: [], cpuPlain: [] };
  const asPid1 = [box[0], '--as-pid-1', ...box.slice(1)];
  for (let i = 0; i < n; i++) {
    res.plain.push(time('/bin/true', []));
    res.bwrap.push(time(box[0], box.slice(1)));
    res.asPid1.push(time(asPid1[0], asPid1.slice(1)));
    if (hasPerf) {
      const p = perf(box[0], box.slice(1));
      res.cpu.push(p.cpu);
      res.cs.push(p.cs);
      res.cpuPlain.push(perf('/bin/true', []).cpu);
    }
  }
  let mounts = NaN, syscalls = NaN;
  const trace = path.join(TMP, 'bwrap.strace');
  // strace may be refused (ptrace_scope, a container): then no figure.
  if (hasStrace && run('strace', ['-f', '-c', '-o', trace, '--', box[0], ...box.slice(1)], 'pipe') && fs.existsSync(trace)) {
    const t = fs.readFileSync(trace, 'utf8');
    mounts = Number((/^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?mount$/m.exec(t) || [])[1]);
    syscalls = Number((/^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?total$/m.exec(t) || [])[1]);
  }
  return { argc: argv.length, nfiles: files.filter(Boolean).length, mounts, syscalls, ...res };
}

function latency(d, tool, dialog) {
  const body = JSON.stringify({ dialog, arguments: { text: 'hello' } });
  const out = execFileSync(CLIENT, ['http', '--port', d.port, '--path', `/v1/tools/${tool}/call`, '--body', body,
    '--conc', 1, '--duration', LAT_SECONDS, '--warmup', 0.2].map(String), { encoding: 'utf8', timeout: (LAT_SECONDS + 30) * 1000 });
  return JSON.parse(out.trim().split('\n').filter((l) => l.startsWith('{')).pop());
}

// One call on each side in turn (the order swapped every pair), each timed
// alone: whatever the machine does meanwhile falls on both sides alike.
async function pairedCalls(d, n) {
  const t = { c_plain: [], c_boxed: [] };
  for (let i = 0; i < n; i++) {
    for (const s of i % 2 ? ['c_boxed', 'c_plain'] : ['c_plain', 'c_boxed']) {
      const t0 = process.hrtime.bigint();
      await call(d, s, 'lat');
      t[s].push(Number(process.hrtime.bigint() - t0) / 1000);
    }
  }
  return t;
}

// What MEM_INSTANCES leased instances of `server` add: the host before and
// after, and the processes they add (every process of each instance's tree,
// the bubblewrap ones apart). Starts and ends with no instance of it.
async function instancesAdd(d, cg, server, round) {
  const gone = async () => {
    for (let i = 0; i < 200 && (await instancePids(d, server)).length; i++) await sleep(50);
    await sleep(300);
  };
  await gone();
  const s0 = snapshot(cg);
  for (let i = 0; i < MEM_INSTANCES; i++) await call(d, server, `mem-${server}-${round}-${i}`);
  await sleep(500);
  const s1 = snapshot(cg);
  const procs = (await instancePids(d, server)).flatMap(tree);
  for (let i = 0; i < MEM_INSTANCES; i++) await release(d, `mem-${server}-${round}-${i}`);
  await gone();
  const sum = (ps, k) => ps.reduce((n, p) => n + p[k], 0) / MEM_INSTANCES;
  const bw = procs.filter((p) => p.comm !== 'echo_server'); // bubblewrap's, and the relay
  const per = {};
  for (const k of Object.keys(s0)) per[k] = (s1[k] - s0[k]) / MEM_INSTANCES;
  per.avail = -per.avail;
  return { ...per, n: procs.length / MEM_INSTANCES, rss: sum(procs, 'rss'), pss: sum(procs, 'pss'), uss: sum(procs, 'uss'),
    bwRss: sum(bw, 'rss'), bwPss: sum(bw, 'pss'), bwUss: sum(bw, 'uss') };
}

async function main() {
  if (!fs.existsSync(MCPGW) || !fs.existsSync(CLIENT) || !fs.existsSync(ECHO_C)) throw new Error('build first: make bench-tools all');
  let cg = memCgroup();
  const d = await startDaemon(cg);
  if (cg && !d.inCg) {
    fs.rmdirSync(cg);
    cg = null;
  }
  const rows = [];
  try {
    const sb = (await servers(d)).find((s) => s.id === 'c_boxed').sandbox;
    if (!sb.enforced) throw new Error(`no sandbox on this host: ${sb.reason}`);
    // Warm the page cache and the daemon before measuring.
    await coldCalls(d, 'c_plain', 'c_boxed', 2);
    const coldC = await coldCalls(d, 'c_plain', 'c_boxed', COLD_C);
    const coldM = await coldCalls(d, 'm_plain', 'm_boxed', COLD_NODE);

    // Memory: RSS_INSTANCES leased instances of each.
    for (let i = 0; i < RSS_INSTANCES; i++) {
      await call(d, 'c_plain', `rss-${i}`);
      await call(d, 'c_boxed', `rss-${i}`);
    }
    await sleep(300);
    const boxed = (await instancePids(d, 'c_boxed')).map(tree);
    const plain = (await instancePids(d, 'c_plain')).map(tree);
    const bw = boxed.map((t) => t.filter((p) => p.comm === 'bwrap'));
    const srvOf = (t) => t.find((p) => p.comm === 'echo_server') || {};
    const alone = bwrapAlone(boxed[0][0].pid, QUICK ? 10 : 30);
    const bwMaps = bw[0].map((p) => ({ ...p, maps: smapsByMapping(p.pid) }));
    for (let i = 0; i < RSS_INSTANCES; i++) await release(d, `rss-${i}`);

    const memAdd = { c_plain: [], c_boxed: [], c_net: [] };
    for (let r = 0; r < MEM_ROUNDS; r++) {
      for (const s of r % 2 ? ['c_net', 'c_boxed', 'c_plain'] : ['c_plain', 'c_boxed', 'c_net']) memAdd[s].push(await instancesAdd(d, cg, s, r));
    }

    // Call latency on one leased instance each, interleaved.
    await call(d, 'c_plain', 'lat');
    await call(d, 'c_boxed', 'lat');
    const lat = { c_plain: [], c_boxed: [] };
    for (let r = 0; r < LAT_ROUNDS; r++) {
      for (const s of r % 2 ? ['c_boxed', 'c_plain'] : ['c_plain', 'c_boxed']) lat[s].push(latency(d, TOOL[s], 'lat'));
    }

    const paired = await pairedCalls(d, PAIRS);
    const blocks = [];
    for (let i = 0; i + BLOCK <= PAIRS; i += BLOCK) blocks.push(median(paired.c_boxed.slice(i, i + BLOCK)) / median(paired.c_plain.slice(i, i + BLOCK)));
    const m = (xs) => median(xs);
    const added = (a, b) => `${fmt(m(b) - m(a))} ms`;
    rows.push('### Sandbox costs (issue 36)\n');
    rows.push('| measure | unsandboxed | sandboxed | added | target |');
    rows.push('| --- | ---: | ---: | ---: | --- |');
    rows.push(`| start → ready, C echo server (first call of a new dialog, median of ${COLD_C}) | ${fmt(m(coldC.c_plain))} ms | ${fmt(m(coldC.c_boxed))} ms | ${added(coldC.c_plain, coldC.c_boxed)} | ≤ 15 ms |`);
    rows.push(`| the daemon's CPU time per start of the C echo server (its threads' schedstat), median | ${fmt(m(coldC.cpu.c_plain), 2)} ms | ${fmt(m(coldC.cpu.c_boxed), 2)} ms | ${fmt(m(coldC.cpu.c_boxed) - m(coldC.cpu.c_plain), 2)} ms | |`);
    rows.push(`| start → ready, server-memory (median of ${COLD_NODE}) | ${fmt(m(coldM.m_plain))} ms | ${fmt(m(coldM.m_boxed))} ms | ${added(coldM.m_plain, coldM.m_boxed)} | |`);
    rows.push(`| bwrap alone: the daemon's command line (${alone.argc} args, ${alone.nfiles} files copied in) running /bin/true, wall | ${fmt(m(alone.plain), 2)} ms | ${fmt(m(alone.bwrap), 2)} ms | ${added(alone.plain, alone.bwrap)} | |`);
    if (hasPerf) rows.push(`| the same, CPU time of all its processes (perf stat task-clock), median; context switches | ${fmt(m(alone.cpuPlain), 2)} ms | ${fmt(m(alone.cpu), 2)} ms; ${fmt(m(alone.cs), 0)} | ${fmt(m(alone.cpu) - m(alone.cpuPlain), 2)} ms | |`);
    if (hasStrace) rows.push(`| the same, system calls / mounts (strace -f -c, one run) | | ${fmt(alone.syscalls, 0)} / ${fmt(alone.mounts, 0)} | | |`);
    rows.push(`| the same with --as-pid-1 (no init process), wall | | ${fmt(m(alone.asPid1), 2)} ms | ${added(alone.plain, alone.asPid1)} | |`);
    const kb = (xs) => m(xs) / 1024;
    const bwRss = bw.map((ps) => ps.reduce((n, p) => n + p.rss, 0)), bwPss = bw.map((ps) => ps.reduce((n, p) => n + p.pss, 0));
    const initPss = bw.map((ps) => (ps[1] || {}).pss), initRss = bw.map((ps) => (ps[1] || {}).rss);
    rows.push(`| memory per instance: the server's RSS / PSS | ${fmt(kb(plain.map((t) => srvOf(t).rss)), 2)} / ${fmt(kb(plain.map((t) => srvOf(t).pss)), 2)} MB | ${fmt(kb(boxed.map((t) => srvOf(t).rss)), 2)} / ${fmt(kb(boxed.map((t) => srvOf(t).pss)), 2)} MB | | |`);
    rows.push(`| memory per instance: bubblewrap's ${bw[0].length} processes, RSS / PSS | | | ${fmt(kb(bwRss), 2)} / ${fmt(kb(bwPss), 2)} MB | ≤ 1 MB |`);
    rows.push(`| of which bwrap's init (pid 1 of the namespace), RSS / PSS | | | ${fmt(kb(initRss), 2)} / ${fmt(kb(initPss), 2)} MB | |`);
    const ma = (s, k) => m(memAdd[s].map((x) => x[k]));
    // sandboxed: network none (bubblewrap's init is pid 1); the target
    // column holds the same with a network list (the relay is pid 1).
    const memRow = (label, k, d = 0) => rows.push(`| ${label} | ${fmt(ma('c_plain', k), d)} kB | ${fmt(ma('c_boxed', k), d)} kB | ${fmt(ma('c_boxed', k) - ma('c_plain', k), d)} kB | network list: ${fmt(ma('c_net', k), d)} kB, added ${fmt(ma('c_net', k) - ma('c_plain', k), d)} kB |`);
    const memN = `${MEM_INSTANCES} leased instances, per instance, median of ${MEM_ROUNDS} alternated rounds`;
    rows.push(`| ${memN}: processes per instance (sandboxed: network none; last column: a network list, the relay as pid 1) | ${fmt(ma('c_plain', 'n'), 0)} | ${fmt(ma('c_boxed', 'n'), 0)} | | network list: ${fmt(ma('c_net', 'n'), 0)} |`);
    memRow(`${memN}: the sum of their **USS** (Private_Clean + Private_Dirty)`, 'uss');
    memRow(`${memN}: the sum of their **PSS**`, 'pss');
    memRow(`${memN}: the sum of their RSS`, 'rss');
    rows.push(`| of which the sandbox's own processes (bubblewrap's): USS / PSS / RSS | | ${fmt(ma('c_boxed', 'bwUss'), 0)} / ${fmt(ma('c_boxed', 'bwPss'), 0)} / ${fmt(ma('c_boxed', 'bwRss'), 0)} kB | | network list (bwrap and the relay): ${fmt(ma('c_net', 'bwUss'), 0)} / ${fmt(ma('c_net', 'bwPss'), 0)} / ${fmt(ma('c_net', 'bwRss'), 0)} kB; target ≤ 1 MB beyond the server |`);
    if (cg) {
      memRow(`${memN}: charged to the daemon's memory cgroup, all (usage_in_bytes)`, 'cgUsage');
      memRow('… of which kernel memory (kmem: slab, page tables, kernel stacks, namespaces)', 'cgKmem');
      memRow('… anonymous pages (memory.stat rss)', 'cgAnon');
      memRow('… page cache and tmpfs (cache; of it shmem)', 'cgCache');
      memRow('… tmpfs (shmem: the sandbox root\'s copied files)', 'cgShmem');
    }
    memRow(`${memN}: the host's MemAvailable, fallen by (global: the machine's other processes move it)`, 'avail');
    memRow('… Slab, grown by (global)', 'slab');
    memRow('… PageTables, grown by (global)', 'pagetables');
    memRow('… KernelStack, grown by (global)', 'kstack');
    const p50 = (s) => m(lat[s].map((x) => x.p50_us)), mean = (s) => m(lat[s].map((x) => x.mean_us)), rps = (s) => m(lat[s].map((x) => x.rps));
    // p50, not the mean: one stall of the machine moves a run's mean.
    const runRatios = lat.c_plain.map((x, i) => lat.c_boxed[i].p50_us / x.p50_us);
    rows.push(`| call latency c=1 (REST, leased), p50 / mean, median of ${LAT_ROUNDS} alternated runs of ${LAT_SECONDS} s; added: the p50's ratio per pair of neighbouring runs | ${fmt(p50('c_plain'), 0)} / ${fmt(mean('c_plain'), 0)} µs | ${fmt(p50('c_boxed'), 0)} / ${fmt(mean('c_boxed'), 0)} µs | ${ratioCell(runRatios)} | ≤ 2 % |`);
    rows.push(`| calls/s c=1 | ${fmt(rps('c_plain'), 0)} | ${fmt(rps('c_boxed'), 0)} | | |`);
    const pp = (s) => m(paired[s]);
    rows.push(`| call latency, ${PAIRS} single calls alternated one by one (Node keep-alive client), median; added: the ratio of medians per block of ${BLOCK} pairs | ${fmt(pp('c_plain'), 0)} µs | ${fmt(pp('c_boxed'), 0)} µs | ${ratioCell(blocks)} | ≤ 2 % |`);
    rows.push('');
    rows.push(`Load average at the end: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}.`);
    rows.push('', '#### bubblewrap\'s resident pages by mapping (one instance; kB)\n', '| process | mapping | RSS | PSS | private |', '| --- | --- | ---: | ---: | ---: |');
    for (const p of bwMaps) for (const x of p.maps.slice(0, 8)) rows.push(`| ${p.comm} ${p.pid} | ${x.name} | ${x.rss} | ${x.pss} | ${x.priv} |`);
    rows.push('');
    rows.push(`Per sandboxed instance: ${bw[0].map((p) => `${p.comm} ${p.pid} RSS ${p.rss} kB PSS ${p.pss} kB anon ${p.anon} kB`).join('; ')}; server RSS ${srvOf(boxed[0]).rss} kB.`);
  } finally {
    await d.stop();
    // The instances' last processes may still be exiting.
    for (let i = 0; cg && i < 50; i++) {
      try { fs.rmdirSync(cg); cg = null; } catch { await sleep(100); }
    }
    if (cg) log(`bench sandbox: ${cg} still has processes; remove it once they are gone`);
    fs.rmSync(TMP, { recursive: true, force: true });
  }
  const text = rows.join('\n') + '\n';
  process.stdout.write(text);
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(path.join(OUT, 'sandbox.md'), text);
}

main().catch((e) => { log(`bench sandbox: ${e.stack || e}`); process.exit(1); });
