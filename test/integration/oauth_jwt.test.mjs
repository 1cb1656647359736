// private_key_jwt (RFC 7523 section 2.2, docs/config.md): a client that
// authenticates at the token endpoint with a JWT signed by its configured
// key. The fixture authorization server (test/fixtures/oauth_server.mjs,
// JWT_PUBLIC_KEY) verifies each assertion with the public half: ES256 with
// the method named and the key in a file, RS256 with the method chosen from
// the metadata and the key in the environment. The key and the assertion
// never reach the log or /v1/servers. A key that is not one, or a curve
// ES256 does not use, or private_key_jwt without a key, is a config error
// at the key's line (`mcpgw -t`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { start, run, waitFor, tmpdir, slow } from './lib/harness.mjs';
import { oauthServer } from './lib/oauth.mjs';


const pair = (type, options) => {
  const { publicKey, privateKey } = crypto.generateKeyPairSync(type, options);
  return {
    pub: publicKey.export({ type: 'spki', format: 'pem' }),
    pem: privateKey.export({ type: 'pkcs8', format: 'pem' }),
  };
};
const toolNames = async (d) => (await d.get('/v1/tools')).json.tools.map((t) => t.name);
const server = async (d) => (await d.get('/v1/servers')).json.servers.find((s) => s.id === 'secured');
// The base64 lines of a PEM key: none may appear in a log.
const keyLines = (pem) => pem.split('\n').filter((l) => l && !l.startsWith('-----'));

for (const c of [
  { alg: 'ES256', key: () => pair('ec', { namedCurve: 'P-256' }), how: 'file', method: 'private_key_jwt' },
  { alg: 'RS256', key: () => pair('rsa', { modulusLength: 2048 }), how: 'env', method: null },
]) {
  test(`client_credentials with private_key_jwt, ${c.alg}, key from ${c.how}, method ${c.method ?? 'chosen'}`, async (t) => {
    const k = c.key();
    const as = await oauthServer({ JWT_PUBLIC_KEY: k.pub });
    t.after(() => as.stop());
    const keyRef = c.how === 'file' ? '{file: client.pem}' : '{env: CLIENT_KEY}';
    const yaml = `version: 1\nservers:\n  secured:\n    transport: streamable_http\n    url: ${as.url}\n`
      + `    oauth:\n      client_id: jwt-client\n      private_key: ${keyRef}\n      grant: client_credentials\n`
      + (c.method ? `      token_endpoint_auth_method: ${c.method}\n` : '');
    const d = await start(yaml, {
      files: { 'client.pem': k.pem },
      env: { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '', CLIENT_KEY: k.pem },
    });
    t.after(() => d.stop());
    await waitFor(async () => (await toolNames(d)).includes('whoami'), 20000 * slow);
    assert.match((await d.post('/v1/tools/whoami/call', { dialog: 'd1', arguments: {} })).body, /called by jwt-client/);
    const assertions = as.events.filter((e) => e.event === 'assertion');
    assert.deepEqual(assertions, [{ event: 'assertion', ok: true, alg: c.alg, client_id: 'jwt-client' }]);
    assert.ok(!as.events.some((e) => e.event === 'authorize' || e.event === 'register'));
    assert.equal((await server(d)).config.oauth.private_key, '***');
    for (const line of keyLines(k.pem)) assert.ok(!d.stderr.includes(line), 'a line of the key is in the log');
    assert.ok(!/eyJ[A-Za-z0-9_-]+\.eyJ/.test(d.stderr), 'a JWT is in the log');
  });
}

test('mcpgw -t: a bad private_key, a curve ES256 does not use, private_key_jwt without a key', async () => {
  const dir = tmpdir();
  fs.writeFileSync(path.join(dir, 'bad.pem'), '-----BEGIN PRIVATE KEY-----\nnot base64 at all\n-----END PRIVATE KEY-----\n');
  fs.writeFileSync(path.join(dir, 'p384.pem'), pair('ec', { namedCurve: 'P-384' }).pem);
  const cfg = path.join(dir, 'mcp.yaml');
  fs.writeFileSync(cfg, 'version: 1\nservers:\n'
    + '  a:\n    transport: streamable_http\n    url: https://a.example/mcp\n'
    + '    oauth:\n      client_id: x\n      private_key: {file: bad.pem}\n'
    + '  b:\n    transport: streamable_http\n    url: https://b.example/mcp\n'
    + '    oauth:\n      client_id: x\n      private_key: {file: p384.pem}\n'
    + '  c:\n    transport: streamable_http\n    url: https://c.example/mcp\n'
    + '    oauth:\n      client_id: x\n      token_endpoint_auth_method: private_key_jwt\n'
    + '  d:\n    transport: streamable_http\n    url: https://d.example/mcp\n'
    + '    oauth:\n      client_id: x\n      private_key: {file: missing.pem}\n');
  const r = await run(['-t', '-c', cfg]);
  assert.equal(r.code, 1, r.stderr);
  const out = r.stdout + r.stderr;
  assert.match(out, /mcp\.yaml:8:\d+.*servers\.a\.oauth\.private_key.*not a PEM private key/);
  assert.match(out, /mcp\.yaml:14:\d+.*servers\.b\.oauth\.private_key.*secp384r1.*P-256/);
  assert.match(out, /mcp\.yaml:20:\d+.*private_key_jwt needs 'servers\.c\.oauth\.private_key'/);
  assert.match(out, /mcp\.yaml:26:\d+.*servers\.d\.oauth\.private_key.*missing\.pem.*cannot be used: No such file or directory/);
  assert.ok(!out.includes('not base64 at all'));
});
