// OAuth tokens are masked wherever a configured secret is (docs/hardening.md,
// security.md P6): an upstream whose error text echoes the access token it
// was sent, and the grant's refresh token, shows "***" in the REST answer,
// the log, lastError and /v1/problems.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
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
