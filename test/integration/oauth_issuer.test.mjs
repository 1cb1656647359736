// A grant, a client and a configured secret stay with their authorization
// server (docs/api.md, "OAuth"): the fixture (test/fixtures/oauth_server.mjs)
// has two, and POST /test/move makes the protected resource name the
// second. After the move, the first one's grant is refreshed and revoked at
// the first one only, with its own client; a flow begun before the move is
// redeemed with the client it began with; a configured client_secret is
// not sent to the new one until the operator logs out, and never when
// oauth.issuer names the old one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { start, waitFor, tmpdir, slow } from './lib/harness.mjs';
import { oauthServer, get, browse } from './lib/oauth.mjs';

const yaml = (url, extra = '') => `version: 1\ngateway:\n  warm_spares: 0\nservers:\n  secured:\n    transport: streamable_http\n    url: ${url}\n${extra}`;
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
// Every event the fixture said before now has been read.
async function sync(as) {
  const n = as.events.filter((e) => e.event === 'synced').length;
  await get(`${origin(as)}/test/sync`);
  await waitFor(() => as.events.filter((e) => e.event === 'synced').length > n, 10000 * slow);
}
const at = (as, where, pred = () => true) => as.events.filter((e) => e.as === where && pred(e));

test('after the metadata moves, the grant is refreshed and revoked where it was made, a pending flow redeems with its own client', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  const d = await start(yaml(as.url), { env: { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'needs_authorization', 20000 * slow);
  const link = (await server(d)).authorize;

  // A flow begun at the first AS and left waiting, then one completed.
  const pending = await get(link);
  assert.equal(pending.status, 302, pending.body);
  assert.match(pending.headers.location, /client_id=client-1/);
  const page = await browse(link);
  assert.equal(page.status, 200, page.body);
  await waitFor(async () => (await server(d)).state === 'ready', 20000 * slow);
  assert.equal((await call(d, 'a1')).status, 200);

  // The resource now names the second AS; an authorization request
  // registers a client there (and leaves its flow waiting).
  await post(`${origin(as)}/test/move`);
  const second = await get(link);
  assert.equal(second.status, 302, second.body);
  assert.match(second.headers.location, /\/as2\/authorize\?.*client_id=client-2/);

  // The token runs out: the refresh goes to the first AS, which made the
  // grant, with its client; the second never sees its refresh token.
  await post(`${origin(as)}/test/expire`);
  const a = await call(d, 'a1');
  assert.equal(a.status, 200, a.body);
  await sync(as);
  assert.deepEqual(at(as, 'as2', (e) => e.event === 'token'), [], 'no token request at the new AS');
  const refreshed = at(as, 'as1', (e) => e.event === 'token' && e.grant_type === 'refresh_token');
  assert.equal(refreshed.length, 1);
  assert.equal(refreshed[0].client_id, 'client-1');

  // The flow begun before the move is redeemed at its AS with its client.
  const late = await browse(pending.headers.location);
  assert.equal(late.status, 200, late.body);
  assert.match(late.body, /secured is authorized/);
  await sync(as);
  const redeemed = at(as, 'as1', (e) => e.event === 'token' && e.grant_type === 'authorization_code');
  assert.deepEqual(redeemed.map((e) => e.client_id), ['client-1', 'client-1']);

  // A logout revokes the grant where it was made.
  // a retry of the refused operation may still run (409 busy): the
  // operator's DELETE is tried again until it is taken
  let del;
  await waitFor(async () => (del = await d.request('DELETE', '/v1/servers/secured/authorize')).status !== 409, 20000 * slow);
  assert.equal(del.status, 200, del.body);
  await waitFor(() => as.events.some((e) => e.event === 'revoke'), 10000 * slow);
  await sync(as);
  assert.deepEqual(as.events.filter((e) => e.event === 'revoke').map((e) => [e.as, e.client_id, e.known]), [['as1', 'client-1', true]]);
});

const cc = (extra = '') => '    oauth:\n      client_id: cc-client\n      client_secret: {env: CC_SECRET}\n      grant: client_credentials\n' + extra;
const problems = async (d) => JSON.stringify((await d.get('/v1/problems')).json);

test('a configured client_secret stays with the first issuer seen until a logout confirms the move', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  const d = await start(yaml(as.url, cc()), { env: { CC_SECRET: 'cc-secret', XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'ready', 20000 * slow);
  assert.equal((await call(d, 'c1')).status, 200);

  await post(`${origin(as)}/test/move`);
  await post(`${origin(as)}/test/expire`);
  const refused = await call(d, 'c1');
  assert.notEqual(refused.status, 200);
  await waitFor(async () => /changed from http:\/\/127\.0\.0\.1:\d+ to http:\/\/127\.0\.0\.1:\d+\/as2/.test(await problems(d)), 20000 * slow);
  assert.match(await problems(d), /logging out/);
  await sync(as);
  assert.deepEqual(at(as, 'as2', (e) => e.event === 'token'), [], 'the secret did not go to the new AS');

  // The operator confirms: the secret goes to the new AS, which answers.
  // a retry of the refused operation may still run (409 busy): the
  // operator's DELETE is tried again until it is taken
  let del;
  await waitFor(async () => (del = await d.request('DELETE', '/v1/servers/secured/authorize')).status !== 409, 20000 * slow);
  assert.equal(del.status, 200, del.body);
  await waitFor(async () => (await server(d)).state === 'ready', 60000 * slow);
  await sync(as);
  assert.deepEqual(at(as, 'as2', (e) => e.event === 'token').map((e) => [e.grant_type, e.secret]), [['client_credentials', true]]);
  assert.equal((await call(d, 'c2')).status, 200);
});

test('oauth.issuer pins the configured client: a move is refused, a logout does not change that', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  const d = await start(yaml(as.url, cc(`      issuer: ${origin(as)}\n`)), { env: { CC_SECRET: 'cc-secret', XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'ready', 20000 * slow);

  await post(`${origin(as)}/test/move`);
  await post(`${origin(as)}/test/expire`);
  assert.notEqual((await call(d, 'p1')).status, 200);
  await waitFor(async () => /not http:\/\/127\.0\.0\.1:\d+ \(oauth\.issuer\)/.test(await problems(d)), 20000 * slow);
  // a retry of the refused operation may still run (409 busy): the
  // operator's DELETE is tried again until it is taken
  let del;
  await waitFor(async () => (del = await d.request('DELETE', '/v1/servers/secured/authorize')).status !== 409, 20000 * slow);
  assert.equal(del.status, 200, del.body);
  await waitFor(async () => (await server(d)).state !== 'ready' && /oauth\.issuer/.test(await problems(d)), 20000 * slow);
  await sync(as);
  assert.deepEqual(at(as, 'as2', (e) => e.event === 'token'), [], 'the secret never went to the new AS');
});

test('a browser authorization with a configured client_secret: 409 issuer_changed and a Problem after the move', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  const extra = '    oauth:\n      client_id: cc-client\n      client_secret: {env: CC_SECRET}\n';
  const d = await start(yaml(as.url, extra), { env: { CC_SECRET: 'cc-secret', XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'needs_authorization', 20000 * slow);
  const json = { headers: { accept: 'application/json' } };
  const first = await d.get('/v1/servers/secured/authorize', json);
  assert.equal(first.status, 200, first.body);
  assert.match(first.json.url, new RegExp(`^${origin(as)}/authorize\\?.*client_id=cc-client`));

  await post(`${origin(as)}/test/move`);
  const moved = await d.get('/v1/servers/secured/authorize', json);
  assert.equal(moved.status, 409, moved.body);
  assert.equal(moved.json.error.code, 'issuer_changed');
  assert.match(moved.json.error.message, /changed from http:\/\/127\.0\.0\.1:\d+ to http:\/\/127\.0\.0\.1:\d+\/as2/);
  assert.match(await problems(d), /issuer_changed|changed from/);
  assert.match((await server(d)).lastError, /changed from/);

  // A logout confirms: the new authorization server is used.
  assert.equal((await d.request('DELETE', '/v1/servers/secured/authorize')).status, 200);
  const after = await d.get('/v1/servers/secured/authorize', json);
  assert.equal(after.status, 200, after.body);
  assert.match(after.json.url, new RegExp(`^${origin(as)}/as2/authorize\\?.*client_id=cc-client`));
});
