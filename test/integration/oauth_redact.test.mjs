// OAuth tokens are masked wherever a configured secret is (docs/hardening.md,
// security.md P6): an upstream whose error text (an HTTP error body, or a
// JSON-RPC error's message and data) echoes the access token it was sent,
// and the grant's refresh token, shows "***" in the REST answer, the log,
// lastError and /v1/problems; so do the tokens of a refresh the instance
// made after it started.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { start, waitFor, tmpdir, slow } from './lib/harness.mjs';
import { oauthServer, browse } from './lib/oauth.mjs';

const yaml = (url) => `version: 1\nservers:\n  secured:\n    transport: streamable_http\n    url: ${url}\n`;
const server = async (d) => (await d.get('/v1/servers')).json.servers.find((s) => s.id === 'secured');

test('an upstream error echoing the access and refresh tokens shows them masked everywhere', async (t) => {
  const as = await oauthServer({ HOSTILE: 'echo' });
  t.after(() => as.stop());
  const state = tmpdir();
  const d = await start(yaml(as.url), { env: { XDG_STATE_HOME: state, STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  const page = await browse((await server(d)).authorize);
  assert.equal(page.status, 200, page.body);
  await waitFor(async () => (await d.get('/v1/tools')).json.tools.some((x) => x.name === 'whoami'), 20000 * slow);
  const dir = path.join(state, 'mcpgw/oauth');
  const grant = JSON.parse(fs.readFileSync(path.join(dir, fs.readdirSync(dir).find((f) => f.startsWith('grant-'))), 'utf8'));

  const call = await d.post('/v1/tools/whoami/call', { dialog: 'd1', arguments: {} });
  assert.match(call.body, /bad credentials Bearer \*\*\* \(refresh token \*\*\*\)/, call.body);
  await waitFor(() => /bad credentials/.test(d.stderr));
  const views = [call.body, d.stderr, JSON.stringify((await d.get('/v1/servers')).json), JSON.stringify((await d.get('/v1/problems')).json)];
  for (const [i, v] of views.entries()) {
    assert.ok(!v.includes(grant.access_token), `the access token reached view ${i}`);
    assert.ok(!v.includes(grant.refresh_token), `the refresh token reached view ${i}`);
  }
});

const grantOf = (state) => {
  const dir = path.join(state, 'mcpgw/oauth');
  return JSON.parse(fs.readFileSync(path.join(dir, fs.readdirSync(dir).find((f) => f.startsWith('grant-'))), 'utf8'));
};
const post = (url) => new Promise((resolve, reject) => {
  const req = http.request(url, { method: 'POST', agent: false }, (res) => { res.resume(); res.on('end', resolve); });
  req.on('error', reject);
  req.end();
});

test('a JSON-RPC error echoing the tokens, before and after a refresh, shows them masked everywhere', async (t) => {
  const as = await oauthServer({ HOSTILE: 'rpc-echo' });
  t.after(() => as.stop());
  const state = tmpdir();
  const d = await start(yaml(as.url), { env: { XDG_STATE_HOME: state, STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  const page = await browse((await server(d)).authorize);
  assert.equal(page.status, 200, page.body);
  await waitFor(async () => (await d.get('/v1/tools')).json.tools.some((x) => x.name === 'whoami'), 20000 * slow);
  const first = grantOf(state);
  const before = await d.post('/v1/tools/whoami/call', { dialog: 'd1', arguments: {} });
  assert.match(before.body, /error -32005: bad credentials (Bearer )?\*\*\* \(refresh token \*\*\*\)/, before.body);

  // The same instance meets a 401, refreshes, and its call goes again with
  // tokens it did not have when it started.
  await post(new URL('/test/expire', as.url));
  const after = await d.post('/v1/tools/whoami/call', { dialog: 'd1', arguments: {} });
  assert.match(after.body, /error -32005: bad credentials (Bearer )?\*\*\* \(refresh token \*\*\*\)/, after.body);
  await waitFor(() => grantOf(state).access_token !== first.access_token);
  const second = grantOf(state);
  await waitFor(() => /oauth token refreshed/.test(d.stderr));
  const views = [before.body, after.body, d.stderr, JSON.stringify((await d.get('/v1/servers')).json), JSON.stringify((await d.get('/v1/problems')).json)];
  for (const [i, v] of views.entries()) {
    for (const g of [first, second]) {
      assert.ok(!v.includes(g.access_token), `an access token reached view ${i}`);
      assert.ok(!v.includes(g.refresh_token), `a refresh token reached view ${i}`);
    }
  }
});
