// A grant's times and its refreshes (docs/api.md, "OAuth"), against the
// fixture's authorization server (test/fixtures/oauth_server.mjs):
// expires_in of 2^63-1 or 18446744073709552 seconds is taken as a year
// (the ASan build checks there is no overflow on the way, and expiresAt is
// a date); a refresh that meets a 503 or an HTML page keeps the grant and
// is tried again later, each wait at least twice the one before; a server
// that refuses every token costs one refresh and two initializes per
// authorization, counted at the server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { start, waitFor, tmpdir, slow } from './lib/harness.mjs';
import { oauthServer, get, browse } from './lib/oauth.mjs';

const yaml = (url) => `version: 1\ngateway:\n  warm_spares: 0\nservers:\n  secured:\n    transport: streamable_http\n    url: ${url}\n`;
const server = async (d) => (await d.get('/v1/servers')).json.servers.find((s) => s.id === 'secured');
const call = (d, dialog) => d.post('/v1/tools/whoami/call', { dialog, arguments: {} }, { timeoutMs: 30000 * slow });
const post = (url, body = {}) => new Promise((resolve, reject) => {
  const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false }, (res) => {
    res.resume();
    res.on('end', resolve);
  });
  req.on('error', reject);
  req.end(JSON.stringify(body));
});
const origin = (as) => new URL(as.url).origin;
async function sync(as) {
  const n = as.events.filter((e) => e.event === 'synced').length;
  await get(`${origin(as)}/test/sync`);
  await waitFor(() => as.events.filter((e) => e.event === 'synced').length > n, 10000 * slow);
}
const tokens = (as, type) => as.events.filter((e) => e.event === 'token' && e.grant_type === type);

// A fixture with `env` and a daemon, the server authorized through the browser.
async function authorized(t, env) {
  const as = await oauthServer(env);
  t.after(() => as.stop());
  const d = await start(yaml(as.url), { env: { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'needs_authorization', 20000 * slow);
  const page = await browse((await server(d)).authorize);
  assert.equal(page.status, 200, page.body);
  return { as, d };
}

for (const expiresIn of ['9223372036854775807', '18446744073709552']) {
  test(`expires_in ${expiresIn} is taken as a year: no overflow, a real expiresAt, no refresh`, async (t) => {
    const { as, d } = await authorized(t, { EXPIRES_IN: expiresIn });
    await waitFor(async () => (await server(d)).state === 'ready', 20000 * slow);
    assert.equal((await call(d, 'x1')).status, 200);
    const { grant } = await server(d);
    assert.match(grant.expiresAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const left = Date.parse(grant.expiresAt) - Date.now();
    const year = 365 * 86400 * 1000;
    assert.ok(left > year - 3600e3 && left <= year + 60e3, grant.expiresAt);
    await sync(as);
    assert.equal(tokens(as, 'refresh_token').length, 0);
  });
}

test('a refresh that meets a 503 or an HTML page keeps the grant and backs off; it works again later', async (t) => {
  // Tokens live 2 s: the refresh ahead of expiry comes after 1.6 s. Only
  // refreshes fail: the code is exchanged.
  const as = await oauthServer({ EXPIRES_IN: '2' });
  t.after(() => as.stop());
  await post(`${origin(as)}/test/token-down`, { mode: '503' });
  const d = await start(yaml(as.url), { env: { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'needs_authorization', 20000 * slow);
  assert.equal((await browse((await server(d)).authorize)).status, 200);
  await waitFor(async () => (await server(d)).state === 'ready', 20000 * slow);

  const refreshes = () => tokens(as, 'refresh_token');
  await waitFor(() => refreshes().length >= 2, 30000 * slow);
  await post(`${origin(as)}/test/token-down`, { mode: 'html' });
  await waitFor(() => refreshes().length >= 3, 30000 * slow);
  await post(`${origin(as)}/test/token-down`, { mode: '' });
  const [r1, r2, r3] = refreshes();
  // The waits after failures: at least 1 s, then at least 2 s.
  assert.ok(r2.at - r1.at >= 900, `${r2.at - r1.at} ms`);
  assert.ok(r3.at - r2.at >= 1900, `${r3.at - r2.at} ms`);
  // The grant is kept meanwhile, and the next attempt succeeds with it.
  assert.notEqual((await server(d)).grant, undefined);
  await waitFor(() => refreshes().length >= 4, 30000 * slow);
  await waitFor(async () => Date.parse((await server(d)).grant?.expiresAt) > Date.now(), 10000 * slow);
  assert.equal((await call(d, 'b1')).status, 200);
  await sync(as);
  assert.equal(tokens(as, 'authorization_code').length, 1, 'no new authorization');
  assert.ok(refreshes().length <= 6, `${refreshes().length} refreshes`);
});

test('a server that refuses every token: one refresh and two initializes per authorization', async (t) => {
  const as = await oauthServer({ REFUSE_ALL: '1' });
  t.after(() => as.stop());
  const d = await start(yaml(as.url), { env: { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  for (let round = 1; round <= 2; round++) {
    await waitFor(async () => (await server(d)).state === 'needs_authorization', 20000 * slow);
    await sync(as);
    const rejected = as.events.filter((e) => e.event === 'rejected' && e.method === 'POST').length;
    const refreshes = tokens(as, 'refresh_token').length;
    const page = await browse((await server(d)).authorize);
    assert.equal(page.status, 200, page.body);
    assert.equal(tokens(as, 'authorization_code').length, round);
    await waitFor(async () => (await server(d)).state === 'needs_authorization', 20000 * slow);
    await sync(as);
    assert.equal(tokens(as, 'refresh_token').length - refreshes, 1, `round ${round}: refreshes`);
    assert.equal(as.events.filter((e) => e.event === 'rejected' && e.method === 'POST').length - rejected, 2, `round ${round}: initializes`);
  }
});
