// An upstream that requires OAuth (docs/api.md, "OAuth"): the SDK's
// requireBearerAuth in front of an McpServer, with its own authorization
// server (test/fixtures/oauth_server.mjs). The server answers 401 with a
// Bearer challenge, so it waits in needs_authorization with an authorize
// link and no tools, /readyz counting it as started; the test plays the
// browser: GET the authorize link, follow the authorization server's
// redirect to mcpgw's /oauth/callback; the server starts, its tools
// appear and calls carry the token; the state works once; the grant is
// kept on disk (0700/0600) and a restarted daemon uses it without anyone;
// an expired token is refreshed on the 401; DELETE forgets the grant. No
// token or code reaches the log or /v1/servers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { start, waitFor, tmpdir, slow } from './lib/harness.mjs';
import { oauthServer, get, browse } from './lib/oauth.mjs';


const yaml = (url) => `version: 1\nservers:\n  secured:\n    transport: streamable_http\n    url: ${url}\n`;
const server = async (d) => (await d.get('/v1/servers')).json.servers.find((s) => s.id === 'secured');
const toolNames = async (d) => (await d.get('/v1/tools')).json.tools.map((t) => t.name);

test('authorize through the browser, call with the token, keep the grant across a restart, refresh it', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  const state = tmpdir();
  const env = { XDG_STATE_HOME: state, STATE_DIRECTORY: '' };
  let d = await start(yaml(as.url), { env });
  t.after(() => d.stop());

  // Never authorized: waiting, with a link, no tools, and ready.
  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  const s = await server(d);
  assert.equal(s.authorize, `http://${d.addr}/v1/servers/secured/authorize`);
  assert.match(s.lastError, /requires authorization: open http:\/\/.*\/v1\/servers\/secured\/authorize/);
  assert.equal((await d.get('/readyz')).status, 200);
  assert.deepEqual(await toolNames(d), ['mcp_release']);
  const problems = (await d.get('/v1/problems')).json;
  assert.match(JSON.stringify(problems), /requires authorization/);
  assert.match((await d.get('/metrics')).body, /^mcpgw_server_needs_authorization\{server="secured"\} 1$/m);

  // The browser goes to the authorization server and back.
  const page = await browse(s.authorize);
  assert.equal(page.status, 200, page.body);
  assert.match(page.headers['content-type'], /text\/html/);
  assert.match(page.body, /secured is authorized/);
  assert.equal(page.hops.length, 3);
  assert.match(page.hops[2].url, /\/oauth\/callback\?code=/);
  const authz = as.events.find((e) => e.event === 'authorize').query;
  assert.equal(authz.resource, as.url);
  assert.equal(authz.redirect_uri, `http://${d.addr}/oauth/callback`);
  assert.equal(authz.code_challenge_method, 'S256');
  const reg = as.events.find((e) => e.event === 'register').body;
  assert.equal(reg.application_type, 'native');
  assert.ok(reg.grant_types.includes('refresh_token'));

  // The server starts; its tool appears; a call carries the token.
  await waitFor(async () => (await server(d)).state === 'ready');
  await waitFor(async () => (await toolNames(d)).includes('whoami'));
  const call = await d.post('/v1/tools/whoami/call', { dialog: 'd1', arguments: {} });
  assert.equal(call.status, 200, call.body);
  assert.match(call.body, /called by client-1/);
  assert.equal((await server(d)).authorize, undefined);
  assert.match((await d.get('/metrics')).body, /^mcpgw_server_needs_authorization\{server="secured"\} 0$/m);

  // The state was spent.
  const again = await get(page.hops[2].url);
  assert.equal(again.status, 400);
  assert.match(again.body, /unknown, expired or already used/);

  // Kept on disk, owner only; nothing secret in the log or /v1/servers.
  const dir = path.join(state, 'mcpgw/oauth');
  assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
  const files = fs.readdirSync(dir);
  assert.equal(files.length, 2, files.join());
  for (const f of files) assert.equal(fs.statSync(path.join(dir, f)).mode & 0o777, 0o600);
  const grant = JSON.parse(fs.readFileSync(path.join(dir, files.find((f) => f.startsWith('grant-'))), 'utf8'));
  const code = new URL(page.hops[2].url).searchParams.get('code');
  const views = d.stderr + JSON.stringify((await d.get('/v1/servers')).json);
  for (const secret of [grant.access_token, grant.refresh_token, code, authz.state, authz.code_challenge])
    assert.ok(!views.includes(secret), 'a secret reached the log or /v1/servers');

  // A restart uses the grant on disk: no authorization request.
  await d.stop();
  const authorizations = as.events.filter((e) => e.event === 'authorize').length;
  d = await start(yaml(as.url), { env });
  await waitFor(async () => (await toolNames(d)).includes('whoami'), 30000 * slow);
  assert.match((await d.post('/v1/tools/whoami/call', { dialog: 'd1', arguments: {} })).body, /called by client-1/);
  assert.equal(as.events.filter((e) => e.event === 'authorize').length, authorizations);

  // An expired token: the next start answers 401, the grant is refreshed.
  await d.stop();
  await new Promise((resolve, reject) => {
    const req = http.request(new URL('/test/expire', as.url), { method: 'POST', agent: false }, (res) => { res.resume(); res.on('end', resolve); });
    req.on('error', reject);
    req.end();
  });
  const refreshesBefore = as.events.filter((e) => e.event === 'token' && e.grant_type === 'refresh_token').length;
  d = await start(yaml(as.url), { env });
  await waitFor(async () => (await server(d)).state === 'ready', 30000 * slow);
  assert.equal(as.events.filter((e) => e.event === 'token' && e.grant_type === 'refresh_token').length, refreshesBefore + 1);
  assert.match((await d.post('/v1/tools/whoami/call', { dialog: 'd1', arguments: {} })).body, /called by client-1/);
  await d.waitLog(/msg="oauth token refreshed" server=secured/);

  // DELETE forgets the grant, on disk too, and revokes its refresh token
  // (RFC 7009) at the authorization server.
  const del = await d.request('DELETE', '/v1/servers/secured/authorize');
  assert.equal(del.status, 200, del.body);
  assert.deepEqual(fs.readdirSync(dir).filter((f) => f.startsWith('grant-')), []);
  await waitFor(() => as.events.some((e) => e.event === 'revoke'));
  assert.deepEqual(as.events.find((e) => e.event === 'revoke'), { event: 'revoke', as: 'as1', token_type_hint: 'refresh_token', client_id: 'client-1', known: true });
});

