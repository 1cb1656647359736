// `mcpgw auth` against what it must not trust (docs/hardening.md): the
// servers' text the daemon relays (a lastError, an issuer, a Problem) is
// printed with its control characters replaced, so a server cannot drive
// the operator's terminal; proxies named by the environment are ignored
// (the token goes to the daemon only); and the token is never sent over
// plain http to a host that is not loopback. The "daemon" here is a small
// HTTP server in the test that answers as a hostile relay would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { run } from './lib/harness.mjs';

const ESC = '\u001b';
const hostileText = `${ESC}]0;pwned${ESC}\\${ESC}[2J\u009b31mred\r\n`;

// A fake daemon: /v1/servers lists one OAuth server whose text is hostile;
// its authorize route answers a Problem that is hostile too. It records
// every request (method, url, whether a token came).
async function fakeDaemon(t) {
  const seen = [];
  const srv = http.createServer((req, res) => {
    seen.push({ method: req.method, url: req.url, token: req.headers.authorization || '' });
    res.setHeader('content-type', 'application/json');
    if (req.url === '/v1/servers') {
      res.end(JSON.stringify({
        servers: [{
          id: 'evil', state: 'needs_authorization', authorize: 'x', lastError: hostileText,
          grant: { issuer: `https://as.example/${hostileText}`, scopes: [hostileText], expiresAt: hostileText, refreshable: true },
        }],
      }));
    } else {
      res.statusCode = 502;
      res.end(JSON.stringify({ error: { code: 'authorization_unavailable', message: hostileText } }));
    }
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.after(() => srv.close());
  return { url: `http://127.0.0.1:${srv.address().port}`, port: srv.address().port, seen };
}

const noControls = (s) => !/[\u0000-\u0008\u000b-\u001f\u007f\u0080-\u009f]/.test(s);

test('auth status and login print the relayed text with control characters replaced', async (t) => {
  const d = await fakeDaemon(t);
  const status = await run(['auth', 'status', '--gateway', d.url], { env: { MCPGW_TOKEN: '' } });
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /evil/);
  assert.match(status.stdout, /https:\/\/as\.example\/\?\]0;pwned\?\\\?\[2J\?31mred\?\?/);
  assert.ok(noControls(status.stdout), JSON.stringify(status.stdout));
  const login = await run(['auth', 'login', 'evil', '--gateway', d.url], { env: { MCPGW_TOKEN: '' } });
  assert.equal(login.code, 1);
  assert.match(login.stderr, /cannot authorize evil: \?\]0;pwned\?\\\?\[2J\?31mred\?\? \(502 authorization_unavailable\)/);
  assert.ok(noControls(login.stderr.replace(/\n/g, '')), JSON.stringify(login.stderr));
});

test('auth ignores the proxies the environment names', async (t) => {
  const d = await fakeDaemon(t);
  const proxied = [];
  const proxy = http.createServer((req, res) => { proxied.push(req.url); res.writeHead(502).end(); });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.after(() => proxy.close());
  const purl = `http://127.0.0.1:${proxy.address().port}`;
  const r = await run(['auth', 'status', '--gateway', d.url], {
    env: { MCPGW_TOKEN: 'cli-secret-token', http_proxy: purl, HTTPS_PROXY: purl, ALL_PROXY: purl, all_proxy: purl, NO_PROXY: '', no_proxy: '' },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(proxied, []);
  assert.deepEqual(d.seen.map((s) => [s.url, s.token]), [['/v1/servers', 'Bearer cli-secret-token']]);
});

test('auth refuses to send the token over plain http to a host that is not loopback', async (t) => {
  const d = await fakeDaemon(t);
  // 0.0.0.0 is not a loopback address, but a connection to it stays on
  // this machine (Linux takes it for a local one): the fake daemon would
  // see a token sent there.
  const r = await run(['auth', 'status', '--gateway', `http://0.0.0.0:${d.port}`], { env: { MCPGW_TOKEN: 'cli-secret-token' } });
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.match(r.stderr, /refusing to send the gateway's token over plain http to http:\/\/0\.0\.0\.0:\d+, which is not a loopback address: use https:\/\//);
  assert.deepEqual(d.seen, []);
  // Without a token there is nothing to protect; loopback names pass.
  const anon = await run(['auth', 'status', '--gateway', `http://0.0.0.0:${d.port}`], { env: { MCPGW_TOKEN: '' } });
  assert.equal(anon.code, 0, anon.stderr);
  const named = await run(['auth', 'status', '--gateway', `http://localhost:${d.port}`], { env: { MCPGW_TOKEN: 'cli-secret-token' } });
  assert.equal(named.code, 0, named.stderr);
});
