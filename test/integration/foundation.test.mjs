// Foundation: command line, --check-config, routes, limits, signals, secrets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { start, run, tmpdir, request, rawExchange, sleep, waitFor, root, fixtures } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');

const SECRET = 'sekrit-7f3a9c-value';

function writeConfig(yaml) {
  const dir = tmpdir();
  const file = path.join(dir, 'mcp.yaml');
  fs.writeFileSync(file, yaml);
  return file;
}

test('--version and --help exit 0', async () => {
  const v = await run(['--version']);
  assert.equal(v.code, 0);
  assert.match(v.stdout, /^mcpgw \d+\.\d+\.\d+/);
  const h = await run(['--help']);
  assert.equal(h.code, 0);
  assert.match(h.stdout, /--check-config/);
  const bad = await run(['--log-level', 'loud']);
  assert.equal(bad.code, 2);
});

test('--check-config accepts the example configs', async () => {
  const env = { GITHUB_TOKEN: 'x', DATABASE_URL: 'x', API_KEY: 'x', CUSTOM_CONFIG: 'x',
    CLOUD_API_KEY: 'x', TOKEN: 'x', MY_API_KEY: 'x', MCP_AUTH_TOKEN: 'x', API_TOKEN: 'x' };
  const r = await run(['--check-config', '-c', path.join(root, 'conf/mcp.yaml')], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /test is successful/);
  for (const name of ['000-dominds-playwright.yaml', '004-strict-dynamic.yaml']) {
    const e = await run(['--check-config', '-c', path.join(root, 'conf/examples', name)], { env });
    assert.equal(e.code, 0, `${name}: ${e.stderr}`);
  }
});

test('--check-config rejects broken configs naming file, line and cause', async () => {
  const cases = [
    ['version: 2\n', /:1:\d+: error: .*version/],
    ['servers: {}\n', /error: .*version/],
    ['version: 1\nservers:\n  a: {command: npx}\n  a: {command: npx}\n', /:4:\d+: error: .*duplicate/i],
    ['version: 1\nservers:\n  s:\n    transport: carrier-pigeon\n    command: npx\n', /:4:\d+: error: \[server s\] .*transport/],
    ['version: 1\nservers:\n  s:\n    command: definitely-not-a-command-xyz\n', /:4:\d+: error: \[server s\] .*definitely-not-a-command-xyz/],
    ['version: 1\nservers:\n  s:\n    transport: streamable_http\n    url: http://example.com/mcp\n', /:5:\d+: error: \[server s\] MCPConfigError: 'url' must use https:\/\/ \(or http:\/\/ for localhost\)/],
    ['version: 1\nservers:\n  s:\n    command: npx\n    env:\n      X: {env: MCPGW_TEST_NOT_SET_ANYWHERE}\n', /:6:\d+: error: \[server s\] ConfigError: Environment variable 'MCPGW_TEST_NOT_SET_ANYWHERE' not found/],
    ['version: 1\nservers:\n  s:\n    command: npx\n    mode: dynamic\n', /error: \[server s\] MCP server 's' is configured with mode='dynamic' but missing required field 'default_tool_config'/],
    ['version: 1\nservers:\n  s:\n    command: npx\n    transform:\n      - prefix: a\n        suffix: b\n', /:6:\d+: error: \[server s\] .*transform/],
    ['version: 1\ngateway:\n  request_timeout: soon\nservers: {}\n', /:3:\d+: error: .*request_timeout/],
    ['version: 1\nservers:\n  s: [unclosed\n', /error: .*(YAML|yaml)/],
  ];
  for (const [yaml, re] of cases) {
    const file = writeConfig(yaml);
    const r = await run(['--check-config', '-c', file]);
    assert.equal(r.code, 1, `expected failure for:\n${yaml}\n${r.stderr}`);
    assert.ok(r.stderr.includes(file), `file name missing:\n${r.stderr}`);
    assert.match(r.stderr, re, `for:\n${yaml}`);
  }
});

test('an envFile that is a FIFO is refused at once, not waited on', async () => {
  const { spawnSync } = await import('node:child_process');
  const dir = tmpdir();
  spawnSync('mkfifo', [path.join(dir, 'pipe.env')]);
  fs.writeFileSync(path.join(dir, 'mcp.yaml'), `version: 1\nservers:\n  s:\n    command: ${FIXTURE}\n    envFile: pipe.env\n`);
  const r = await run(['--check-config', '-c', path.join(dir, 'mcp.yaml')], { timeoutMs: 10000 });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /envFile .* is not a regular file/);
});

