// mcpgw benchmark orchestrator (issue 8): starts mcpgw and its peers one at a
// time, interleaved (A B A B …, order reversed every other round), drives them
// with wrk or bench_client, samples /proc, prints markdown tables of medians
// and ratios, and writes every raw round to build/bench/results.json.
//
//   node test/bench/run.mjs            full run (3 rounds; ~10 minutes)
//   BENCH_QUICK=1 node test/bench/run.mjs   smoke run (1 round, short; ~1-2 minutes)
//   BENCH_ROUNDS=5 BENCH_DURATION=5 …   override rounds / seconds per measurement
//
// Everything listens on 127.0.0.1 only; every process is stopped by pid; every
// wait is bounded.
import { spawn, execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import nodeHttp from 'node:http';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const OUT = path.join(ROOT, 'build/bench');
// A copy made by bench.mk, so a rebuild of build/mcpgw by someone else mid-run changes nothing.
const MCPGW = process.env.MCPGW_BIN || path.join(OUT, 'mcpgw');
const CLIENT = path.join(OUT, 'bench_client');
const ECHO_C = path.join(OUT, 'echo_server');
const FLOOR = path.join(OUT, 'http_floor');
const ECHO_NODE = path.join(HERE, 'echo_node.mjs');
const NM = path.join(HERE, 'node_modules');
const LOOPBACK = path.join(HERE, 'loopback.cjs');
const LUA = path.join(HERE, 'post.lua');
const NODE = process.execPath;

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS || (QUICK ? 1 : 3));
const DURATION = Number(process.env.BENCH_DURATION || (QUICK ? 1 : 3));
const WARMUP = QUICK ? 0.3 : 0.5;
const CONCS = QUICK ? [1, 16] : [1, 16, 64];
const LEASE_DIALOGS = QUICK ? 3 : 8;
const TOOLS_SERVERS = 20, TOOLS_PER_SERVER = 500;
const CLK_TCK = 100; // checked below with getconf
// BENCH_TARGETS=direct,mcpgw_rest,mcpgw_rest_traced: only these paths of the calls scenario.
const ONLY_TARGETS = process.env.BENCH_TARGETS ? process.env.BENCH_TARGETS.split(',') : null;
// BENCH_BACKENDS=c: only the C echo server behind the calls scenario's paths.
const ONLY_BACKENDS = process.env.BENCH_BACKENDS ? process.env.BENCH_BACKENDS.split(',') : ['c', 'node'];
const log = (...a) => process.stderr.write(a.join(' ') + '\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const v = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

// Ports below Linux's ephemeral range (32768-60999), so that no outgoing
// connection on this busy machine holds the port we want to listen on; each
// is checked free first.
import net from 'node:net';
let nextPort = 21000 + (process.pid % 400) * 25;
const portFree = (p) => new Promise((r) => {
  const s = net.createServer().once('error', () => r(false)).listen(p, '127.0.0.1', () => s.close(() => r(true)));
});
async function port() {
  for (let i = 0; i < 200; i++) {
    const p = nextPort++;
    if (nextPort > 32000) nextPort = 21000;
    if (await portFree(p)) return p;
  }
  throw new Error('no free port in 21000-32000');
}
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpgw-bench-'));
const running = new Set();

// ---------------------------------------------------------------- processes

function startProc(name, cmd, args, { cwd = TMP, env = {} } = {}) {
  const logf = path.join(TMP, `${name}.log`);
  const fd = fs.openSync(logf, 'a');
  const hr0 = process.hrtime.bigint();
  const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', fd, fd], detached: true });
  fs.closeSync(fd);
  const p = { name, pid: child.pid, child, logf, exited: false, t0: performance.now(), hr0 };
  p.exit = new Promise((r) => child.on('exit', (code, sig) => { p.exited = true; running.delete(p); r({ code, sig }); }));
  running.add(p);
  return p;
}

async function stopProc(p, graceMs = 6000) {
  if (!p || p.exited) return;
  try { process.kill(p.pid, 'SIGTERM'); } catch { /* gone */ }
  const t = await Promise.race([p.exit, sleep(graceMs).then(() => 'timeout')]);
  if (t === 'timeout') {
    log(`  ${p.name} (pid ${p.pid}) ignored SIGTERM for ${graceMs / 1000} s: SIGKILL`);
    try { process.kill(-p.pid, 'SIGKILL'); } catch { /* gone */ }
    try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
    await Promise.race([p.exit, sleep(2000)]);
  }
  // Stragglers left in the process group we created (peers' children).
  try { process.kill(-p.pid, 'SIGKILL'); } catch { /* none */ }
}

async function stopAll() {
  for (const p of [...running]) await stopProc(p);
}
process.on('SIGINT', async () => { await stopAll(); process.exit(130); });
process.on('SIGTERM', async () => { await stopAll(); process.exit(143); });

function procSample(pid) {
  try {
    const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number((new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status) || [])[1] || NaN);
    let anon = NaN;
    try { anon = Number(/^Anonymous:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))[1]); } catch { /* old kernel */ }
    return { cpuTicks: Number(f[11]) + Number(f[12]), rssKB: kb('VmRSS'), hwmKB: kb('VmHWM'), anonKB: anon };
  } catch { return null; }
}

function run(cmd, args, { env = {}, timeoutMs = 120000 } = {}) {
  return new Promise((resolve) => {
    execFile(cmd, args, { env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
      const line = stdout.trim().split('\n').filter((l) => l.startsWith('{')).pop();
      let json = null;
      try { json = line ? JSON.parse(line) : null; } catch { /* below */ }
      if (!json) log(`  driver failed: ${cmd} ${args.join(' ')}: ${err ? err.message : ''} ${stderr.slice(-500)}`);
      resolve(json);
    });
  });
}

