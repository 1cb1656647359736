// Where the OAuth client may connect (docs/hardening.md, "OAuth"): metadata
// that points an endpoint, or a redirect, at the gateway's own listen
// address is refused at connect time, whether the URL names the address
// (127.0.0.1:<port>) or a name that resolves to it (localhost,
// foo.localhost), although the MCP server itself is on loopback; a redirect
// to a private or metadata address is refused before any connection; and no
// OAuth fetch goes through a proxy named by the environment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { start, waitFor, tmpdir, slow } from './lib/harness.mjs';
import { oauthServer, browse } from './lib/oauth.mjs';

const yaml = (url) => `version: 1\nservers:\n  secured:\n    transport: streamable_http\n    url: ${url}\n`;
const server = async (d) => (await d.get('/v1/servers')).json.servers.find((s) => s.id === 'secured');
const env = () => ({ XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' });

function post(url, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
const steer = (as, endpoint, url) => post(new URL('/test/steer', as.url), { endpoint, url });

// A daemon in front of the fixture, waiting for authorization.
async function setup(t) {
  const as = await oauthServer();
  t.after(() => as.stop());
  const d = await start(yaml(as.url), { env: env() });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  return { as, d };
}

for (const host of ['127.0.0.1', 'localhost']) {
  test(`a registration endpoint at the gateway's own address (${host}:<its port>) is never connected to`, async (t) => {
    const { as, d } = await setup(t);
    await steer(as, 'registration_endpoint', `http://${host}:${d.port}/v1/reload`);
    const r = await d.get('/v1/servers/secured/authorize', { timeoutMs: 30000 * slow });
    assert.equal(r.status, 502, r.body);
    assert.match(r.json.error.message, /the client registration: refused to connect to 127\.0\.0\.1 port \d+ \(the gateway's own address\)/);
    assert.ok(!/msg=reloading/.test(d.stderr), 'the registration request reloaded the gateway');
    assert.ok(!as.events.some((e) => e.event === 'register'));
  });
}

test('a token endpoint named foo.localhost:<the gateway\'s port> is refused at connect time', async (t) => {
  const { as, d } = await setup(t);
  await steer(as, 'token_endpoint', `http://foo.localhost:${d.port}/v1/reload`);
  const page = await browse(`http://${d.addr}/v1/servers/secured/authorize`);
  assert.match(page.hops.at(-1).url, /\/oauth\/callback\?code=/);
  assert.notEqual(page.status, 200, page.body);
  assert.match(page.body, /refused to connect to 127\.0\.0\.1 port \d+ \(the gateway(&#39;|')s own address\)/);
  assert.ok(!/msg=reloading/.test(d.stderr), 'the token request reloaded the gateway');
  assert.ok(!as.events.some((e) => e.event === 'token'));
  assert.equal((await server(d)).state, 'needs_authorization');
});

test('a metadata redirect to a forbidden host is refused: the gateway itself, a private address, a metadata address', async (t) => {
  const { as, d } = await setup(t);
  const cases = [
    [`http://localhost:${d.port}/v1/reload`, /refused to connect to 127\.0\.0\.1 port \d+ \(the gateway's own address\)/],
    ['https://10.1.2.3/.well-known/oauth-protected-resource', /refused to fetch https:\/\/10\.1\.2\.3\/.*: 10\.1\.2\.3 is a private address/],
    ['http://169.254.169.254/latest/meta-data/', /refused to fetch http:\/\/169\.254\.169\.254\/.*(http is allowed only to a loopback host|metadata address)/],
  ];
  for (const [to, why] of cases) {
    await steer(as, 'redirect', to);
    const r = await d.get('/v1/servers/secured/authorize', { timeoutMs: 30000 * slow });
    assert.equal(r.status, 502, `${to}: ${r.body}`);
    assert.match(r.json.error.message, why, to);
  }
  // The fixture's events come on its stdout, which may be read after the
  // daemon's answer (seen under make test's load: 2 of 3).
  const redirected = () => as.events.filter((e) => e.event === 'redirected').length;
  await waitFor(() => redirected() >= cases.length, 5000 * slow).catch(() => {});
  assert.equal(redirected(), cases.length);
  assert.ok(!/msg=reloading/.test(d.stderr), 'a redirected fetch reached the gateway');
});

test('no OAuth fetch goes through a proxy named by the environment', async (t) => {
  const seen = [];
  const proxy = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(502).end();
  });
  proxy.on('connect', (req, socket) => { seen.push(`CONNECT ${req.url}`); socket.destroy(); });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.after(() => proxy.close());
  const purl = `http://127.0.0.1:${proxy.address().port}`;
  const as = await oauthServer();
  t.after(() => as.stop());
  const d = await start(yaml(as.url), {
    env: { ...env(), http_proxy: purl, HTTPS_PROXY: purl, https_proxy: purl, ALL_PROXY: purl, all_proxy: purl, NO_PROXY: '', no_proxy: '' },
  });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  const page = await browse(`http://${d.addr}/v1/servers/secured/authorize`);
  assert.equal(page.status, 200, page.body);
  await waitFor(async () => (await server(d)).state === 'ready', 20000 * slow);
  assert.deepEqual(seen, []);
  assert.deepEqual(as.events.filter((e) => e.event === 'register' || e.event === 'token').map((e) => e.event), ['register', 'token']);
});