test('--check-config warns about unknown keys but passes', async () => {
  const file = writeConfig('version: 1\nservers:\n  s:\n    command: npx\n    truly-stateless: true\n');
  const r = await run(['--check-config', '-c', file]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /:5:\d+: warning: \[server s\] .*truly-stateless/);
});

test('a missing -c file is a startup error', async () => {
  const r = await run(['-c', '/nonexistent/mcp.yaml', '--listen', '127.0.0.1:0']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /not found/);
});

test('routes: healthz, readyz, problems, servers, 404, 405', async (t) => {
  const d = await start(`version: 1\nservers:\n  ok:\n    command: ${FIXTURE}\n`, { waitReady: true });
  t.after(() => d.stop());
  let r = await d.get('/healthz');
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, { status: 'ok' });
  assert.match(r.headers['content-type'], /^application\/json/);
  r = await d.get('/readyz');
  assert.equal(r.status, 200);
  r = await d.get('/v1/problems');
  assert.equal(r.status, 200);
  assert.ok(Array.isArray(r.json.problems));
  r = await d.get('/v1/servers');
  assert.equal(r.status, 200);
  assert.equal(r.json.servers.length, 1);
  assert.equal(r.json.servers[0].id, 'ok');
  assert.equal(r.json.servers[0].transport, 'stdio');
  r = await d.get('/nope');
  assert.equal(r.status, 404);
  assert.equal(r.json.error.code, 'not_found');
  assert.equal(typeof r.json.error.message, 'string');
  r = await d.post('/healthz', {});
  assert.equal(r.status, 405);
  assert.equal(r.json.error.code, 'method_not_allowed');
});