async function waitUntil(fn, timeoutMs, what) {
  const end = performance.now() + timeoutMs;
  for (let i = 0; i < 100000 && performance.now() < end; i++) {
    try { if (await fn()) return true; } catch { /* not yet */ }
    await sleep(5);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

// ---------------------------------------------------------------- HTTP / MCP probes

async function http(method, url, body, headers = {}) {
  const r = await fetch(url, {
    method, headers: body !== undefined ? { 'content-type': 'application/json', ...headers } : headers,
    body: body !== undefined ? JSON.stringify(body) : undefined, signal: AbortSignal.timeout(5000),
  });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* SSE or text */ }
  return { status: r.status, headers: r.headers, text, json };
}

// Start → first successful tool listing, measured by bench_client probe (1 ms
// polls, CLOCK_MONOTONIC, like process.hrtime).
// Starts `bench_client probe` first and the process under test once the
// probe is polling (connections refused until it listens), so that the
// time from spawn to first listing does not include the probe's own
// start-up (a fork of this Node process: several ms on this machine).
const PROBE_HEAD_START_MS = 100;
async function startProbed(name, cmd, args, opts, p, kind, pth, expect) {
  const probe = run(CLIENT, ['probe', '--port', p, '--kind', kind, '--path', pth, '--expect', expect, '--timeout', 30].map(String));
  await sleep(PROBE_HEAD_START_MS);
  const proc = startProc(name, cmd, args, opts);
  const r = await probe;
  if (!r) throw new Error(`${proc.name}: no tool listing within 30 s (log: ${fs.readFileSync(proc.logf, 'utf8').slice(-400)})`);
  return { proc, startupMs: Number(BigInt(r.ready_ns) - proc.hr0) / 1e6 };
}

// Keep-alive POST for latency-sensitive single calls (fetch adds ~1-3 ms).
const agent = new nodeHttp.Agent({ keepAlive: true, maxSockets: 1 });
function hpost(url, obj) {
  const body = JSON.stringify(obj);
  return new Promise((resolve, reject) => {
    const req = nodeHttp.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, timeout: 60000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end(body);
  });
}

// ---------------------------------------------------------------- backends and targets

const BACKENDS = {
  c: { label: 'C echo server', cmd: ECHO_C, args: [] },
  node: { label: 'Node SDK echo server', cmd: NODE, args: [ECHO_NODE] },
};

// A trace collector for the traced REST path: otlp_sink.c answers every
// OTLP export 200 at once and counts the exports and the spans in them (to
// show how full batches are), in C, so that a collector parsing the bodies
// does not compete with the gateway for the machine's cores and move its
// row (a Node collector did: 0.4-0.8 µs a call on 2 cores).
let collector = null;
async function collectorUrl() {
  if (collector === null) {
    const stats = path.join(os.tmpdir(), `mcpgw-bench-otlp-${process.pid}`);
    const proc = spawn(path.join(OUT, 'otlp_sink'), [stats], { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise((ok, fail) => {
      proc.stdout.once('data', (d) => ok(Number(String(d).trim())));
      proc.once('exit', (code) => fail(new Error(`otlp_sink exited ${code}`)));
    });
    // its pipe, left open, would keep this process from ever exiting
    proc.stdout.destroy();
    proc.unref();
    process.on('exit', () => { try { proc.kill(); fs.rmSync(stats, { force: true }); } catch { /* gone */ } });
    collector = {
      port,
      counts() {
        const [posts, spans] = (fs.existsSync(stats) ? fs.readFileSync(stats, 'utf8') : '0 0').trim().split(/\s+/).map(Number);
        return { posts, spans };
      },
    };
  }
  return `http://127.0.0.1:${collector.port}`;
}

function mcpgwYaml(servers, gateway = {}) {
  const g = Object.entries({ warm_spares: 0, ...gateway }).map(([k, v]) => `  ${k}: ${v}\n`).join('');
  const s = servers.map((x) =>
    `  ${x.id}:\n    command: ${JSON.stringify(x.cmd)}\n    args: ${JSON.stringify(x.args)}\n` +
    (x.prefix ? `    transform: [{prefix: ${x.prefix}}]\n` : '') +
    (x.stateless ? '    truely-stateless: true\n' : '')).join('');
  return `version: 1\ngateway:\n${g}servers:\n${s}`;
}

const CALL_BODY = JSON.stringify({ dialog: 'd1', arguments: { text: 'hello' } });

// 50 clients, each with 20 globs (19 that match nothing, then `ech*`).
const clientToken = (i) => `bench-client-token-${i}-0123456789`;
const CLIENT_HEADERS = { authorization: `Bearer ${clientToken(49)}` };
function clientsYaml() {
  return Array.from({ length: 50 }, (_, i) => {
    const globs = [...Array.from({ length: 19 }, (_, k) => `'x${k}_*_${i}'`), "'ech*'"];
    const sha = crypto.createHash('sha256').update(clientToken(i)).digest('hex');
    return `  c${i}:\n    token_sha256: ${sha}\n    tools: [${globs.join(', ')}]\n`;
  }).join('');
}

// mcpgw REST under `extra` top-level sections (clients) or gateway keys
// (audit; a function of the port), probed and warmed with `headers`.
async function startMcpgwWith(b, tag, { clients, audit }, headers) {
  const p = await port();
  const cfg = path.join(TMP, `mcpgw-${tag}-${p}.yaml`);
  fs.writeFileSync(cfg, mcpgwYaml([{ id: 'echo', cmd: b.cmd, args: b.args }], audit ? { audit: audit(p) } : {}) +
    (clients ? `clients:\n${clients}` : ''));
  const t0 = performance.now();
  const proc = startProc(`mcpgw-${tag}-${p}`, MCPGW, ['-c', cfg, '--listen', `127.0.0.1:${p}`, '--log-level', 'warn']);
  await waitUntil(async () => {
    try { return (await http('GET', `http://127.0.0.1:${p}/v1/tools`, undefined, headers)).text.includes('"name":"echo"'); } catch { return false; }
  }, 30000, `mcpgw ${tag} listing`);
  const startupMs = performance.now() - t0;
  const first = await http('POST', `http://127.0.0.1:${p}/v1/tools/echo/call`, JSON.parse(CALL_BODY), headers);
  if (first.status !== 200) throw new Error(`first call answered ${first.status}: ${first.text.slice(0, 200)}`);
  return { proc, port: p, startupMs };
}
// The same call as a 2026-07-28 request on /mcp: no session, the envelope in
// params._meta, the headers that repeat the body, dialog d1 in the URL.
const MODERN_BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hello' },
  _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } });
const MODERN_HEADERS = ['Accept: application/json, text/event-stream', 'MCP-Protocol-Version: 2026-07-28', 'Mcp-Method: tools/call', 'Mcp-Name: echo'].join('\n');
const HUB_BODY = JSON.stringify({ server_name: 'echo', tool: 'echo', arguments: { text: 'hello' } });

function wrkArgs(url, c) {
  return ['-s', LUA, `-t${Math.min(c, 2)}`, `-c${c}`, `-d${Math.max(1, Math.round(DURATION + WARMUP))}s`, '--latency', url];
}

// Each target: start(backend) → {proc, port}, ready(port) (first successful
// tools/list), drive(port, c) → driver JSON.
const TARGETS = {
  direct: {
    label: 'direct stdio client → backend',
    async start(b) {
      // The baseline of "start → first tools/list": spawn, initialize, tools/list.
      const t0 = performance.now();
      const child = spawn(b.cmd, b.args, { stdio: ['pipe', 'pipe', 'ignore'] });
      let buf = '';
      const ok = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), 30000);
        child.stdout.on('data', (d) => {
          buf += d;
          if (buf.includes('"id":1') && !buf.includes('"id":2') && !child.sentList) {
            child.sentList = true;
            child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n');
          }
          if (buf.includes('"id":2')) { clearTimeout(timer); resolve(true); }
        });
        child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}\n');
      });
      const ms = performance.now() - t0;
      child.stdin.end();
      await Promise.race([new Promise((r) => child.on('exit', r)), sleep(3000)]);
      try { child.kill('SIGKILL'); } catch { /* gone */ }
      return { proc: null, startupMs: ok ? ms : null };
    },
    drive: (t, b, c) => run(CLIENT, ['stdio', '--conc', c, '--duration', DURATION, '--warmup', WARMUP, '--', b.cmd, ...b.args].map(String)),
  },
  // The HTTP floor: a fixed-reply libuv server (http_floor.c) under the same
  // wrk script, URL and body as mcpgw REST; the backend is not involved.
  http_floor: {
    label: 'HTTP floor: fixed-reply libuv server (wrk)',
    async start() {
      const p = await port();
      const proc = startProc(`http-floor-${p}`, FLOOR, [String(p)]);
      await waitUntil(async () => (await http('POST', `http://127.0.0.1:${p}/v1/tools/echo/call`, {})).status === 200, 5000, 'http_floor');
      return { proc, port: p, startupMs: null };
    },
    drive: (t, b, c) => run('wrk', wrkArgs(`http://127.0.0.1:${t.port}/v1/tools/echo/call`, c), { env: { BENCH_BODY: CALL_BODY } }),
  },
  mcpgw_rest: {
    label: 'mcpgw REST (wrk)', gateway: true,
    async start(b, { probe = ['rest', '/v1/tools'], gateway = {} } = {}) {
      const p = await port();
      const cfg = path.join(TMP, `mcpgw-${p}.yaml`);
      fs.writeFileSync(cfg, mcpgwYaml([{ id: 'echo', cmd: b.cmd, args: b.args }], gateway));
      const { proc, startupMs } = await startProbed(`mcpgw-${p}`, MCPGW, ['-c', cfg, '--listen', `127.0.0.1:${p}`, '--log-level', 'warn'], {},
        p, probe[0], probe[1], '"name":"echo"');
      // Take the lease of dialog d1 now, so no measured call pays for a spawn.
      const first = await http('POST', `http://127.0.0.1:${p}/v1/tools/echo/call`, JSON.parse(CALL_BODY));
      if (first.status !== 200) throw new Error(`first call answered ${first.status}: ${first.text.slice(0, 200)}`);
      return { proc, port: p, startupMs };
    },
    drive: (t, b, c) => run('wrk', wrkArgs(`http://127.0.0.1:${t.port}/v1/tools/echo/call`, c), { env: { BENCH_BODY: CALL_BODY } }),
  },
  // Tracing on (issue 37), every call sampled, exported to a collector that
  // answers at once: what a traced call costs the gateway.
  mcpgw_rest_traced: {
    label: 'mcpgw REST, tracing on, sample 1 (wrk)', gateway: true,
    start: async (b) => TARGETS.mcpgw_rest.start(b, { gateway: { tracing: `{endpoint: '${await collectorUrl()}', sample: 1}` } }),
    drive: (t, b, c) => TARGETS.mcpgw_rest.drive(t, b, c),
  },
  mcpgw_rest_own: {
    label: 'mcpgw REST (bench_client)', gateway: true,
    start: (b) => TARGETS.mcpgw_rest.start(b),
    drive: (t, b, c) => run(CLIENT, ['http', '--port', t.port, '--path', '/v1/tools/echo/call', '--body', CALL_BODY, '--conc', c, '--duration', DURATION, '--warmup', WARMUP].map(String)),
  },
  mcpgw_mcp: {
    label: 'mcpgw /mcp (bench_client)', gateway: true,
    async start(b) {
      const t = await TARGETS.mcpgw_rest.start(b);
      const probe = await http('POST', `http://127.0.0.1:${t.port}/mcp`, { jsonrpc: '2.0', id: 1, method: 'ping' }, { accept: 'application/json, text/event-stream' });
      if (probe.status === 404) { await stopProc(t.proc); return { na: 'n/a: /mcp not available' }; }
      // start → first tools/list over /mcp needs a fresh daemon: measured on the next start.
      await stopProc(t.proc);
      const t2 = await TARGETS.mcpgw_rest.start(b, { probe: ['mcp', '/mcp'] });
      return t2;
    },
    drive: (t, b, c) => run(CLIENT, ['mcp', '--port', t.port, '--path', '/mcp', '--conc', c, '--duration', DURATION, '--warmup', WARMUP].map(String)),
  },
  mcpgw_modern: {
    label: 'mcpgw /mcp 2026-07-28 (wrk)', gateway: true,
    start: (b) => TARGETS.mcpgw_rest.start(b),
    drive: (t, b, c) => run('wrk', wrkArgs(`http://127.0.0.1:${t.port}/mcp/d/d1`, c), { env: { BENCH_BODY: MODERN_BODY, BENCH_HEADER: MODERN_HEADERS } }),
  },
  // Issue 35: the REST row with 50 clients of 20 globs each configured (the
  // caller is the last one, so the token's digest is compared with all 50
  // and its 20 globs are all tried), and with the audit log on.
  mcpgw_clients: {
    label: 'mcpgw REST, 50 clients × 20 globs (wrk)', gateway: true,
    start: (b) => startMcpgwWith(b, 'clients', { clients: clientsYaml() }, CLIENT_HEADERS),
    drive: (t, b, c) => run('wrk', wrkArgs(`http://127.0.0.1:${t.port}/v1/tools/echo/call`, c),
      { env: { BENCH_BODY: CALL_BODY, BENCH_HEADER: `Authorization: Bearer ${clientToken(49)}` } }),
  },
  mcpgw_audit: {
    label: 'mcpgw REST, audit log on (wrk)', gateway: true,
    start: (b) => startMcpgwWith(b, 'audit', { audit: (p) => `{path: ${path.join(TMP, `audit-${p}.jsonl`)}}` }, {}),
    drive: (t, b, c) => run('wrk', wrkArgs(`http://127.0.0.1:${t.port}/v1/tools/echo/call`, c), { env: { BENCH_BODY: CALL_BODY } }),
  },
  mcp_hub: {
    label: 'mcp-hub 4.2.1 REST (wrk)', gateway: true, peer: true,
    async start(b) {
      const p = await port();
      const dir = path.join(TMP, `hub-${p}`);
      fs.mkdirSync(dir, { recursive: true });
      const cfg = path.join(dir, 'hub.json');
      fs.writeFileSync(cfg, JSON.stringify({ mcpServers: { echo: { command: b.cmd, args: b.args } } }));
      const { proc, startupMs } = await startProbed(`mcp-hub-${p}`, NODE, ['-r', LOOPBACK, path.join(NM, 'mcp-hub/dist/cli.js'), '--port', String(p), '--config', cfg], { cwd: dir, env: xdg(dir) },
        p, 'rest', '/api/servers', '"tools":[{"name":"echo"');
      return { proc, port: p, startupMs };
    },
    drive: (t, b, c) => run('wrk', wrkArgs(`http://127.0.0.1:${t.port}/api/servers/tools`, c), { env: { BENCH_BODY: HUB_BODY } }),
  },
  supergateway: {
    label: 'supergateway 4.0.0 streamable HTTP, stateful', gateway: true, peer: true,
    async start(b) {
      const p = await port();
      const cmdline = [b.cmd, ...b.args].map((x) => `'${x}'`).join(' ');
      const { proc, startupMs } = await startProbed(`supergateway-${p}`, NODE, ['-r', LOOPBACK, path.join(NM, 'supergateway/dist/index.js'), '--stdio', cmdline,
        '--outputTransport', 'streamableHttp', '--stateful', '--port', String(p), '--logLevel', 'none'], {}, p, 'mcp', '/mcp', '"name":"echo"');
      return { proc, port: p, startupMs };
    },
    drive: (t, b, c) => run(CLIENT, ['mcp', '--port', t.port, '--path', '/mcp', '--conc', c, '--duration', DURATION, '--warmup', WARMUP].map(String)),
  },
  mcp_proxy: {
    label: 'mcp-proxy 6.7.19 streamable HTTP', gateway: true, peer: true,
    async start(b) {
      const p = await port();
      const { proc, startupMs } = await startProbed(`mcp-proxy-${p}`, NODE, [path.join(NM, 'mcp-proxy/dist/bin/mcp-proxy.mjs'), '--host', '127.0.0.1', '--port', String(p), '--server', 'stream', '--', b.cmd, ...b.args], {},
        p, 'mcp', '/mcp', '"name":"echo"');
      return { proc, port: p, startupMs };
    },
    drive: (t, b, c) => run(CLIENT, ['mcp', '--port', t.port, '--path', '/mcp', '--conc', c, '--duration', DURATION, '--warmup', WARMUP].map(String)),
  },
};

