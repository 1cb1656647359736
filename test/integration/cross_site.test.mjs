// What a page of another origin can make the gateway do, over plain HTTP
// (ui_cross_site.test.mjs fires the same requests from Chromium): an
// Origin from another port of the same loopback host is refused, mcpgw's
// own origins and gateway.allowed_origins pass; every POST must say
// Content-Type: application/json, an empty one too (415 otherwise, and
// nothing happens); a GET of the authorize route with Sec-Fetch-Site
// cross-site or same-site starts nothing; every answer, the gateway's
// refusals included, carries the page's Content-Security-Policy and
// nosniff.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { start, tmpdir, waitFor, fixtures, slow } from './lib/harness.mjs';
import { oauthServer } from './lib/oauth.mjs';
import path from 'node:path';

test('an Origin passes only when it is one of mcpgw\'s own or listed', async (t) => {
  const d = await start('version: 1\ngateway:\n  allowed_origins: [\'http://127.0.0.1:9\']\n');
  t.after(() => d.stop());
  const p = d.port;
  const wrong = [];
  const own = [`http://127.0.0.1:${p}`, `http://localhost:${p}`, `http://LOCALHOST:${p}`, `http://[::1]:${p}`, 'http://127.0.0.1:9'];
  for (const origin of own) {
    for (const method of ['GET', 'POST']) {
      const r = await d.request(method, method === 'GET' ? '/healthz' : '/v1/reload', { headers: { origin, 'content-type': 'application/json' } });
      if (r.status !== 200) wrong.push(`${method} Origin ${origin}: ${r.status}, wanted 200`);
    }
  }
  // Another port, another loopback spelling of another port, no port (80),
  // https on the listen port, a path, a port with a leading zero.
  const others = [`http://127.0.0.1:${p + 1}`, 'http://localhost:3000', 'http://[::1]:8080', 'http://127.0.0.1',
    `https://localhost:${p}`, `http://127.0.0.2:${p}`, `http://127.0.0.1:${p}/`, `http://127.0.0.1:0${p}`, 'null',
    `http://localhost.:${p}`];
  for (const origin of others) {
    const r = await d.post('/v1/reload', {}, { headers: { origin } });
    if (r.status !== 403 || r.json?.error?.code !== 'forbidden_origin') wrong.push(`Origin ${origin}: ${r.status}`);
  }
  // The Host a request was sent to is its page's origin when it is a
  // loopback name (a port forward: the page was served through it).
  let r = await d.post('/v1/reload', {}, { headers: { host: 'localhost:7420', origin: 'http://localhost:7420' } });
  if (r.status !== 200) wrong.push(`Host = Origin: ${r.status}`);
  r = await d.post('/v1/reload', {}, { headers: { host: 'localhost:7420', origin: 'http://localhost:7421' } });
  if (r.status !== 403) wrong.push(`Host ≠ Origin: ${r.status}`);
  assert.deepEqual(wrong, []);
  assert.match(r.json.error.message, /another port is another origin/);
});

