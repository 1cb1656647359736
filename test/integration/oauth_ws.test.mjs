// OAuth over a WebSocket upstream (docs/api.md, "OAuth"): the fixture's
// /mcp (test/fixtures/oauth_server.mjs) also takes WebSocket upgrades, but
// only with a valid Bearer token; without one the upgrade is answered 401
// with a Bearer challenge. The server then waits in needs_authorization
// like an HTTP one; once authorized in the browser, the upgrade carries
// the token, the server starts and a tool call goes over the WebSocket.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { start, waitFor, tmpdir, slow } from './lib/harness.mjs';
import { oauthServer, browse } from './lib/oauth.mjs';


const server = async (d) => (await d.get('/v1/servers')).json.servers.find((s) => s.id === 'secured');
const toolNames = async (d) => (await d.get('/v1/tools')).json.tools.map((t) => t.name);

test('websocket upstream: a 401 on the upgrade waits for authorization; then the upgrade carries the Bearer token', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  const wsUrl = as.url.replace(/^http/, 'ws');
  const d = await start(`version: 1\nservers:\n  secured:\n    transport: websocket\n    url: ${wsUrl}\n`,
    { env: { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' } });
  t.after(() => d.stop());

  await waitFor(async () => (await server(d)).state === 'needs_authorization', 20000 * slow);
  const s = await server(d);
  assert.equal(s.authorize, `http://${d.addr}/v1/servers/secured/authorize`);
  assert.ok(!(await toolNames(d)).includes('whoami'));
  assert.deepEqual(as.events.filter((e) => e.event === 'upgrade'), [{ event: 'upgrade', bearer: false }]);

  const page = await browse(s.authorize);
  assert.equal(page.status, 200, page.body);
  assert.match(page.body, /secured is authorized/);
  // The resource is the server's URL over http (where its metadata is).
  assert.equal(as.events.find((e) => e.event === 'authorize').query.resource, as.url);

  await waitFor(async () => (await toolNames(d)).includes('whoami'), 20000 * slow);
  const call = await d.post('/v1/tools/whoami/call', { dialog: 'd1', arguments: {} });
  assert.equal(call.status, 200, call.body);
  assert.match(call.body, /called by client-1 over websocket/);
  const upgrades = as.events.filter((e) => e.event === 'upgrade');
  assert.equal(upgrades[0].bearer, false);
  assert.ok(upgrades.slice(1).length >= 1 && upgrades.slice(1).every((e) => e.bearer), JSON.stringify(upgrades));
  assert.ok(!/Bearer [A-Za-z0-9_-]{20,}/.test(d.stderr), 'a token is in the log');
});