function xdg(dir) {
  return { XDG_STATE_HOME: path.join(dir, 'state'), XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_DATA_HOME: path.join(dir, 'data'), XDG_CACHE_HOME: path.join(dir, 'cache') };
}

// ---------------------------------------------------------------- scenario 1: calls

async function scenarioCalls(results) {
  const order = ['direct', 'http_floor', 'mcpgw_rest', 'mcpgw_rest_traced', 'mcpgw_clients', 'mcpgw_audit', 'mcp_hub', 'mcpgw_rest_own', 'supergateway', 'mcpgw_mcp', 'mcpgw_modern', 'mcp_proxy']
    .filter((n) => ONLY_TARGETS === null || ONLY_TARGETS.includes(n));
  for (let r = 0; r < ROUNDS; r++) {
    for (const bk of ONLY_BACKENDS) {
      const b = BACKENDS[bk];
      const seq = r % 2 ? [...order].reverse() : order;
      for (const name of seq) {
        const T = TARGETS[name];
        log(`round ${r + 1}/${ROUNDS} backend ${bk}: ${name}`);
        const rec = { scenario: 'calls', round: r, backend: bk, target: name, runs: [] };
        results.push(rec);
        let t;
        const { posts: postsBefore, spans: spansBefore } = collector?.counts() ?? { posts: 0, spans: 0 };
        try { t = await T.start(b); } catch (e) { rec.error = String(e.message || e); log(`  ${rec.error}`); await stopAll(); continue; }
        if (t.na) { rec.na = t.na; log(`  ${t.na}`); continue; }
        rec.startupMs = t.startupMs;
        try {
          if (t.proc) {
            await sleep(1000);
            const idle = procSample(t.proc.pid);
            rec.idle = idle;
          }
          for (const c of CONCS) {
            const before = t.proc && procSample(t.proc.pid);
            const res = await T.drive(t, b, c);
            const after = t.proc && procSample(t.proc.pid);
            if (res && before && after && res.total_sent > 0)
              res.cpu_us_per_call = ((after.cpuTicks - before.cpuTicks) * (1e6 / CLK_TCK)) / res.total_sent;
            if (res && after) res.after = after;
            rec.runs.push({ conc: c, ...res });
            if (res) log(`  c=${c}: ${res.rps.toFixed(0)}/s p50 ${res.p50_us} µs p99 ${res.p99_us} µs errors ${res.errors}` +
              (res.cpu_us_per_call !== undefined ? ` cpu ${res.cpu_us_per_call.toFixed(1)} µs/call` : ''));
          }
          if (t.proc) rec.peak = procSample(t.proc.pid);
          if (name === 'mcpgw_rest_traced') {
            await sleep(1500); // the last batch leaves within a second
            const m = (await http('GET', `http://127.0.0.1:${t.port}/metrics`)).text;
            const num = (k) => Number((m.match(new RegExp(`^${k} (\\d+)$`, 'm')) || [])[1]);
            rec.trace = { spans: num('mcpgw_trace_spans_total'), dropped: num('mcpgw_trace_spans_dropped_total'),
              posts: collector.counts().posts - postsBefore, received: collector.counts().spans - spansBefore };
            log(`  traces: ${rec.trace.spans} spans ended, ${rec.trace.dropped} dropped; the collector got ${rec.trace.received} ` +
              `in ${rec.trace.posts} exports (${(rec.trace.received / Math.max(1, rec.trace.posts)).toFixed(0)} a request)`);
          }
        } finally {
          if (t.proc) await stopProc(t.proc);
        }
      }
    }
  }
}

// ---------------------------------------------------------------- scenario 2: big catalog