test('every POST says application/json, an empty one too: 415 and nothing happens', async (t) => {
  const d = await start(`version: 1\nservers:\n  fx:\n    command: ${path.join(fixtures, 'mcp_fixture')}\n`, { waitReady: true });
  t.after(() => d.stop());
  const held = await d.post('/v1/tools/echo/call', { dialog: 'held', arguments: { text: 'x' } });
  assert.equal(held.status, 200, held.body);
  const routes = ['/v1/reload', '/v1/tools/echo/call', '/v1/dialogs/held/release', '/v1/dialogs/held/fx/release', '/v1/servers/fx/authorize'];
  const kinds = [{}, { 'content-type': 'text/plain' }, { 'content-type': 'application/x-www-form-urlencoded' },
    { 'content-type': 'multipart/form-data; boundary=x' }, { 'content-type': 'application/jsonx' }, { 'content-type': 'text/plain; application/json' }];
  const wrong = [];
  for (const p of routes) {
    for (const headers of kinds) {
      for (const body of [undefined, '{}']) {
        const r = await d.request('POST', p, { headers, body });
        if (r.status !== 415 || r.json?.error?.code !== 'unsupported_media_type') wrong.push(`POST ${p} ${JSON.stringify(headers)} ${body ?? 'no body'}: ${r.status}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
  const g = (await d.get('/v1/servers')).json;
  assert.equal(g.gateway.lastReload, null, 'no reload');
  assert.match(JSON.stringify((await d.get('/v1/dialogs')).json), /"held"/, 'the lease is still held');
  // /mcp answers its own 415, as JSON-RPC.
  const mcp = await d.request('POST', '/mcp', { headers: { accept: 'application/json, text/event-stream', 'content-type': 'text/plain' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
  assert.equal(mcp.status, 415);
  // JSON with a charset, and an empty JSON POST, are fine.
  for (const ct of ['application/json', 'Application/JSON; charset=utf-8']) {
    const r = await d.request('POST', '/v1/reload', { headers: { 'content-type': ct } });
    assert.equal(r.status, 200, `${ct}: ${r.body}`);
  }
  assert.equal((await d.request('POST', '/v1/dialogs/held/release', { headers: { 'content-type': 'application/json' } })).status, 200);
});

test('a GET of the authorize route from another site starts nothing', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  const dir = tmpdir();
  const d = await start(`version: 1\nservers:\n  secured:\n    transport: streamable_http\n    url: ${as.url}\n`, { env: { XDG_STATE_HOME: dir, STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  await waitFor(async () => (await d.get('/v1/servers')).json.servers.find((s) => s.id === 'secured')?.state === 'needs_authorization', 20000 * slow);
  const meta = as.events.filter((e) => e.event === 'metadata').length;
  const url = '/v1/servers/secured/authorize';
  for (const site of ['cross-site', 'same-site']) {
    for (let i = 0; i < 5; i++) {
      const r = await d.get(url, { headers: { 'sec-fetch-site': site, 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' } });
      assert.equal(r.status, 403, r.body);
      assert.equal(r.json.error.code, 'cross_site');
    }
    const nav = await d.get(url, { headers: { 'sec-fetch-site': site, 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' } });
    assert.equal(nav.status, 403);
    assert.match(nav.headers['content-type'], /^text\/html/);
    assert.match(nav.body, /<a href="authorize">Continue to the authorization server<\/a>/);
    assert.match(nav.headers['content-security-policy'], /frame-ancestors 'none'/);
  }
  assert.deepEqual(as.events.filter((e) => e.event === 'register'), [], 'no registration');
  assert.equal(as.events.filter((e) => e.event === 'metadata').length, meta, 'no discovery');
  // Typed or opened by another program ("none"), from the gateway's own
  // page ("same-origin") or by a program (no header): the flow starts, and
  // the limit of authorization requests was not used up by the refusals.
  for (const headers of [{ 'sec-fetch-site': 'none' }, { 'sec-fetch-site': 'same-origin' }, {}]) {
    const r = await d.get(url, { headers });
    assert.equal(r.status, 302, `${JSON.stringify(headers)}: ${r.body}`);
  }
});

test('every answer carries the page\'s CSP and nosniff, refusals included', async (t) => {
  const d = await start('version: 1\ngateway:\n  auth_token: tok-123456\n');
  t.after(() => d.stop());
  const auth = { authorization: 'Bearer tok-123456' };
  const answers = {
    'GET /': await d.get('/'),
    'GET /ui/nope': await d.get('/ui/nope'),
    'DELETE /': await d.request('DELETE', '/'),
    'GET / from another origin': await d.get('/', { headers: { origin: 'http://127.0.0.1:1' } }),
    'GET / with a foreign Host': await d.get('/', { headers: { host: 'evil.example' } }),
    'GET /v1/servers without the token': await d.get('/v1/servers'),
    'GET /nope': await d.get('/nope', { headers: auth }),
    'GET /v1/reload': await d.get('/v1/reload', { headers: auth }),
    'GET /healthz': await d.get('/healthz'),
    'POST /mcp as text': await d.request('POST', '/mcp', { headers: { ...auth, accept: 'application/json', 'content-type': 'text/plain' }, body: '{}' }),
  };
  const wrong = [];
  for (const [what, r] of Object.entries(answers)) {
    if (!/^default-src 'self';.*frame-ancestors 'none'/.test(r.headers['content-security-policy'] ?? '')) wrong.push(`${what} (${r.status}): CSP ${r.headers['content-security-policy']}`);
    if (r.headers['x-content-type-options'] !== 'nosniff') wrong.push(`${what} (${r.status}): nosniff ${r.headers['x-content-type-options']}`);
  }
  // A request the HTTP layer refuses itself.
  const raw = await d.raw('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: x\r\n\r\n');
  if (!/^HTTP\/1\.1 400 [^]*\r\nContent-Security-Policy: default-src 'self'[^]*\r\nX-Content-Type-Options: nosniff\r\n/i.test(raw)) wrong.push(`a 400 of the parser: ${raw.split('\r\n\r\n')[0]}`);
  assert.deepEqual(wrong, []);
});
