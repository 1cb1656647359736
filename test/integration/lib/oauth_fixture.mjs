// The fixture authorization server in front of an MCP server behind the
// SDK's requireBearerAuth (test/fixtures/oauth_server.mjs), and a browser
// that follows redirects, for the OAuth tests.
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import { root, slow, track } from './harness.mjs';

const FIXTURE = path.join(root, 'test/fixtures/oauth_server.mjs');

// Starts the fixture; resolves {url (its MCP endpoint), events (what it
// saw, one object per line it printed), stop()}.
export async function oauthServer(env = {}) {
  const child = track(spawn(process.execPath, [FIXTURE], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
  child.stderr.on('data', () => {});
  const events = [];
  const lines = readline.createInterface({ input: child.stdout });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('oauth_server.mjs did not listen')), 20000 * slow);
    lines.on('line', (line) => {
      const m = /^listening (\S+)$/.exec(line);
      if (m) { clearTimeout(timer); resolve(m[1]); } else events.push(JSON.parse(line));
    });
  });
  return { url, events, stop: () => { try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ } } };
}

// One GET without following redirects.
export function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false }, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
    }).on('error', reject);
  });
}

// The browser: `url`, then each redirect, up to a page that is not one;
// with `stopAt` (an origin), it does not go where it cannot (a callback
// on another machine) and resolves {url} of that last hop instead.
export async function browse(url, { stopAt } = {}) {
  const hops = [];
  for (let i = 0; i < 5; i++) {
    if (stopAt && new URL(url).origin === stopAt) return { url, hops };
    const r = await get(url);
    hops.push({ url, status: r.status });
    if (r.status !== 302) return { ...r, hops };
    url = new URL(r.headers.location, url).toString();
  }
  throw new Error(`too many redirects: ${JSON.stringify(hops)}`);
}