async function scenarioCatalog(results) {
  const servers = [];
  for (let i = 0; i < TOOLS_SERVERS; i++)
    servers.push({ id: `s${String(i).padStart(2, '0')}`, prefix: `s${String(i).padStart(2, '0')}_`, cmd: ECHO_C, args: ['--tools', String(TOOLS_PER_SERVER - 1)], stateless: true });
  const want = TOOLS_SERVERS * TOOLS_PER_SERVER;
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of r % 2 ? ['mcp_hub', 'mcpgw'] : ['mcpgw', 'mcp_hub']) {
      log(`round ${r + 1}/${ROUNDS} catalog ${want} tools: ${name}`);
      const rec = { scenario: 'catalog', round: r, target: name, runs: [] };
      results.push(rec);
      const p = await port();
      let proc, url;
      try {
        if (name === 'mcpgw') {
          const cfg = path.join(TMP, `catalog-${p}.yaml`);
          fs.writeFileSync(cfg, mcpgwYaml(servers));
          proc = startProc(`mcpgw-cat-${p}`, MCPGW, ['-c', cfg, '--listen', `127.0.0.1:${p}`, '--log-level', 'warn']);
          url = `http://127.0.0.1:${p}/v1/tools`;
          await waitUntil(async () => (await http('GET', url)).json?.tools?.filter((x) => x.server).length >= want, 60000, 'mcpgw 10k tools');
        } else {
          const dir = path.join(TMP, `hubcat-${p}`);
          fs.mkdirSync(dir, { recursive: true });
          const cfg = path.join(dir, 'hub.json');
          fs.writeFileSync(cfg, JSON.stringify({ mcpServers: Object.fromEntries(servers.map((s) => [s.id, { command: s.cmd, args: s.args }])) }));
          proc = startProc(`mcp-hub-cat-${p}`, NODE, ['-r', LOOPBACK, path.join(NM, 'mcp-hub/dist/cli.js'), '--port', String(p), '--config', cfg], { cwd: dir, env: xdg(dir) });
          url = `http://127.0.0.1:${p}/api/servers`;
          await waitUntil(async () => (await http('GET', url)).json?.servers?.reduce((n, s) => n + (s.capabilities?.tools?.length || 0), 0) >= want, 60000, 'mcp-hub 10k tools');
        }
        rec.startupMs = performance.now() - proc.t0;
        const body = await http('GET', url);
        rec.bytes = body.text.length;
        await sleep(500);
        rec.idle = procSample(proc.pid);
        for (const c of [1, 16]) {
          const before = procSample(proc.pid);
          const res = await run('wrk', wrkArgs(url, c).map(String), { env: { BENCH_METHOD: 'GET' } });
          const after = procSample(proc.pid);
          if (res) res.cpu_us_per_req = ((after.cpuTicks - before.cpuTicks) * (1e6 / CLK_TCK)) / res.total_sent;
          rec.runs.push({ conc: c, kind: 'full', ...res });
          if (res) log(`  GET c=${c}: ${res.rps.toFixed(0)}/s p50 ${res.p50_us} µs p99 ${res.p99_us} µs (${rec.bytes} bytes)`);
        }
        if (name === 'mcpgw') {
          const etag = body.headers.get('etag');
          const res = await run('wrk', wrkArgs(url, 1).map(String), { env: { BENCH_METHOD: 'GET', BENCH_HEADER: `If-None-Match: ${etag}`, BENCH_STATUS: '304' } });
          rec.runs.push({ conc: 1, kind: '304', ...res });
          if (res) log(`  GET If-None-Match c=1: ${res.rps.toFixed(0)}/s p50 ${res.p50_us} µs`);
        }
        rec.peak = procSample(proc.pid);
      } catch (e) {
        rec.error = String(e.message || e);
        log(`  ${rec.error}`);
      } finally {
        await stopProc(proc);
      }
    }
  }
}

// ---------------------------------------------------------------- scenario 3: leases

async function scenarioLease(results) {
  for (let r = 0; r < ROUNDS; r++) {
    for (const bk of ['node', 'c']) {
      const b = BACKENDS[bk];
      for (const spares of r % 2 ? [0, 1] : [1, 0]) {
        log(`round ${r + 1}/${ROUNDS} lease backend ${bk} warm_spares ${spares}`);
        const rec = { scenario: 'lease', round: r, backend: bk, warm_spares: spares, firstCallMs: [], nextCallMs: [] };
        results.push(rec);
        const p = await port();
        const cfg = path.join(TMP, `lease-${p}.yaml`);
        fs.writeFileSync(cfg, mcpgwYaml([{ id: 'echo', cmd: b.cmd, args: b.args }], { warm_spares: spares }));
        const proc = startProc(`mcpgw-lease-${p}`, MCPGW, ['-c', cfg, '--listen', `127.0.0.1:${p}`, '--log-level', 'warn']);
        const base = `http://127.0.0.1:${p}`;
        const spareReady = async () => {
          const s = (await http('GET', `${base}/v1/servers`)).json.servers[0];
          return (s.instances || []).some((i) => i.role === 'spare' && i.state === 'ready');
        };
        const noneLeased = async () => !(await http('GET', `${base}/v1/servers`)).json.servers[0].instances.some((i) => i.role === 'leased');
        try {
          await waitUntil(async () => (await http('GET', `${base}/readyz`)).status === 200, 30000, 'readyz');
          for (let i = 0; i < LEASE_DIALOGS; i++) {
            if (spares) await waitUntil(spareReady, 30000, 'a ready warm spare');
            else await waitUntil(noneLeased, 30000, 'no leased instance');
            await sleep(100); // let the loop settle
            const d = `r${r}-${i}`;
            const t0 = performance.now();
            const a = await hpost(`${base}/v1/tools/echo/call`, { dialog: d, arguments: { text: 'x' } });
            const t1 = performance.now();
            const a2 = await hpost(`${base}/v1/tools/echo/call`, { dialog: d, arguments: { text: 'y' } });
            const t2 = performance.now();
            if (a.status !== 200 || a2.status !== 200) throw new Error(`call answered ${a.status}/${a2.status}: ${a.text.slice(0, 200)}`);
            rec.firstCallMs.push(t1 - t0);
            rec.nextCallMs.push(t2 - t1);
            await hpost(`${base}/v1/dialogs/${d}/release`, {});
          }
          log(`  first call of a dialog: median ${median(rec.firstCallMs).toFixed(2)} ms; next call ${median(rec.nextCallMs).toFixed(2)} ms`);
        } catch (e) {
          rec.error = String(e.message || e);
          log(`  ${rec.error}`);
        } finally {
          await stopProc(proc);
        }
      }
    }
  }
}


// ---------------------------------------------------------------- scenario 4: hot reload

// The config is rewritten in place (one write of the whole file), not
// renamed over: mcp-hub 4.2.1 watches the file itself (chokidar on the
// path), which loses track of it when another inode is renamed over it
// (no reload within 30 s); mcpgw watches the directory and takes both.
function writeConfig(file, text) {
  fs.writeFileSync(file, text);
}

