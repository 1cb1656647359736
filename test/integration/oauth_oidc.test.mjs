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
import { start, waitFor, tmpdir, slow } from './lib/harness.mjs';
import { oidcServer, browse } from './lib/oidc.mjs';

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
