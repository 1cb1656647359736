// A grant's life after the authorization, against oidc-provider
// (test/fixtures/oidc_server.mjs) with rotating refresh tokens: a 401 to a
// token the gateway holds (run out early, revoked) is answered by one
// refresh of the grant, which every call refused meanwhile waits for, and
// each call goes again once; a reload keeps the grant; a grant that stops
// refreshing goes back to needs_authorization; a sign-out while a lease is
// held and a call runs. Every wait is on a marker (the fixture's events,
// the gateway's state), never on a time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { start, waitFor, tmpdir, slow, fixtures, sseReader } from './lib/harness.mjs';
import { oidcServer, browse } from './lib/oidc.mjs';

// No warm spare: the call itself is what meets the 401, not a spare
// starting meanwhile.
const yaml = (url, extra = '') => `version: 1\ngateway:\n  warm_spares: 0\nservers:\n  idp:\n    transport: streamable_http\n    url: ${url}\n${extra}`;
const server = async (d, id = 'idp') => (await d.get('/v1/servers')).json.servers.find((s) => s.id === id);
const toolNames = async (d) => (await d.get('/v1/tools')).json.tools.map((t) => t.name);
const call = (d, dialog, tool = 'whoami') => d.post(`/v1/tools/${tool}/call`, { dialog, arguments: {} }, { timeoutMs: 60000 * slow });
const refreshes = (as) => as.count('token', (e) => e.grant_type === 'refresh_token');
const codes = (as) => as.count('token', (e) => e.grant_type === 'authorization_code');

// The gateway's /v1/events, parsed, as they come.
function events(d, t) {
  const seen = [];
  const req = http.get({ host: d.host, port: d.port, path: '/v1/events' }, (res) => {
    res.setEncoding('utf8');
    res.on('data', sseReader((ev) => { try { seen.push({ event: ev.event, data: JSON.parse(ev.data) }); } catch { /* a comment */ } }));
  });
  req.on('error', () => {});
  t.after(() => req.destroy());
  return seen;
}

// A provider and a daemon, idp authorized through the provider's login page.
async function authorized(t, env = {}) {
  const as = await oidcServer(env);
  t.after(() => as.stop());
  const d = await start(yaml(as.url), { env: { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'needs_authorization', 20000 * slow);
  const page = await browse((await server(d)).authorize);
  assert.equal(page.status, 200, page.text);
  assert.match(page.text, /idp is authorized/);
  await waitFor(async () => (await toolNames(d)).includes('whoami'), 20000 * slow);
  return { as, d };
}

const marker = (as, name, from = 0) => waitFor(() => as.count(name) > from, 30000 * slow);
// Every event the fixture said before now has been read.
const sync = (as) => { const n = as.count('synced'); as.send('sync'); return marker(as, 'synced', n); };

test('20 concurrent calls across an access token\'s expiry make one refresh and all succeed', async (t) => {
  const { as, d } = await authorized(t, { ACCESS_TTL: '3' });
  // Four dialogs, each holding a leased instance: the refresh is the
  // grant's, not an instance's.
  const dialogs = ['a1', 'a2', 'a3', 'a4'];
  for (const dialog of dialogs) assert.equal((await call(d, dialog)).status, 200);

  // The refresh ahead of expiry is held at the provider until the access
  // token has run out, so the calls meet an expired token: each gets a 401
  // and waits for that one refresh. Tokens issued from here on live long.
  as.send('ttl 3600');
  as.send('hold');
  await marker(as, 'held');
  as.send('expired');
  await marker(as, 'expired');
  const before = refreshes(as);
  const rejected = as.count('rejected', (e) => e.method === 'POST');
  const calls = [];
  for (let i = 0; i < 20; i++) calls.push(call(d, dialogs[i % dialogs.length]));
  await waitFor(() => as.count('rejected', (e) => e.method === 'POST') >= rejected + 20, 30000 * slow);
  as.send('release');
  const answers = await Promise.all(calls);
  await sync(as);
  for (const a of answers) {
    assert.equal(a.status, 200, a.body);
    assert.match(a.body, /called by /);
  }
  assert.equal(refreshes(as) - before, 1, 'exactly one refresh');
  assert.equal((await server(d)).state, 'ready');
});

test('a revoked access token: the next call refreshes on the 401 and succeeds; a reload keeps the grant', async (t) => {
  const { as, d } = await authorized(t);
  assert.equal((await call(d, 'b1')).status, 200);

  await sync(as);
  const before = refreshes(as);
  const rejected = as.count('rejected');
  as.send('revoke-access');
  await marker(as, 'revoked');
  const a = await call(d, 'b1');
  assert.equal(a.status, 200, a.body);
  assert.match(a.body, /called by /);
  await sync(as);
  assert.ok(as.count('rejected') > rejected, 'a 401 was met');
  assert.equal(refreshes(as) - before, 1, 'one refresh');

  // A reload that changes the config (another server added) keeps the
  // grant: no new authorization, calls work.
  const logins = codes(as);
  fs.writeFileSync(d.configPath, yaml(as.url, `  other:\n    command: ${path.join(fixtures, 'mcp_fixture')}\n`));
  assert.equal((await d.post('/v1/reload', {})).status, 200);
  await waitFor(async () => (await server(d, 'other'))?.state === 'ready', 20000 * slow);
  assert.equal((await server(d)).state, 'ready');
  const after = await call(d, 'b2');
  assert.equal(after.status, 200, after.body);
  assert.match(after.body, /called by /);
  await sync(as);
  assert.equal(codes(as), logins, 'no new authorization');
});

test('a grant that stops refreshing goes back to needs_authorization, with an event', async (t) => {
  const { as, d } = await authorized(t);
  const seen = events(d, t);
  assert.equal((await call(d, 'c1')).status, 200);

  as.send('revoke-grant');
  await marker(as, 'grant-revoked');
  const failed = await call(d, 'c1');
  // The call that met the refused refresh is told what to do, as any call
  // to the server until it is authorized again.
  assert.equal(failed.status, 503, failed.body);
  assert.equal(JSON.parse(failed.body).error.code, 'authorization_required');
  assert.match(JSON.parse(failed.body).error.authorize, /\/v1\/servers\/idp\/authorize$/);
  await waitFor(async () => (await server(d)).state === 'needs_authorization', 20000 * slow);
  await waitFor(() => seen.some((e) => e.event === 'server' && e.data.server === 'idp' && e.data.state === 'needs_authorization'), 20000 * slow);
  assert.match((await server(d)).authorize, /\/v1\/servers\/idp\/authorize$/);
});

test('DELETE /v1/servers/idp/authorize while a lease is held and a call runs', async (t) => {
  const { as, d } = await authorized(t);
  assert.equal((await call(d, 'e1')).status, 200); // e1 holds a lease
  const running = call(d, 'e2', 'slow');
  await marker(as, 'slow-started');
  const out = await d.request('DELETE', '/v1/servers/idp/authorize');
  assert.equal(out.status, 200, out.body);
  // The call the server is running is let finish: it completes (or ends
  // with an error that says so) before its instance stops.
  as.send('release-slow');
  const a = await running;
  if (a.status === 200) assert.match(a.body, /slow done/);
  else assert.match(a.json?.error?.message ?? '', /\S/, a.body);
  await waitFor(async () => (await server(d)).state === 'needs_authorization', 20000 * slow);
  // The daemon stops cleanly (its ASan build reports no error and no leak).
  await d.stop();
});