// Keep-alive GET polled each ms until pred(body) holds; ms since t0 (hrtime).
const pollAgent = new nodeHttp.Agent({ keepAlive: true, maxSockets: 1 });
function hget(url) {
  return new Promise((resolve, reject) => {
    const req = nodeHttp.get(url, { agent: pollAgent, timeout: 5000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });
}
async function msUntil(url, pred, t0, timeoutMs = 30000) {
  const end = performance.now() + timeoutMs;
  while (performance.now() < end) {
    try { if (pred(await hget(url))) return Number(process.hrtime.bigint() - t0) / 1e6; } catch { /* not yet */ }
    await sleep(1);
  }
  throw new Error(`no change within ${timeoutMs} ms at ${url}`);
}

const RELOAD_TARGETS = {
  mcpgw: {
    label: 'mcpgw (file watch, `reload.debounce_ms: 200`)',
    async start(b) {
      const p = await port();
      const dir = path.join(TMP, `reload-${p}`);
      fs.mkdirSync(dir);
      const cfg = path.join(dir, 'mcp.yaml');
      const yaml = (two) => mcpgwYaml([{ id: 'echo', cmd: b.cmd, args: b.args },
        ...(two ? [{ id: 'echo2', cmd: b.cmd, args: b.args, prefix: 'b_' }] : [])]);
      fs.writeFileSync(cfg, yaml(false));
      // The log goes outside the watched directory: a write next to the
      // config is an inotify event too.
      const proc = startProc(`mcpgw-reload-${p}`, MCPGW, ['-c', cfg, '--listen', `127.0.0.1:${p}`, '--log-level', 'warn']);
      const url = `http://127.0.0.1:${p}/v1/tools`;
      await msUntil(url, (t) => t.includes('"name":"echo"'), process.hrtime.bigint());
      return { proc, add: () => writeConfig(cfg, yaml(true)), remove: () => writeConfig(cfg, yaml(false)),
        url, added: (t) => t.includes('"name":"b_echo"'), removed: (t) => !t.includes('"name":"b_echo"') };
    },
  },
  mcp_hub: {
    label: 'mcp-hub 4.2.1 (`--watch`)', peer: true,
    async start(b) {
      const p = await port();
      const dir = path.join(TMP, `hub-reload-${p}`);
      fs.mkdirSync(dir, { recursive: true });
      const cfg = path.join(dir, 'hub.json');
      const json = (two) => JSON.stringify({ mcpServers: { echo: { command: b.cmd, args: b.args },
        ...(two ? { echo2: { command: b.cmd, args: b.args } } : {}) } });
      fs.writeFileSync(cfg, json(false));
      const proc = startProc(`mcp-hub-reload-${p}`, NODE, ['-r', LOOPBACK, path.join(NM, 'mcp-hub/dist/cli.js'), '--port', String(p), '--config', cfg, '--watch'], { cwd: dir, env: xdg(dir) });
      const url = `http://127.0.0.1:${p}/api/servers`;
      await msUntil(url, (t) => t.includes('"tools":[{"name":"echo"'), process.hrtime.bigint(), 60000);
      await sleep(1000); // its watcher starts after the first load
      const echo2 = (t) => { try { return JSON.parse(t).servers.find((x) => x.name === 'echo2'); } catch { return undefined; } };
      return { proc, add: () => writeConfig(cfg, json(true)), remove: () => writeConfig(cfg, json(false)),
        url, added: (t) => (echo2(t)?.capabilities?.tools || []).some((x) => x.name === 'echo'), removed: (t) => t.includes('"servers"') && !echo2(t) };
    },
  },
};

async function scenarioReload(results) {
  const b = BACKENDS.c;
  for (let r = 0; r < ROUNDS; r++) {
    const order = Object.keys(RELOAD_TARGETS);
    for (const name of r % 2 ? order.reverse() : order) {
      log(`round ${r + 1}/${ROUNDS} reload ${name}`);
      const rec = { scenario: 'reload', round: r, target: name };
      results.push(rec);
      let t;
      try {
        t = await RELOAD_TARGETS[name].start(b);
        await sleep(300);
        let t0 = process.hrtime.bigint();
        t.add();
        rec.addMs = await msUntil(t.url, t.added, t0);
        await sleep(500);
        t0 = process.hrtime.bigint();
        t.remove();
        rec.removeMs = await msUntil(t.url, t.removed, t0);
        log(`  add → visible ${rec.addMs.toFixed(1)} ms; remove → gone ${rec.removeMs.toFixed(1)} ms`);
      } catch (e) {
        rec.error = String(e.message || e);
        log(`  ${rec.error}`);
      } finally {
        await stopProc(t?.proc);
      }
    }
  }
}

// ---------------------------------------------------------------- scenario 6: the sandbox's proxy

// 100 MB from a loopback HTTP server of the bench, read by the sandbox probe
// fixture: through a sandbox with a network list (relay, daemon proxy,
// CONNECT), and straight from an unsandboxed instance.
const PROXY_MB = 100;
const PROBE = path.join(ROOT, 'build/fixtures/sandbox_probe');

// Time on a CPU of a process so far, ms (/proc/PID/schedstat: ns): what a
// hop costs, which the machine's load moves far less than wall time.
function cpuMs(pid) {
  try { return Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6; } catch { return NaN; }
}

// Minor page faults of a process so far (/proc/PID/stat, field 10).
function minFaults(pid) {
  try { return Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[7]); } catch { return NaN; }
}

// The processes under `pid`.
function descendants(pid) {
  return fs.readdirSync(`/proc/${pid}/task`).flatMap((t) => {
    let kids = [];
    try { kids = fs.readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').split(' ').filter(Boolean); } catch { /* gone */ }
    return kids.flatMap((k) => [k, ...descendants(k)]);
  });
}

// The relays running in sandboxes of the daemon `pid` (bwrap's own
// processes carry the same words on their command lines; other daemons on
// the machine have relays of their own).
function relayPids(pid) {
  return descendants(pid).filter((x) => {
    try {
      const cmd = fs.readFileSync(`/proc/${x}/cmdline`, 'utf8').split('\0');
      return cmd[1] === 'sandbox-relay' && !/bwrap/.test(fs.readFileSync(`/proc/${x}/comm`, 'utf8'));
    } catch { return false; }
  });
}

// The probe instances of the daemon `pid`: the one in a sandbox (its own
// network namespace) and the one outside.
function probePids(pid) {
  const probes = descendants(pid).filter((x) => {
    try { return fs.readFileSync(`/proc/${x}/comm`, 'utf8').trim() === 'sandbox_probe'; } catch { return false; }
  });
  const sandboxed = (x) => { try { return fs.readlinkSync(`/proc/${x}/ns/net`) !== fs.readlinkSync('/proc/self/ns/net'); } catch { return false; } };
  return { connect: probes.find(sandboxed), direct: probes.find((x) => !sandboxed(x)) };
}

// The link rates of the paced rows, Mbit/s (BENCH_PROXY_RATES): the
// unpaced row is loopback at the CPUs' speed, where the relay's hop is a
// third process on the same cores; a paced server (paced_http.c) sends at
// what a real link would carry.
const PROXY_RATES = (process.env.BENCH_PROXY_RATES ?? '1000,2500,5000,10000').split(',').filter(Boolean).map(Number);
const PACED = path.join(OUT, 'paced_http');

async function scenarioProxy(results) {
  const body = Buffer.alloc(1 << 20);
  const server = nodeHttp.createServer((req, res) => {
    res.writeHead(200, { 'content-length': PROXY_MB << 20, connection: 'close' });
    let left = PROXY_MB;
    const more = () => { while (left > 0) { left--; if (!res.write(body)) return res.once('drain', more); } res.end(); };
    more();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const dest = `127.0.0.1:${server.address().port}`;
  const paced = PROXY_RATES.length ? startProc('paced-http', PACED, []) : null;
  let pacedPort = 0;
  if (paced) {
    await waitUntil(() => { const m = /listening (\d+)/.exec(fs.readFileSync(paced.logf, 'utf8')); if (m) pacedPort = Number(m[1]); return !!m; }, 5000, 'paced_http');
  }
  const pacedDest = `127.0.0.1:${pacedPort}`;
  const p = await port();
  const dir = path.join(TMP, `proxy-${p}`);
  fs.mkdirSync(path.join(dir, 'state'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'mcp.yaml'), `version: 1
gateway: {request_timeout: 120s}
servers:
  via:
    command: ${PROBE}
    sandbox: {network: ["${dest}"${paced ? `, "${pacedDest}"` : ''}]}
    transform: [{prefix: via_}]
  direct:
    command: ${PROBE}
    sandbox: false
    transform: [{prefix: direct_}]
`);
  const proc = startProc('mcpgw-proxy', MCPGW, ['-c', path.join(dir, 'mcp.yaml'), '--listen', `127.0.0.1:${p}`], { cwd: dir, env: { STATE_DIRECTORY: path.join(dir, 'state') } });
  const downloads = [];
  const add = (rate, d, target, serverPid) => {
    const get = `GET ${target} HTTP/1.1\r\nHost: ${d}\r\nConnection: close\r\n\r\n`;
    downloads.push({ rate, path: 'connect', serverPid, tool: 'via_probe', args: { op: 'download', data: `CONNECT ${d} HTTP/1.1\r\n\r\n`, after: get } });
    downloads.push({ rate, path: 'direct', serverPid, tool: 'direct_probe', args: { op: 'download', data: '-', number: Number(d.split(':')[1]), after: get } });
  };
  add(0, dest, '/big', process.pid);
  for (const rate of PROXY_RATES) add(rate, pacedDest, `/${PROXY_MB}/${rate}`, paced.pid);
  try {
    await waitUntil(async () => (await http('GET', `http://127.0.0.1:${p}/readyz`)).status === 200, 30000, 'mcpgw ready');
    // Both instances started before measuring: the relay is there to be read.
    for (const tool of ['via_probe', 'direct_probe']) await http('POST', `http://127.0.0.1:${p}/v1/tools/${tool}/call`, { dialog: 'bench', arguments: { op: 'env', path: 'HOME' } });
    for (let r = 0; r < ROUNDS; r++) {
      for (const x of r % 2 ? [...downloads].reverse() : downloads) {
        const name = x.path;
        const rec = { scenario: 'proxy', round: r, path: name, rate: x.rate };
        results.push(rec);
        const relays = relayPids(proc.pid);
        const probe = probePids(proc.pid)[name];
        const d0 = cpuMs(proc.pid), r0 = relays.map(cpuMs), f0 = relays.map(minFaults), p0 = cpuMs(probe), s0 = cpuMs(x.serverPid);
        const res = await http('POST', `http://127.0.0.1:${p}/v1/tools/${x.tool}/call`, { dialog: 'bench', arguments: x.args });
        const m = /(\d+) bytes in ([\d.]+) ms/.exec(res.text);
        if (!m || Number(m[1]) < PROXY_MB << 20) { rec.error = short(res.text); log(`  ${name}: ${rec.error}`); continue; }
        rec.ms = Number(m[2]);
        rec.mbps = PROXY_MB / (rec.ms / 1000);
        rec.daemonCpuMs = cpuMs(proc.pid) - d0;
        rec.relayCpuMs = relays.reduce((a, y, i) => a + cpuMs(y) - r0[i], 0);
        rec.relayFaults = relays.reduce((a, y, i) => a + minFaults(y) - f0[i], 0);
        rec.probeCpuMs = cpuMs(probe) - p0;
        rec.serverCpuMs = cpuMs(x.serverPid) - s0;
        log(`round ${r + 1}/${ROUNDS} proxy ${name} ${x.rate ? `${x.rate} Mbit/s` : 'unpaced'}: ${rec.ms.toFixed(0)} ms, ${rec.mbps.toFixed(0)} MB/s, relay ${rec.relayCpuMs.toFixed(1)} ms CPU, ${rec.relayFaults} faults, client ${rec.probeCpuMs.toFixed(1)} ms CPU`);
      }
    }
  } finally {
    await stopProc(proc);
    await stopProc(paced);
    server.close();
  }
}

function proxyTable(results) {
  const recs = results.filter((x) => x.scenario === 'proxy');
  if (!recs.length) return '';
  const out = [`### The sandbox's proxy: ${PROXY_MB} MB over loopback (medians of ${ROUNDS}; load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} at the end)\n`,
    '| server sends | path | ms | MB/s | daemon CPU ms | relay CPU ms | client CPU ms | server CPU ms |', '| --- | --- | --- | --- | --- | --- | --- | --- |'];
  const gaps = [];
  for (const rate of [...new Set(recs.map((x) => x.rate ?? 0))]) {
    const rows = {};
    const link = rate ? `paced at ${rate >= 1000 ? `${rate / 1000} Gbit/s` : `${rate} Mbit/s`} (C server)` : 'unpaced (node server)';
    for (const name of ['direct', 'connect']) {
      const mine = recs.filter((x) => (x.rate ?? 0) === rate && x.path === name);
      const ok = mine.filter((x) => !x.error);
      const label = name === 'direct' ? 'direct (unsandboxed instance)' : 'sandbox, network list: relay, CONNECT';
      if (!ok.length) { out.push(`| ${link} | ${label} | failed: ${short(mine[0]?.error || 'not run')} | | | | | |`); continue; }
      rows[name] = median(ok.map((x) => x.ms));
      out.push(`| ${link} | ${label} | ${fmt(rows[name])} | ${fmt(PROXY_MB / (rows[name] / 1000))} | ${fmt(median(ok.map((x) => x.daemonCpuMs)), 1)} | ${fmt(median(ok.map((x) => x.relayCpuMs)), 1)} | ${fmt(median(ok.map((x) => x.probeCpuMs)), 1)} | ${fmt(median(ok.map((x) => x.serverCpuMs)), 1)} |`);
    }
    if (rows.direct && rows.connect) gaps.push(`${link}: ${fmt((rows.connect / rows.direct - 1) * 100, 1)} %`);
  }
  if (gaps.length) out.push('', `Through the proxy, longer than direct (target: within 10 %): ${gaps.join('; ')}.\n`);
  return out.join('\n');
}

// ---------------------------------------------------------------- scenario 5: 1,000 leases

const MANY_LEASES = Number(process.env.BENCH_LEASES || 1000);

function fdLimit(pid) {
  try { return Number(/^Max open files\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/limits`, 'utf8'))[1]); } catch { return NaN; }
}

// One lease per dialog d0…dN-1, 16 at a time (each a cold spawn of the C echo server).
async function takeLeases(base, n) {
  const agent16 = new nodeHttp.Agent({ keepAlive: true, maxSockets: 16 });
  let next = 0, failed = 0;
  const one = (d) => new Promise((resolve) => {
    const body = JSON.stringify({ dialog: `d${d}`, arguments: { text: 'x' } });
    const req = nodeHttp.request(`${base}/v1/tools/echo/call`, { method: 'POST', agent: agent16, timeout: 60000,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => { if (res.statusCode !== 200) failed++; resolve(); });
    });
    req.on('error', () => { failed++; resolve(); });
    req.end(body);
  });
  await Promise.all(Array.from({ length: 16 }, async () => { while (next < n) await one(next++); }));
  agent16.destroy();
  return failed;
}

async function leaseCalls(p, proc, dialog) {
  const out = {};
  for (const c of [1, 16]) {
    const body = JSON.stringify({ dialog, arguments: { text: 'hello' } });
    const before = procSample(proc.pid);
    const res = await run(CLIENT, ['http', '--port', p, '--path', '/v1/tools/echo/call', '--body', body, '--conc', c, '--duration', DURATION, '--warmup', WARMUP].map(String));
    const after = procSample(proc.pid);
    if (res) res.cpu_us_per_call = ((after.cpuTicks - before.cpuTicks) * (1e6 / CLK_TCK)) / res.total_sent;
    out[c] = res;
  }
  return out;
}

async function scenarioManyLeases(results) {
  const b = BACKENDS.c;
  for (let r = 0; r < ROUNDS; r++) {
    log(`round ${r + 1}/${ROUNDS} ${MANY_LEASES} leases`);
    const rec = { scenario: 'leases1k', round: r, n: MANY_LEASES };
    results.push(rec);
    const p = await port();
    const cfg = path.join(TMP, `leases-${p}.yaml`);
    fs.writeFileSync(cfg, mcpgwYaml([{ id: 'echo', cmd: b.cmd, args: b.args }],
      { max_instances_per_server: MANY_LEASES + 100, max_concurrent: 256 }));
    const proc = startProc(`mcpgw-leases-${p}`, MCPGW, ['-c', cfg, '--listen', `127.0.0.1:${p}`, '--log-level', 'warn']);
    const base = `http://127.0.0.1:${p}`;
    try {
      await waitUntil(async () => (await http('GET', `${base}/readyz`)).status === 200, 30000, 'readyz');
      rec.fdLimit = fdLimit(proc.pid);
      if (rec.fdLimit < MANY_LEASES * 3 + 100) throw new Error(`the gateway's fd limit is ${rec.fdLimit}: ${MANY_LEASES} stdio instances need ${MANY_LEASES * 3}+ (ulimit -n)`);
      await takeLeases(base, 1);
      await sleep(500);
      rec.one = procSample(proc.pid);
      rec.callsOne = await leaseCalls(p, proc, 'd0');
      const t0 = performance.now();
      rec.failed = await takeLeases(base, MANY_LEASES);
      rec.leaseAllMs = performance.now() - t0;
      const servers = (await http('GET', `${base}/v1/servers`)).json.servers[0];
      rec.leased = (servers.instances || []).filter((i) => i.role === 'leased').length;
      // Past the trim the gateway runs 1 s after a large answer (this
      // listing of 1,000 instances is one), so the sample reads what the
      // leases hold rather than the listing's freed tree.
      await sleep(1500);
      rec.many = procSample(proc.pid);
      rec.callsMany = await leaseCalls(p, proc, `d${MANY_LEASES >> 1}`);
      rec.peak = procSample(proc.pid);
      log(`  ${rec.leased} leased (${rec.failed} failed) in ${(rec.leaseAllMs / 1000).toFixed(1)} s; RSS ${mb(rec.one.rssKB)} → ${mb(rec.many.rssKB)} MB; c=16 ${rec.callsOne[16]?.rps.toFixed(0)} → ${rec.callsMany[16]?.rps.toFixed(0)} calls/s`);
    } catch (e) {
      rec.error = String(e.message || e);
      log(`  ${rec.error}`);
    } finally {
      await stopProc(proc, 60000);
    }
  }
}

// ---------------------------------------------------------------- tables

const fmt = (x, d = 0) => (x === null || x === undefined || !Number.isFinite(x) ? '—' : x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }));
const short = (e) => String(e).replace(/\s+/g, ' ').replace(/\(log:.*$/, '').slice(0, 110);
const mb = (kb) => (kb === null || !Number.isFinite(kb) ? '—' : (kb / 1024).toFixed(1));

function callsTables(results) {
  const out = [];
  for (const bk of ONLY_BACKENDS) {
    const recs = results.filter((x) => x.scenario === 'calls' && x.backend === bk);
    const names = Object.keys(TARGETS);
    const agg = {};
    for (const n of names) {
      const rs = recs.filter((x) => x.target === n);
      const na = rs.find((x) => x.na)?.na;
      const failed = rs.filter((x) => x.error);
      const err = rs.length && failed.length === rs.length ? short(failed[0].error) : null;
      const partial = failed.length && !err ? ` (${rs.length - failed.length} of ${rs.length} rounds; failed: ${short(failed[0].error)})` : '';
      const per = (c, k) => median(rs.map((x) => x.runs.find((y) => y.conc === c)?.[k]));
      agg[n] = { na, err, partial, per, startup: median(rs.map((x) => x.startupMs)), idleRss: median(rs.map((x) => x.idle?.rssKB)),
        idleAnon: median(rs.map((x) => x.idle?.anonKB)), peakHwm: median(rs.map((x) => x.peak?.hwmKB)), peakAnon: median(rs.map((x) => x.peak?.anonKB)), n: rs.length };
    }
    const peers = names.filter((n) => TARGETS[n].peer && agg[n].n > 0 && !agg[n].na && !agg[n].err);
    out.push(`### Tool calls, backend: ${BACKENDS[bk].label} (medians of ${ROUNDS} round(s), ${DURATION} s each)\n`);
    const head = ['path', ...CONCS.flatMap((c) => [`c=${c} calls/s`, `c=${c} p50 µs`, `c=${c} p99 µs`])];
    out.push(`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`);
    for (const n of names) {
      const a = agg[n];
      if (a.n === 0) continue; // not run (BENCH_TARGETS)
      if (a.na || a.err) { out.push(`| ${TARGETS[n].label} | ${a.na || 'failed: ' + a.err} |`); continue; }
      out.push(`| ${TARGETS[n].label}${a.partial} | ${CONCS.flatMap((c) => [fmt(a.per(c, 'rps')), fmt(a.per(c, 'p50_us')), fmt(a.per(c, 'p99_us'))]).join(' | ')} |`);
    }
    const ratio = (n, vs, label) => {
      if (!agg[n] || agg[n].na || agg[n].err) return;
      const cells = CONCS.flatMap((c) => {
        const best = vs === 'peers' ? Math.max(...peers.map((p) => agg[p].per(c, 'rps') || 0)) : agg.direct.per(c, 'rps');
        const bestP50 = vs === 'peers' ? Math.min(...peers.map((p) => agg[p].per(c, 'p50_us') || Infinity)) : agg.direct.per(c, 'p50_us');
        const bestP99 = vs === 'peers' ? Math.min(...peers.map((p) => agg[p].per(c, 'p99_us') || Infinity)) : agg.direct.per(c, 'p99_us');
        const rps = agg[n].per(c, 'rps');
        return [best ? `${(rps / best).toFixed(2)}×` : '—', bestP50 && Number.isFinite(bestP50) ? `${(bestP50 / agg[n].per(c, 'p50_us')).toFixed(2)}×` : '—',
          bestP99 && Number.isFinite(bestP99) ? `${(bestP99 / agg[n].per(c, 'p99_us')).toFixed(2)}×` : '—'];
      });
      out.push(`| *${TARGETS[n].label} ÷ ${label}* | ${cells.join(' | ')} |`);
    };
    if (peers.length) { ratio('mcpgw_rest', 'peers', 'best peer'); ratio('mcpgw_mcp', 'peers', 'best peer'); ratio('mcpgw_modern', 'peers', 'best peer'); }
    ratio('mcpgw_rest', 'direct', 'direct');
    const addP50 = agg.mcpgw_rest.per?.(1, 'p50_us') - agg.direct.per?.(1, 'p50_us');
    out.push('', `Ratios: calls/s as mcpgw ÷ other (above 1 = mcpgw faster); latency as other ÷ mcpgw (above 1 = mcpgw lower). mcpgw REST adds ${fmt(addP50, 1)} µs to the direct p50 at c=1.\n`);
    // What mcpgw adds over the two floors it cannot go below: an HTTP round
    // trip (the fixed-reply server) and a pipe round trip to the backend.
    if (!agg.http_floor.err && !agg.mcpgw_rest.err) {
      const over = CONCS.map((c) => `c=${c}: ${fmt(agg.mcpgw_rest.per(c, 'p50_us') - agg.http_floor.per(c, 'p50_us') - agg.direct.per(c, 'p50_us'), 1)} µs`);
      out.push(`Added over the floors (mcpgw REST p50 − HTTP floor p50 − direct p50): ${over.join(', ')}.\n`);
    }

    if (agg.mcpgw_rest_traced?.n && !agg.mcpgw_rest_traced.err && agg.mcpgw_rest.n > 0 && !agg.mcpgw_rest.err) {
      const cost = CONCS.map((c) => `c=${c}: ${fmt(agg.mcpgw_rest_traced.per(c, 'cpu_us_per_call') - agg.mcpgw_rest.per(c, 'cpu_us_per_call'), 1)} µs`);
      out.push(`Tracing on (sample 1, OTLP/HTTP JSON to a local collector) adds gateway CPU per call: ${cost.join(', ')}.\n`);
      for (const rec of results.filter((x) => x.target === 'mcpgw_rest_traced' && x.backend === bk && x.trace)) {
        const tr = rec.trace;
        out.push(`Traced round ${rec.round + 1}: ${tr.spans} spans ended, ${tr.dropped} dropped; the collector got ${tr.received} in ${tr.posts} exports (${(tr.received / Math.max(1, tr.posts)).toFixed(0)} a request).\n`);
      }
    }
    out.push(`### Gateway resources, backend: ${BACKENDS[bk].label}\n`);
    const h2 = ['path', ...CONCS.map((c) => `CPU µs/call c=${c}`), 'RSS idle MB', 'anon idle MB', 'VmHWM peak MB', 'anon after load MB', 'start → tools/list ms'];
    out.push(`| ${h2.join(' | ')} |`, `| ${h2.map(() => '---').join(' | ')} |`);
    for (const n of names) {
      const a = agg[n];
      if (a.n === 0 || a.na || a.err) continue;
      if (n === 'mcpgw_rest_own') continue; // same process as mcpgw_rest
      out.push(`| ${TARGETS[n].label} | ${CONCS.map((c) => fmt(a.per(c, 'cpu_us_per_call'), 1)).join(' | ')} | ${mb(a.idleRss)} | ${mb(a.idleAnon)} | ${mb(a.peakHwm)} | ${mb(a.peakAnon)} | ${fmt(a.startup, 1)} |`);
    }
    const extra = (n) => CONCS.map((c) => `c=${c}: ${fmt(agg[n].per(c, 'cpu_us_per_call') - agg.mcpgw_rest.per(c, 'cpu_us_per_call'), 2)} µs`).join(', ');
    // Only for targets that ran beside plain REST (BENCH_TARGETS may leave either out).
    const ran = (n) => agg.mcpgw_rest.n > 0 && !agg.mcpgw_rest.err && agg[n].n > 0 && !agg[n].err && !agg[n].na;
    if (ran('mcpgw_clients'))
      out.push('', `Gateway CPU per call added by 50 clients × 20 globs (budget 0.5 µs): ${extra('mcpgw_clients')}.`);
    if (ran('mcpgw_audit'))
      out.push('', `Gateway CPU per call added by the audit log (budget 1.5 µs): ${extra('mcpgw_audit')}.`);
    if (peers.length && !agg.mcpgw_rest.err) {
      const c = CONCS[1] || CONCS[0];
      const bestCpu = Math.min(...peers.map((p) => agg[p].per(c, 'cpu_us_per_call') || Infinity));
      const bestRss = Math.min(...peers.map((p) => agg[p].peakHwm || Infinity));
      out.push('', `mcpgw REST vs best peer at c=${c}: CPU per call ${(bestCpu / agg.mcpgw_rest.per(c, 'cpu_us_per_call')).toFixed(1)}× lower; peak RSS ${(bestRss / agg.mcpgw_rest.peakHwm).toFixed(1)}× lower. ` +
        'CPU is utime+stime of the gateway process only (its MCP server children are separate processes), over the whole driver run (warm-up included) ÷ requests sent. Direct: start → tools/list is spawn + initialize + tools/list of the backend alone.\n');
    }
  }
  return out.join('\n');
}

function catalogTable(results) {
  const recs = results.filter((x) => x.scenario === 'catalog');
  if (!recs.length) return '';
  const out = [`### GET the tool list: ${TOOLS_SERVERS * TOOLS_PER_SERVER} tools across ${TOOLS_SERVERS} C servers (medians of ${ROUNDS})\n`];
  const head = ['path', 'bytes', 'c=1 req/s', 'c=1 p50 µs', 'c=1 p99 µs', 'c=16 req/s', 'CPU µs/req c=1', '304 p50 µs', 'RSS idle MB', 'anon idle MB', 'VmHWM MB', 'start → full list ms'];
  out.push(`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`);
  for (const [n, label] of [['mcpgw', 'mcpgw `GET /v1/tools`'], ['mcp_hub', 'mcp-hub `GET /api/servers`']]) {
    const rs = recs.filter((x) => x.target === n);
    const failed = rs.filter((x) => x.error);
    if (failed.length === rs.length) { out.push(`| ${label} | failed: ${short(failed[0]?.error || 'not run')} |`); continue; }
    const partial = failed.length ? ` (${rs.length - failed.length} of ${rs.length} rounds; failed: ${short(failed[0].error)})` : '';
    const per = (c, kind, k) => median(rs.map((x) => x.runs.find((y) => y.conc === c && y.kind === kind)?.[k]));
    out.push(`| ${label}${partial} | ${fmt(median(rs.map((x) => x.bytes)))} | ${fmt(per(1, 'full', 'rps'))} | ${fmt(per(1, 'full', 'p50_us'))} | ${fmt(per(1, 'full', 'p99_us'))} | ${fmt(per(16, 'full', 'rps'))} | ${fmt(per(1, 'full', 'cpu_us_per_req'), 0)} | ${fmt(per(1, '304', 'p50_us'))} | ${mb(median(rs.map((x) => x.idle?.rssKB)))} | ${mb(median(rs.map((x) => x.idle?.anonKB)))} | ${mb(median(rs.map((x) => x.peak?.hwmKB)))} | ${fmt(median(rs.map((x) => x.startupMs)), 0)} |`);
  }
  out.push('', 'mcp-hub has no single flat tool list over REST; `GET /api/servers` (every server with its tools) is its nearest equivalent. mcpgw servers are `truely-stateless` here so each runs one process.\n');
  return out.join('\n');
}

function leaseTable(results) {
  const recs = results.filter((x) => x.scenario === 'lease');
  if (!recs.length) return '';
  const out = [`### Lease acquisition: first call of a new dialog (medians over ${ROUNDS} round(s) × ${LEASE_DIALOGS} dialogs, ms, client-side incl. HTTP)\n`,
    '| backend | warm_spares: 1 (warm spare) | warm_spares: 0 (cold spawn) | cold ÷ warm | next call, same dialog |', '| --- | --- | --- | --- | --- |'];
  for (const bk of ['node', 'c']) {
    const rs = recs.filter((x) => x.backend === bk);
    const err = rs.find((x) => x.error)?.error;
    const w = median(rs.filter((x) => x.warm_spares === 1).flatMap((x) => x.firstCallMs));
    const c = median(rs.filter((x) => x.warm_spares === 0).flatMap((x) => x.firstCallMs));
    const n = median(rs.flatMap((x) => x.nextCallMs));
    out.push(`| ${BACKENDS[bk].label} | ${fmt(w, 2)} | ${fmt(c, 2)} | ${w && c ? (c / w).toFixed(0) + '×' : '—'} | ${fmt(n, 2)} |${err ? ' failed: ' + err : ''}`);
  }
  return out.join('\n') + '\n';
}


function reloadTable(results) {
  const recs = results.filter((x) => x.scenario === 'reload');
  if (!recs.length) return '';
  const out = [`### Hot reload: config write → new server's tools listed / removed server's tools gone (medians of ${ROUNDS}, ms, C echo server)\n`,
    '| path | add → tools visible ms | remove → tools gone ms |', '| --- | --- | --- |'];
  for (const [n, t] of Object.entries(RELOAD_TARGETS)) {
    const rs = recs.filter((x) => x.target === n);
    const ok = rs.filter((x) => !x.error);
    const err = rs.find((x) => x.error)?.error;
    if (!ok.length) { out.push(`| ${t.label} | failed: ${short(err || 'not run')} | |`); continue; }
    out.push(`| ${t.label}${err ? ` (${ok.length} of ${rs.length} rounds; failed: ${short(err)})` : ''} | ${fmt(median(ok.map((x) => x.addMs)), 1)} | ${fmt(median(ok.map((x) => x.removeMs)), 1)} |`);
  }
  out.push('', 'Timed client-side from the in-place rewrite of the config to the first listing (1 ms keep-alive polls) that shows `b_echo` (mcpgw, the new server under a `b_` prefix) or server `echo2` with its tools (mcp-hub `GET /api/servers`), then to the first listing without it. mcpgw debounces file events by `gateway.reload.debounce_ms` (default 200 ms) before it reloads.\n');
  return out.join('\n');
}

function manyLeasesTable(results) {
  const recs = results.filter((x) => x.scenario === 'leases1k' && !x.error);
  const err = results.find((x) => x.scenario === 'leases1k' && x.error)?.error;
  if (!recs.length) return err ? `### ${MANY_LEASES} dialogs each holding a lease\n\nfailed: ${err}\n` : '';
  const m = (f) => median(recs.map(f));
  const out = [`### ${MANY_LEASES} dialogs each holding a lease on the C echo server (medians of ${recs.length}; mcpgw only, no peer leases per dialog)\n`,
    '| leases held | RSS MB | anon MB | c=1 calls/s | c=1 p50 µs | c=16 calls/s | c=16 p50 µs | CPU µs/call c=16 |', '| --- | --- | --- | --- | --- | --- | --- | --- |'];
  for (const [label, s, c] of [['1', (x) => x.one, (x) => x.callsOne], [`${fmt(m((x) => x.leased))}`, (x) => x.many, (x) => x.callsMany]]) {
    out.push(`| ${label} | ${mb(m((x) => s(x)?.rssKB))} | ${mb(m((x) => s(x)?.anonKB))} | ${fmt(m((x) => c(x)?.[1]?.rps))} | ${fmt(m((x) => c(x)?.[1]?.p50_us))} | ${fmt(m((x) => c(x)?.[16]?.rps))} | ${fmt(m((x) => c(x)?.[16]?.p50_us))} | ${fmt(m((x) => c(x)?.[16]?.cpu_us_per_call), 1)} |`);
  }
  out.push('', `Taking the ${MANY_LEASES} leases (one cold spawn each, 16 at a time): ${fmt(m((x) => x.leaseAllMs) / 1000, 1)} s; failed calls: ${fmt(m((x) => x.failed))}; VmHWM after: ${mb(m((x) => x.peak?.hwmKB))} MB; the gateway's fd limit: ${fmt(m((x) => x.fdLimit))} (each stdio instance holds 3 fds: stdin, stdout, stderr). RSS is the gateway's alone (its ${MANY_LEASES} children are separate processes). Calls go to one dialog's lease while the others are held; \`gateway.max_instances_per_server\` is set to ${MANY_LEASES + 100}.\n`);
  return out.join('\n');
}

function render(meta, results) {
  const m = meta.machine;
  return [`## mcpgw benchmark — ${meta.date}${meta.quick ? ' (BENCH_QUICK: smoke run, not for publishing)' : ''}\n`,
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memGB} GiB, Linux ${m.kernel}, load average at start ${m.load.map((x) => x.toFixed(1)).join(' ')}. Versions: ${Object.entries(meta.versions).map(([k, v]) => `${k} ${v}`).join(', ')}.\n`,
    callsTables(results), catalogTable(results), leaseTable(results), reloadTable(results), manyLeasesTable(results), proxyTable(results)].join('\n');
}

// ---------------------------------------------------------------- main

async function versions() {
  const v = {};
  for (const p of ['mcp-hub', 'supergateway', 'mcp-proxy']) {
    try { v[p] = JSON.parse(fs.readFileSync(path.join(NM, p, 'package.json'))).version; } catch { v[p] = 'missing'; }
  }
  try { v.sdk = JSON.parse(fs.readFileSync(path.join(ROOT, 'test/node_modules/@modelcontextprotocol/sdk/package.json'))).version; } catch { v.sdk = 'missing'; }
  v.node = process.version;
  v.mcpgw = await new Promise((r) => execFile(MCPGW, ['--version'], (e, so) => r((so || '').trim())));
  v.wrk = await new Promise((r) => execFile('wrk', ['-v'], (e, so, se) => r(((so || '') + (se || '')).split('\n')[0].trim())));
  return v;
}

async function main() {
  if (process.env.BENCH_REPORT) { // re-print the tables of an earlier results.json
    const { meta, results } = JSON.parse(fs.readFileSync(process.env.BENCH_REPORT, 'utf8'));
    process.stdout.write(render(meta, results) + '\n');
    return;
  }
  for (const f of [MCPGW, CLIENT, ECHO_C]) if (!fs.existsSync(f)) throw new Error(`${f} is missing: run make bench`);
  const tck = await new Promise((r) => execFile('getconf', ['CLK_TCK'], (e, so) => r(Number(so))));
  if (tck !== CLK_TCK) throw new Error(`CLK_TCK is ${tck}, expected ${CLK_TCK}`);
  const cpu = (fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m) || [])[1];
  const machine = { cpu, cores: os.cpus().length, memGB: +(os.totalmem() / 2 ** 30).toFixed(1), kernel: os.release(), load: os.loadavg() };
  const meta = { date: new Date().toISOString(), quick: QUICK, rounds: ROUNDS, duration: DURATION, warmup: WARMUP, concs: CONCS, machine, versions: await versions() };
  log(`mcpgw bench: ${JSON.stringify(meta)}`);
  const results = [];
  const only = (process.env.BENCH_ONLY || 'calls,catalog,lease,reload,leases1k,proxy').split(',');
  try {
    if (only.includes('calls')) await scenarioCalls(results);
    if (only.includes('catalog')) await scenarioCatalog(results);
    if (only.includes('lease')) await scenarioLease(results);
    if (only.includes('reload')) await scenarioReload(results);
    if (only.includes('leases1k')) await scenarioManyLeases(results);
    if (only.includes('proxy')) await scenarioProxy(results);
  } finally {
    await stopAll();
    fs.mkdirSync(OUT, { recursive: true });
    fs.writeFileSync(path.join(OUT, 'results.json'), JSON.stringify({ meta, results }, null, 1));
  }
  const md = render(meta, results);
  fs.writeFileSync(path.join(OUT, 'results.md'), md);
  process.stdout.write(md + '\n');
  fs.rmSync(TMP, { recursive: true, force: true });
}

main().catch(async (e) => { log(`bench failed: ${e.stack || e}`); await stopAll(); process.exit(1); });