test('a forged or replayed callback is refused and changes nothing', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  const d = await start(yaml(as.url), { env: { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  const forged = await get(`http://${d.addr}/oauth/callback?code=x&state=forged`);
  assert.equal(forged.status, 400);
  assert.match(forged.body, /unknown, expired or already used/);
  const post = await d.post('/v1/servers/secured/authorize', { redirect: 'http://x/oauth/callback?code=x&state=forged' });
  assert.equal(post.status, 400);
  assert.equal(post.json.error.code, 'unknown_state');
  assert.equal((await server(d)).state, 'needs_authorization');
  assert.ok(!d.stderr.includes('state=forged'), 'the callback query reached the log');
});

test('servers.<id>.oauth.off keeps a 401 an error; gateway.oauth.redirect_uri is the redirect sent', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  const yaml2 = `version: 1\ngateway:\n  oauth:\n    redirect_uri: https://gw.example/oauth/callback\nservers:\n`
    + `  secured:\n    transport: streamable_http\n    url: ${as.url}\n`
    + `  plain:\n    transport: streamable_http\n    url: ${as.url}\n    oauth: {off: true}\n`;
  const d = await start(yaml2, { env: { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  const byId = async (id) => (await d.get('/v1/servers')).json.servers.find((s) => s.id === id);
  await waitFor(async () => (await byId('secured')).state === 'needs_authorization');
  await waitFor(async () => (await byId('plain')).state === 'failed');
  assert.equal((await byId('plain')).authorize, undefined);
  const r = await get(`http://${d.addr}/v1/servers/secured/authorize`);
  assert.equal(r.status, 302, r.body);
  assert.equal(new URL(r.headers.location).searchParams.get('redirect_uri'), 'https://gw.example/oauth/callback');
});

test('hostile metadata: a metadata-address authorization server, a 50 MB document, a silent server: a 502 naming it, never a fetch, /healthz throughout', async (t) => {
  for (const [hostile, why] of [['metadata', /169\.254\.169\.254 is a cloud metadata address/], ['big', /larger than 262144 bytes/], ['slow', /could not be fetched: .*(timed out|Timeout)/i]]) {
    const as = await oauthServer({ HOSTILE: hostile });
    const d = await start(yaml(as.url), { env: { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' } });
    try {
      await waitFor(async () => (await server(d)).state === 'needs_authorization');
      const pending = d.get('/v1/servers/secured/authorize', { timeoutMs: 30000 * slow });
      if (hostile === 'slow') {
        await waitFor(() => as.events.some((e) => e.event === 'slow'));
        assert.equal((await d.get('/healthz')).status, 200); /* the loop is free while it waits */
      }
      const r = await pending;
      assert.equal(r.status, 502, `${hostile}: ${r.body}`);
      assert.equal(r.json.error.code, 'authorization_unavailable');
      assert.match(r.json.error.message, why);
      assert.equal((await server(d)).state, 'needs_authorization');
      assert.ok(!as.events.some((e) => e.event === 'register' || e.event === 'authorize'), hostile);
    } finally {
      await d.stop();
      as.stop();
    }
  }
});

test('grant: client_credentials: no browser, the configured client gets the token, the server starts', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  const cc = `version: 1\nservers:\n  secured:\n    transport: streamable_http\n    url: ${as.url}\n`
    + '    oauth:\n      client_id: cc-client\n      client_secret: {env: CC_SECRET}\n      grant: client_credentials\n';
  const d = await start(cc, { env: { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '', CC_SECRET: 'cc-secret' } });
  t.after(() => d.stop());
  await waitFor(async () => (await toolNames(d)).includes('whoami'), 20000 * slow);
  assert.match((await d.post('/v1/tools/whoami/call', { dialog: 'd1', arguments: {} })).body, /called by cc-client/);
  assert.deepEqual(as.events.filter((e) => e.event === 'token').map((e) => e.grant_type), ['client_credentials']);
  assert.ok(!as.events.some((e) => e.event === 'authorize' || e.event === 'register'));
  assert.ok(!d.stderr.includes('cc-secret'));
  assert.equal((await server(d)).config.oauth.client_secret, '***');
});
