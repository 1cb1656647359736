// Server text cut to fit an error sentence ("%.300s" before) is cut between
// UTF-8 characters: the sentence stays valid JSON, so the answer that
// carries it is not a 500 and the server never vanishes from /v1/servers or
// /v1/problems. Two cuts a server chooses the text of: the resource of its
// protected-resource metadata (300 bytes) and the protocol version it
// answers initialize with (64 bytes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { start, waitFor, tmpdir, slow, fixtures } from './lib/harness.mjs';
import { oauthServer, browse } from './lib/oauth.mjs';

const yaml = (url) => `version: 1\nservers:\n  secured:\n    transport: streamable_http\n    url: ${url}\n`;
const server = async (d, id = 'secured') => (await d.get('/v1/servers')).json.servers.find((s) => s.id === id);
const env = () => ({ XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' });

test('a resource cut in the middle of a character: a 502 naming it, not a 500', async (t) => {
  const as = await oauthServer({ HOSTILE: 'utf8' });
  t.after(() => as.stop());
  const d = await start(yaml(as.url), { env: env() });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  const r = await d.get('/v1/servers/secured/authorize', { timeoutMs: 30000 * slow });
  assert.equal(r.status, 502, r.body);
  const want = /the protected resource metadata names http:\/\/127\.0\.0\.1:\d+\/a+, which is not this server/;
  assert.match(r.json.error.message, want);
  assert.ok(await server(d), 'the server vanished from /v1/servers');
});

test('a protocol version cut in the middle of a character: the server stays in /v1/servers and /v1/problems', async (t) => {
  const version = `${'v'.repeat(63)}${'\u00e9'.repeat(10)}`;
  const d = await start(`version: 1\nservers:\n  odd:\n    command: ${path.join(fixtures, 'mcp_fixture')}\n    args: ['--version', '${version}']\n`);
  t.after(() => d.stop());
  await waitFor(async () => (await server(d, 'odd'))?.state === 'failed', 20000 * slow);
  const s = await server(d, 'odd');
  assert.match(s.lastError, /the server answered protocol version "v{63}", which mcpgw does not support/);
  const problems = (await d.get('/v1/problems')).json;
  assert.match(problems.problems.find((p) => p.server === 'odd').message, /answered protocol version "v{63}"/);
});

test('an error code in the redirect back that is not RFC 6749 text is not shown: the server stays listed', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  const d = await start(yaml(as.url), { env: env() });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  const authz = await d.get('/v1/servers/secured/authorize');
  assert.equal(authz.status, 302, authz.body);
  const state = new URL(authz.headers.location).searchParams.get('state');
  const iss = new URL(as.url).origin;
  const redirect = `http://x/oauth/callback?state=${state}&iss=${encodeURIComponent(iss)}&error=%C3%1B%5B2J`;
  const r = await d.post('/v1/servers/secured/authorize', { redirect });
  assert.equal(r.status, 400, r.body);
  assert.match(r.json.error.message, /the authorization server refused, with an error code outside RFC 6749's characters/);
  const s = await server(d);
  assert.ok(s, 'the server vanished from /v1/servers');
  assert.match(s.lastError, /outside RFC 6749's characters/);
});

test('an upstream error body cut at its 200th byte inside a character, with bytes that are not UTF-8: the call answers a 502 naming it', async (t) => {
  const as = await oauthServer({ HOSTILE: 'latin1' });
  t.after(() => as.stop());
  const d = await start(yaml(as.url), { env: env() });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  const page = await browse((await server(d)).authorize);
  assert.equal(page.status, 200, page.body);
  await waitFor(async () => (await d.get('/v1/tools')).json.tools.some((x) => x.name === 'whoami'), 20000 * slow);
  const call = await d.post('/v1/tools/whoami/call', { dialog: 'd1', arguments: {} });
  assert.equal(call.status, 502, call.body);
  // At most the 199 whole bytes before the split character: the masking of
  // a cut line may hold back a few more, when a token held happens to start
  // with what ends the text.
  assert.match(call.json.error.message, /the upstream answered HTTP 500: a{190,199}(?!a)/);
  assert.ok(await server(d), 'the server vanished from /v1/servers');
});