test('the daemon starts when every server is broken and says why for each', async (t) => {
  const d = await start(`version: 1
gateway:
  allowed_commands: [npx]
servers:
  badcmd:
    command: node
  badurl:
    transport: streamable_http
    url: ftp://127.0.0.1/mcp
  badenv:
    command: npx
    env: {K: {env: MCPGW_TEST_MISSING_VAR}}
  badtransport:
    transport: websocket
    url: https://127.0.0.1/ws
`);
  t.after(() => d.stop());
  const r = await d.get('/v1/problems');
  assert.equal(r.status, 200);
  const byServer = (id) => r.json.problems.filter((p) => p.server === id && p.severity === 'error');
  assert.match(byServer('badcmd')[0].message, /Invalid command 'node'. Supported commands: npx/);
  assert.match(byServer('badurl')[0].message, /url/);
  assert.match(byServer('badenv')[0].message, /Environment variable 'MCPGW_TEST_MISSING_VAR' not found/);
  assert.match(byServer('badtransport')[0].message, /wss:\/\//);
  for (const p of r.json.problems) {
    for (const k of ['id', 'severity', 'scope', 'message', 'since']) assert.ok(k in p, `${k} in ${JSON.stringify(p)}`);
  }
  const s = await d.get('/v1/servers');
  assert.deepEqual(s.json.servers.map((x) => x.state), ['failed', 'failed', 'failed', 'failed']);
  assert.ok(s.json.servers.every((x) => typeof x.lastError === 'string'));
});

test('secrets never appear in responses or logs', async (t) => {
  const d = await start(`version: 1
gateway:
  auth_token: {env: MCPGW_TEST_TOKEN}
servers:
  s:
    command: ${FIXTURE}
    env:
      LITERAL: '${SECRET}-lit'
      COPIED: {env: MCPGW_TEST_SECRET}
      SUBST: 'Bearer \${MCPGW_TEST_SECRET}'
  h:
    transport: streamable_http
    url: http://127.0.0.1:1/mcp
    headers:
      Authorization: 'Bearer \${MCPGW_TEST_SECRET}'
      X-Literal: '${SECRET}-hdr'
`, { env: { MCPGW_TEST_SECRET: SECRET, MCPGW_TEST_TOKEN: `${SECRET}-token` } });
  t.after(() => d.stop());
  const auth = { authorization: `Bearer ${SECRET}-token` };
  for (const p of ['/v1/servers', '/v1/problems', '/healthz', '/readyz', '/nope']) {
    const r = await d.get(p, { headers: auth });
    assert.ok(!r.body.includes(SECRET), `${p} leaks the secret: ${r.body}`);
  }
  const s = await d.get('/v1/servers', { headers: auth });
  assert.equal(s.status, 200);
  assert.match(s.body, /\*\*\*/);
  d.child.kill('SIGHUP');
  await d.waitLog(/msg=reloading/);
  // The reload runs in one turn of the daemon's loop: a request sent after
  // it began is logged after everything the reload logged.
  await d.get('/after-reload', { headers: auth });
  await d.waitLog(/path=\/after-reload /);
  assert.ok(!d.stderr.includes(SECRET), 'the log leaks the secret');
});

test('auth: bearer token on every route but /healthz', async (t) => {
  const d = await start('version: 1\ngateway:\n  auth_token: {env: MCPGW_TEST_TOKEN}\n',
    { env: { MCPGW_TEST_TOKEN: 'tok-123456' } });
  t.after(() => d.stop());
  assert.equal((await d.get('/healthz')).status, 200);
  for (const h of [{}, { authorization: 'Bearer wrong' }, { authorization: 'Bearer tok-12345' },
    { authorization: 'Basic tok-123456' }]) {
    const r = await d.get('/v1/problems', { headers: h });
    assert.equal(r.status, 401, JSON.stringify(h));
    assert.match(r.headers['www-authenticate'], /^Bearer/);
    assert.equal(r.json.error.code, 'unauthorized');
  }
  assert.equal((await d.get('/v1/problems', { headers: { authorization: 'Bearer tok-123456' } })).status, 200);
});

test('a non-loopback listen without auth_token refuses to start', async () => {
  const file = writeConfig('version: 1\n');
  const r = await run(['-c', file, '--listen', '0.0.0.0:0']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /auth_token/);
});

test('DNS rebinding: foreign Host and Origin get 403', async (t) => {
  const d = await start('version: 1\ngateway:\n  allowed_origins: [https://app.example]\n');
  t.after(() => d.stop());
  let r = await d.get('/healthz', { headers: { host: 'evil.example' } });
  assert.equal(r.status, 403);
  assert.equal(r.json.error.code, 'forbidden_host');
  r = await d.get('/healthz', { headers: { origin: 'http://evil.example' } });
  assert.equal(r.status, 403);
  assert.equal(r.json.error.code, 'forbidden_origin');
  for (const origin of [`http://localhost:${d.port}`, `http://127.0.0.1:${d.port}`, `http://[::1]:${d.port}`, 'https://app.example']) {
    r = await d.get('/healthz', { headers: { origin } });
    assert.equal(r.status, 200, origin);
  }
  // Another port of the same host is another origin (cross_site.test.mjs).
  for (const origin of ['http://localhost:3000', 'http://127.0.0.1', 'http://[::1]:8080']) {
    r = await d.get('/healthz', { headers: { origin } });
    assert.equal(r.status, 403, origin);
  }
  r = await d.get('/healthz', { headers: { host: 'localhost:7420' } });
  assert.equal(r.status, 200);
});

test('DNS rebinding: Host and Origin are parsed strictly', async (t) => {
  const d = await start('version: 1\ngateway:\n  allowed_origins: [https://app.example]\n');
  t.after(() => d.stop());
  const hosts = ['[::1].evil.example', 'localhost:evil', '127.0.0.1:7551@evil.example', '-4294967169.0.0.1',
    '127.0.0.1.evil.example', 'localhost.evil.example', '127.1', '127.0.0.256', '0177.0.0.1', '127.0.0.01',
    '127.0.0.1:', '127.0.0.1:123456', 'localhost:80:80', '[::1]:', '[::1]x', '[::2]', 'localhost.'];
  const wrong = [];
  for (const host of hosts) {
    const r = await d.get('/healthz', { headers: { host } });
    if (r.status !== 403 || r.json?.error?.code !== 'forbidden_host') wrong.push(`Host ${JSON.stringify(host)}: ${r.status}`);
  }
  for (const origin of ['http://localhost:evil', 'http://127.0.0.1:7551@evil.example', 'http://[::1].evil.example',
    'http://-4294967169.0.0.1', 'http://127.0.0.1.evil.example', 'null', 'http://localhost/']) {
    const r = await d.get('/healthz', { headers: { origin } });
    if (r.status !== 403 || r.json?.error?.code !== 'forbidden_origin') wrong.push(`Origin ${origin}: ${r.status}`);
  }
  for (const host of ['localhost:7420', 'LOCALHOST', '127.0.0.1', '127.255.255.254:65535', '[::1]:7420', '[::1]']) {
    const r = await d.get('/healthz', { headers: { host } });
    if (r.status !== 200) wrong.push(`Host ${host}: ${r.status}, wanted 200`);
  }
  for (const origin of [`http://localhost:${d.port}`, `http://127.0.0.1:${d.port}`, `http://[::1]:${d.port}`, 'https://app.example']) {
    const r = await d.get('/healthz', { headers: { origin } });
    if (r.status !== 200) wrong.push(`Origin ${origin}: ${r.status}, wanted 200`);
  }
  const empty = await exchangeOpen(d, 'GET /healthz HTTP/1.1\r\nHost: \r\n\r\n', 1000);
  if (!/^HTTP\/1\.1 403 /.test(empty.out)) wrong.push(`Host "": ${empty.out.split('\r\n')[0]}`);
  assert.deepEqual(wrong, []);
});

test('limits: 431, 413, 408 and malformed requests', async (t) => {
  const d = await start('version: 1\ngateway:\n  header_timeout: 300ms\n  max_body: 1MiB\n');
  t.after(() => d.stop());
  const big = 'x'.repeat(20 * 1024);
  let out = await d.raw(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${big}\r\n\r\n`);
  assert.match(out, /^HTTP\/1\.1 431 /);
  out = await d.raw(`POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${9 * 1024 * 1024}\r\n\r\n`, { keepOpen: true, timeoutMs: 3000 });
  assert.match(out, /^HTTP\/1\.1 413 /);
  const chunk = 'a'.repeat(512 * 1024);
  const chunked = `POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n` +
    `${(chunk.length).toString(16)}\r\n${chunk}\r\n`.repeat(3) + '0\r\n\r\n';
  out = await d.raw(chunked);
  assert.match(out, /^HTTP\/1\.1 413 /);
  out = await d.raw('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n', { keepOpen: true, timeoutMs: 3000 });
  assert.match(out, /^HTTP\/1\.1 408 /);
  out = await d.raw('POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n');
  assert.match(out, /^HTTP\/1\.1 400 /);
  out = await d.raw('GARBAGE\r\n\r\n');
  assert.match(out, /^HTTP\/1\.1 400 /);
  out = await d.raw('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\r\n folded\r\n\r\n');
  assert.match(out, /^HTTP\/1\.1 400 /);
  out = await d.raw('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n: no-name\r\n\r\n');
  assert.match(out, /^HTTP\/1\.1 400 /, 'a header with no name (found by fuzz_http)');
  // The daemon is still healthy after all of that.
  assert.equal((await d.get('/healthz')).status, 200);
});

// Sends `bytes` and leaves our side open: resolves what the daemon sent and
// whether it closed the connection itself within `ms`.
function exchangeOpen(d, bytes, ms = 3000) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: d.host, port: d.port });
    let data = Buffer.alloc(0);
    const finish = (closed) => { clearTimeout(timer); sock.destroy(); resolve({ out: data.toString('latin1'), closed }); };
    const timer = setTimeout(() => finish(false), ms);
    sock.on('connect', () => sock.write(bytes));
    sock.on('data', (b) => { data = Buffer.concat([data, b]); });
    sock.on('end', () => finish(true));
    sock.on('error', (e) => { if (data.length) finish(true); else { clearTimeout(timer); reject(e); } });
  });
}

test('framing: the bytes after a CR and after chunk data are checked (400, close)', async (t) => {
  const d = await start('version: 1\n');
  t.after(() => d.stop());
  const chunked = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n';
  const vectors = {
    'two bytes instead of CRLF after chunk data': `${chunked}5\r\nhelloXY0\r\n\r\n`,
    'LF LF after chunk data': `${chunked}5\r\nhello\n\n0\r\n\r\n`,
    '15\\rX as the chunk-size line': `${chunked}15\rX${'a'.repeat(21)}\r\n0\r\n\r\n`,
    '0\\rX\\rX as the last chunk': `${chunked}1\r\na\r\n0\rX\rX`,
    'headers ending \\r\\n\\rX': 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\rX',
    'an empty header value ending \\rX': 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A:\rX\r\n\r\n',
  };
  const wrong = [];
  for (const [name, bytes] of Object.entries(vectors)) {
    const { out, closed } = await exchangeOpen(d, bytes);
    if (!/^HTTP\/1\.1 400 /.test(out) || !closed) wrong.push(`${name}: ${out.split('\r\n')[0] || 'no answer'}, ${closed ? 'closed' : 'kept open'}`);
  }
  assert.deepEqual(wrong, []);
  // Well-formed chunked requests with extensions and trailers still pass.
  const { out } = await exchangeOpen(d, `${chunked}5;c="d e"\r\nhello\r\n0\r\nX-T: 1\r\n\r\n`, 1000);
  assert.match(out, /^HTTP\/1\.1 200 /);
});

test('more than one Host: 400 and close, whichever comes first', async (t) => {
  const d = await start('version: 1\n');
  t.after(() => d.stop());
  for (const pair of [['127.0.0.1', 'evil.example'], ['evil.example', '127.0.0.1'], ['127.0.0.1', '127.0.0.1']]) {
    const { out, closed } = await exchangeOpen(d, `GET /healthz HTTP/1.1\r\nHost: ${pair[0]}\r\nHost: ${pair[1]}\r\n\r\n`);
    assert.match(out, /^HTTP\/1\.1 400 /, pair.join(' then '));
    assert.ok(closed, 'the connection is closed');
  }
});

test('a field that decides who may do what, sent twice: 400 naming it, and close', async (t) => {
  const d = await start('version: 1\n');
  t.after(() => d.stop());
  const fields = [['Origin', 'http://127.0.0.1', 'http://evil.example'], ['Authorization', 'Bearer a', 'Bearer b'],
    ['Mcp-Session-Id', 'a', 'b'], ['X-Mcpgw-Dialog', 'one', 'two'], ['MCP-Protocol-Version', '2025-11-25', '2025-11-25'],
    ['Mcp-Method', 'tools/call', 'tools/list'], ['Mcp-Name', 'a', 'b'], ['Content-Type', 'application/json', 'text/plain']];
  for (const [name, a, b] of fields) {
    const { out, closed } = await exchangeOpen(d, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n${name}: ${a}\r\n${name}: ${b}\r\n\r\n`);
    assert.match(out, /^HTTP\/1\.1 400 /, name);
    assert.match(out, new RegExp(`more than one ${name.toLowerCase()} header`), name);
    assert.ok(closed, `${name}: the connection is closed`);
  }
  // A list-valued field may repeat.
  const { out } = await exchangeOpen(d, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: a/b\r\nAccept: */*\r\n\r\n', 1000);
  assert.match(out, /^HTTP\/1\.1 200 /);
});

test('chunk extensions and trailers count toward max_header_bytes (413, close)', async (t) => {
  const d = await start('version: 1\n');
  t.after(() => d.stop());
  const head = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n';
  // a 21-byte body carried by a 20 MiB chunk extension
  let r = await exchangeOpen(d, Buffer.from(`${head}15;x=${'e'.repeat(20 << 20)}\r\n${'a'.repeat(21)}\r\n0\r\n\r\n`), 5000);
  assert.match(r.out, /^HTTP\/1\.1 413 /);
  assert.ok(r.closed, 'the connection is closed');
  r = await exchangeOpen(d, `${head}1\r\na\r\n0\r\nX-T: ${'t'.repeat(20 * 1024)}\r\n\r\n`);
  assert.match(r.out, /^HTTP\/1\.1 413 /);
  assert.ok(r.closed, 'the connection is closed');
  r = await exchangeOpen(d, `${head}${'0'.repeat(64 * 1024)}5\r\nhello\r\n0\r\n\r\n`);
  assert.match(r.out, /^HTTP\/1\.1 413 /);
  assert.ok(r.closed, 'the connection is closed');
  r = await exchangeOpen(d, `${head}5;x=${'e'.repeat(8 * 1024)}\r\nhello\r\n0\r\n\r\n`, 1000);
  assert.match(r.out, /^HTTP\/1\.1 200 /);
});

test('keep-alive and pipelining answer in order', async (t) => {
  const d = await start('version: 1\n');
  t.after(() => d.stop());
  const req = (p) => `GET ${p} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
  const out = await d.raw(req('/healthz') + req('/nope') + req('/readyz'), { keepOpen: true, timeoutMs: 1500 });
  const statuses = [...out.matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => m[1]);
  assert.deepEqual(statuses, ['200', '404', '200']);
});

test('connection cap: beyond max_connections gets 503', async (t) => {
  const d = await start('version: 1\ngateway:\n  max_connections: 4\n');
  t.after(() => d.stop());
  const net = await import('node:net');
  const socks = [];
  for (let i = 0; i < 4; i++) {
    const s = net.connect({ host: d.host, port: d.port });
    await new Promise((r) => s.on('connect', r));
    socks.push(s);
  }
  await sleep(100);
  const out = await rawExchange({ host: d.host, port: d.port }, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 3000);
  assert.match(out, /^HTTP\/1\.1 503 /);
  for (const s of socks) s.destroy();
  await waitFor(async () => (await d.get('/healthz')).status === 200);
});

test('unix socket listener with mode 0660', async (t) => {
  const dir = tmpdir();
  const sock = path.join(dir, 'gw.sock');
  const d = await start('version: 1\n', { listen: `unix:${sock}` });
  t.after(() => d.stop());
  const st = fs.statSync(sock);
  assert.ok(st.isSocket());
  assert.equal(st.mode & 0o777, 0o660);
  const r = await request({ socketPath: sock, method: 'GET', path: '/healthz' });
  assert.equal(r.status, 200);
  await d.stop();
  assert.ok(!fs.existsSync(sock), 'socket file removed on stop');
});

test('SIGTERM and SIGINT stop with exit 0', async (t) => {
  for (const sig of ['SIGTERM', 'SIGINT']) {
    const d = await start('version: 1\n');
    t.after(() => d.stop());
    const r = await d.stop(sig);
    assert.equal(r.code, 0, `${sig}: ${d.stderr}`);
  }
});

test('SIGHUP reloads; a broken file keeps the last known good config', async (t) => {
  const d = await start(`version: 1\nservers:\n  a:\n    command: ${FIXTURE}\n`);
  t.after(() => d.stop());
  fs.writeFileSync(d.configPath, `version: 1\nservers:\n  a:\n    command: ${FIXTURE}\n  b:\n    command: ${FIXTURE}\n    transform: [{prefix: b_}]\n`);
  d.child.kill('SIGHUP');
  await waitFor(async () => (await d.get('/v1/servers')).json.servers.length === 2);
  fs.writeFileSync(d.configPath, 'version: 1\nservers: [oops\n');
  d.child.kill('SIGHUP');
  await waitFor(async () => (await d.get('/v1/problems')).json.problems.some((p) => p.scope === 'workspace' && p.severity === 'error'));
  const s = await d.get('/v1/servers');
  assert.deepEqual(s.json.servers.map((x) => x.id), ['a', 'b']);
});

test('a FIFO at the config path is refused at once: the daemon keeps answering and its last good config', async (t) => {
  const { spawnSync } = await import('node:child_process');
  const d = await start(`version: 1\nservers:\n  a:\n    command: ${FIXTURE}\n`, { waitReady: true });
  t.after(() => d.stop());
  fs.unlinkSync(d.configPath);
  assert.equal(spawnSync('mkfifo', [d.configPath]).status, 0);
  d.child.kill('SIGHUP');
  const problem = await waitFor(async () => (await d.get('/v1/problems', { timeoutMs: 2000 })).json.problems
    .find((p) => p.scope === 'workspace' && p.severity === 'error' && /FIFO/.test(p.message)));
  assert.ok(problem.message.includes(d.configPath), problem.message);
  assert.equal((await d.get('/healthz', { timeoutMs: 2000 })).status, 200);
  assert.deepEqual((await d.get('/v1/servers')).json.servers.map((x) => x.id), ['a']);
  // Back to a regular file: reloads work again.
  fs.unlinkSync(d.configPath);
  fs.writeFileSync(d.configPath, `version: 1\nservers:\n  a:\n    command: ${FIXTURE}\n  b:\n    command: ${FIXTURE}\n    transform: [{prefix: b_}]\n`);
  d.child.kill('SIGHUP');
  await waitFor(async () => (await d.get('/v1/servers')).json.servers.length === 2);
});

test('--check-config refuses a FIFO at once, naming the file', async () => {
  const { spawnSync } = await import('node:child_process');
  const file = path.join(tmpdir(), 'mcp.yaml');
  assert.equal(spawnSync('mkfifo', [file]).status, 0);
  const r = await run(['--check-config', '-c', file], { timeoutMs: 10000 });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /error: cannot read the config file '[^']+': it is a FIFO, not a regular file/);
  assert.ok(r.stderr.includes(file), r.stderr);
});
