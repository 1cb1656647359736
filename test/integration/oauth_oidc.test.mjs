// mcpgw as the OAuth client of a real authorization server, oidc-provider
// (test/fixtures/oidc_server.mjs), in front of an MCP server behind the
// SDK's requireBearerAuth: OpenID Connect discovery (its metadata is at
// /.well-known/openid-configuration only), Dynamic Client Registration, the
// browser's way through the provider's own login page (this test fills in
// its form, keeping its cookies, as a browser would), PKCE, RFC 9207 `iss`
// and RFC 8707 resource indicators as the provider checks them; then the
// tools appear, a call carries the token, short-lived access tokens are
// refreshed ahead of expiry with rotating refresh tokens, and a restart
// uses the stored grant.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { start, waitFor, root, tmpdir, slow, track } from './lib/harness.mjs';

const FIXTURE = path.join(root, 'test/fixtures/oidc_server.mjs');

async function oidcServer(env = {}) {
  const child = track(spawn(process.execPath, [FIXTURE], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
  child.stderr.on('data', () => {});
  const events = [];
  const lines = readline.createInterface({ input: child.stdout });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('oidc_server.mjs did not listen')), 20000 * slow);
    lines.on('line', (line) => {
      const m = /^listening (\S+)$/.exec(line);
      if (m) { clearTimeout(timer); resolve(m[1]); } else if (line.startsWith('{')) events.push(JSON.parse(line));
    });
  });
  return { url, events, stop: () => { try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ } } };
}

// A browser: cookies per host, redirects followed, the provider's login
// form filled in and posted.
async function browse(url) {
  const jar = new Map();
  const cookies = (u) => [...(jar.get(new URL(u).host) ?? new Map())].map(([k, v]) => `${k}=${v}`).join('; ');
  const keep = (u, res) => {
    const host = new URL(u).host;
    if (!jar.has(host)) jar.set(host, new Map());
    // Node 18's fetch may lack getSetCookie: split the joined header then.
    const set = res.headers.getSetCookie?.() ?? (res.headers.get('set-cookie') ?? '').split(/,(?=\s*[^;,=\s]+=)/).filter(Boolean);
    for (const c of set) {
      const [kv] = c.split(';');
      const i = kv.indexOf('=');
      jar.get(host).set(kv.slice(0, i).trim(), kv.slice(i + 1));
    }
  };
  let method = 'GET';
  let body;
  for (let i = 0; i < 15; i++) {
    const res = await fetch(url, { method, body, redirect: 'manual', headers: { cookie: cookies(url), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) } });
    keep(url, res);
    const text = await res.text();
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location'), url).toString();
      method = 'GET';
      body = undefined;
      continue;
    }
    const form = /<form[^>]*action="([^"]+)"[^>]*method="post"/i.exec(text);
    if (res.status === 200 && form && !url.includes('/oauth/callback')) {
      const fields = new URLSearchParams();
      for (const m of text.matchAll(/<input[^>]*>/gi)) {
        const name = /name="([^"]+)"/.exec(m[0])?.[1];
        if (!name) continue;
        const value = /value="([^"]*)"/.exec(m[0])?.[1];
        fields.set(name, value || (name === 'password' ? 'pw' : 'alice'));
      }
      url = new URL(form[1], url).toString();
      method = 'POST';
      body = fields.toString();
      continue;
    }
    return { status: res.status, url, text };
  }
  throw new Error('the browser went round in circles');
}

const yaml = (url) => `version: 1\nservers:\n  idp:\n    transport: streamable_http\n    url: ${url}\n`;
const server = async (d) => (await d.get('/v1/servers')).json.servers.find((s) => s.id === 'idp');
const toolNames = async (d) => (await d.get('/v1/tools')).json.tools.map((t) => t.name);

test('oidc-provider: authorize through its login page, call, refresh ahead of expiry, restart with the stored grant', async (t) => {
  const as = await oidcServer({ ACCESS_TTL: '4' });
  t.after(() => as.stop());
  const env = { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' };
  let d = await start(yaml(as.url), { env });
  t.after(() => d.stop());

  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  const page = await browse((await server(d)).authorize);
  assert.equal(page.status, 200, page.text);
  assert.match(page.text, /idp is authorized/);
  await waitFor(async () => (await toolNames(d)).includes('whoami'), 20000 * slow);
  const call = await d.post('/v1/tools/whoami/call', { dialog: 'd1', arguments: {} });
  assert.equal(call.status, 200, call.body);
  assert.match(call.body, /called by /);

  // A 4-second token is refreshed before it runs out, by the gateway alone;
  // calls keep working across the refreshes (the refresh token rotates).
  const refreshes = () => as.events.filter((e) => e.event === 'token' && e.grant_type === 'refresh_token').length;
  await waitFor(() => refreshes() >= 2, 30000 * slow, 100);
  const later = await d.post('/v1/tools/whoami/call', { dialog: 'd1', arguments: {} });
  assert.equal(later.status, 200, later.body);
  assert.match(later.body, /called by /);

  // A restart uses the stored grant (refreshing it first: its access token
  // may have run out meanwhile), with no person involved.
  await d.stop();
  d = await start(yaml(as.url), { env });
  await waitFor(async () => (await toolNames(d)).includes('whoami'), 30000 * slow);
  assert.match((await d.post('/v1/tools/whoami/call', { dialog: 'd1', arguments: {} })).body, /called by /);
  assert.notEqual((await server(d)).state, 'needs_authorization');
});
