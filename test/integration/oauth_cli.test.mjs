// `mcpgw auth` (docs/operations.md, "Servers that need OAuth"): the CLI
// talks to a running daemon over its API. With the fixture's protected MCP
// server and authorization server (test/fixtures/oauth_server.mjs): status
// before and after; login prints the authorization server's URL, a
// "browser" follows it to mcpgw's callback and the CLI exits 0 once the
// server is authorized; --paste hands over the URL a browser ended on
// (the redirect_uri points at a host nobody serves, as for a browser on
// another machine); logout puts the server back to needs_authorization.
// The daemon is found through the configuration (-c: gateway.listen,
// gateway.auth_token) or --gateway with $MCPGW_TOKEN; a daemon that is not
// running, an unknown server, a wrong token and bad arguments each give a
// clear error and a non-zero exit. No token reaches the CLI's output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { bin, start, waitFor, root, tmpdir, slow, track, run } from './lib/harness.mjs';
import { oauthServer, browse, get } from './lib/oauth.mjs';

const TOKEN = 'cli-test-token-5e2f';

// A loopback port nobody listens on (taken from the kernel, then let go).
function closedPort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// The CLI, running: `line(re)` waits for a stdout line matching `re`,
// `exit` resolves {code, stdout, stderr}; `input` is written to stdin.
function cli(args, { env = {}, input } = {}) {
  const child = track(spawn(bin, args, { env: { ...process.env, MCPGW_TOKEN: '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] }));
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (b) => { out.stdout += b; });
  child.stderr.on('data', (b) => { out.stderr += b; });
  if (input !== undefined) child.stdin.end(input);
  const timer = setTimeout(() => child.kill('SIGKILL'), 60000 * slow);
  const exit = new Promise((resolve) => child.on('exit', (code, signal) => {
    clearTimeout(timer);
    resolve({ code, signal, ...out });
  }));
  const line = (re) => waitFor(() => out.stdout.split('\n').find((l) => re.test(l)), 20000 * slow);
  return { child, exit, line, out, write: (s) => child.stdin.end(s) };
}

const server = async (d) => (await d.get('/v1/servers', { headers: { authorization: `Bearer ${TOKEN}` } }))
  .json.servers.find((s) => s.id === 'secured');

const yaml = (listen, url, extra = '') =>
  `version: 1\ngateway:\n  listen: ${listen}\n  auth_token: {env: GW_TOKEN}\n${extra}servers:\n` +
  `  secured:\n    transport: streamable_http\n    url: ${url}\n  plain:\n    command: ${path.join(root, 'build/fixtures/mcp_fixture')}\n`;

test('auth status, login through a browser, logout; the daemon found through -c', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  const state = tmpdir();
  const listen = `127.0.0.1:${await closedPort()}`;
  const env = { XDG_STATE_HOME: state, STATE_DIRECTORY: '', GW_TOKEN: TOKEN };
  const d = await start(yaml(listen, as.url), { env, listen: null });
  t.after(() => d.stop());
  const c = ['-c', d.configPath];
  await waitFor(async () => (await server(d)).state === 'needs_authorization');

  // Before: waiting, no grant; the stdio server is not an OAuth one.
  const before = await run([...c, 'auth', 'status'], { env });
  assert.equal(before.code, 0, before.stderr);
  assert.match(before.stdout, /^SERVER\s+STATE\s+ISSUER\s+SCOPES\s+EXPIRES\s+REFRESHABLE$/m);
  assert.match(before.stdout, /^secured\s+needs_authorization\s+-\s+-\s+-\s+-$/m);
  assert.doesNotMatch(before.stdout, /^plain\b/m);

  // Login: the URL is the authorization server's; the browser follows it
  // to mcpgw's callback; the CLI sees the grant and exits 0.
  const login = cli([...c, 'auth', 'login', 'secured'], { env });
  const url = await login.line(/^http/);
  assert.ok(url.startsWith(`${as.url.replace(/\/mcp$/, '')}/authorize?`), url);
  assert.equal(new URL(url).searchParams.get('redirect_uri'), `http://${listen}/oauth/callback`);
  const page = await browse(url);
  assert.equal(page.status, 200, page.body);
  assert.match(page.body, /secured is authorized/);
  const done = await login.exit;
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stdout, /^secured is authorized/m);
  await waitFor(async () => (await server(d)).state === 'ready');

  // After: the grant's issuer, scopes, expiry, refreshable; never a token.
  const after = await run([...c, 'auth', 'status'], { env });
  assert.equal(after.code, 0, after.stderr);
  const row = after.stdout.split('\n').find((l) => l.startsWith('secured'));
  const g = (await server(d)).grant;
  assert.match(row, new RegExp(`^secured\\s+ready\\s+${g.issuer.replace(/[.]/g, '\\.')}\\s+\\S+\\s+\\S+\\s+yes$`));
  assert.ok(g.expiresAt && row.includes(g.expiresAt), row);
  const dir = path.join(state, 'mcpgw/oauth');
  const grant = JSON.parse(fs.readFileSync(path.join(dir, fs.readdirSync(dir).find((f) => f.startsWith('grant-'))), 'utf8'));
  for (const out of [after.stdout + after.stderr, done.stdout + done.stderr])
    for (const secret of [grant.access_token, grant.refresh_token]) assert.ok(!out.includes(secret), 'a token reached the CLI output');

  // Login again: nothing to do.
  const again = await run([...c, 'auth', 'login', 'secured'], { env });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /secured is already authorized/);

  // Logout: the grant is forgotten, the server waits again.
  const out = await run([...c, 'auth', 'logout', 'secured'], { env });
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /secured: the grant is forgotten/);
  assert.equal((await server(d)).state, 'needs_authorization');
  assert.equal((await server(d)).grant, undefined);
  const last = await run([...c, 'auth', 'status'], { env });
  assert.match(last.stdout, /^secured\s+needs_authorization\s+-\s+-\s+-\s+-$/m);

  // Nobody opens the URL: the wait ends with a clear message.
  const late = await run([...c, 'auth', 'login', 'secured', '--timeout', '1'], { env });
  assert.equal(late.code, 1);
  assert.match(late.stdout, /^http:\/\/127\.0\.0\.1:\d+\/authorize\?/m);
  assert.match(late.stderr, /^mcpgw: secured is still not authorized after 1 s; gave up waiting/m);

  // The person refuses at the authorization server, which sends the browser
  // back with an error: the waiting CLI says why at once and exits 1.
  const denied = cli([...c, 'auth', 'login', 'secured'], { env });
  const asked = new URL(await denied.line(/^http/));
  const back = new URL(asked.searchParams.get('redirect_uri'));
  back.searchParams.set('error', 'access_denied');
  back.searchParams.set('state', asked.searchParams.get('state'));
  back.searchParams.set('iss', as.url.replace(/\/mcp$/, ''));
  const refusal = await browse(back.toString());
  assert.equal(refusal.status, 400, refusal.body);
  const gone = await denied.exit;
  assert.equal(gone.code, 1, gone.stderr);
  assert.match(gone.stderr, /^mcpgw: secured is not authorized: the last authorization did not succeed \(.*access_denied.*\); the server requires authorization: open http:\/\/127\.0\.0\.1:\d+\/v1\/servers\/secured\/authorize/m);
  assert.equal((await server(d)).state, 'needs_authorization');
  assert.match((await server(d)).lastError, /did not succeed/);

  // An unknown server; a server without OAuth.
  for (const cmd of ['login', 'logout']) {
    const r = await run([...c, 'auth', cmd, 'nosuch'], { env });
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`^mcpgw: the daemon at http://${listen} has no server 'nosuch'$`, 'm'));
  }
  const plain = await run([...c, 'auth', 'login', 'plain'], { env });
  assert.equal(plain.code, 1);
  assert.match(plain.stderr, /^mcpgw: cannot authorize plain: no such server, or not an HTTP server that has started \(404 not_found\)$/m);

  // --gateway with $MCPGW_TOKEN; a wrong token is named as such.
  const g1 = await run(['auth', 'status', '--gateway', `http://${listen}/`], { env: { MCPGW_TOKEN: TOKEN } });
  assert.equal(g1.code, 0, g1.stderr);
  assert.match(g1.stdout, /^secured\s+needs_authorization/m);
  const g2 = await run(['auth', 'status', '--gateway', `http://${listen}`], { env: { MCPGW_TOKEN: 'wrong' } });
  assert.equal(g2.code, 1);
  assert.match(g2.stderr, /the daemon at http:\/\/127\.0\.0\.1:\d+ refused the token \(401\)/);
});

test('auth login --paste: the URL the browser ended on, read from stdin', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  const nowhere = `http://127.0.0.1:${await closedPort()}/oauth/callback`;
  const env = { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '', GW_TOKEN: TOKEN };
  const extra = `  oauth:\n    redirect_uri: ${nowhere}\n`;
  const d = await start(yaml(`127.0.0.1:${await closedPort()}`, as.url, extra), { env, listen: null });
  t.after(() => d.stop());
  const gw = ['--gateway', `http://${d.addr}`];
  await waitFor(async () => (await server(d)).state === 'needs_authorization');

  // A pasted address that is not the answer to this flow is refused.
  const bad = cli(['auth', 'login', 'secured', '--paste', ...gw], { env: { MCPGW_TOKEN: TOKEN } });
  await bad.line(/^http/);
  bad.write(`${nowhere}?code=forged&state=forged\n`);
  const refused = await bad.exit;
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^mcpgw: secured is not authorized: This authorization response is unknown, expired or already used.*\(400 unknown_state\)$/m);
  assert.equal((await server(d)).state, 'needs_authorization');

  // The browser ends on the unreachable redirect_uri; its address, pasted,
  // authorizes the server.
  const login = cli(['auth', 'login', '--paste', 'secured', ...gw], { env: { MCPGW_TOKEN: TOKEN } });
  const url = await login.line(/^http/);
  const ended = await browse(url, (u) => u.startsWith(nowhere));
  assert.ok(ended.url.startsWith(`${nowhere}?code=`), ended.url);
  login.write(`${ended.url}\n`);
  const done = await login.exit;
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stdout, /^secured is authorized$/m);
  await waitFor(async () => (await server(d)).state === 'ready');
  assert.equal((await server(d)).grant.refreshable, true);
});

test('no daemon, bad arguments: a clear error and a non-zero exit', async () => {
  const port = await closedPort();
  const none = await run(['auth', 'status', '--gateway', `http://127.0.0.1:${port}`]);
  assert.equal(none.code, 1);
  assert.equal(none.stderr, `mcpgw: cannot reach the daemon at http://127.0.0.1:${port}: connection refused\n`);
  const login = await run(['auth', 'login', 'x', '--gateway', `http://127.0.0.1:${port}`]);
  assert.equal(login.code, 1);
  assert.match(login.stderr, /cannot reach the daemon at .*: connection refused/);
  const sock = path.join(tmpdir(), 'none.sock');
  const unix = await run(['auth', 'status', '--gateway', `unix:${sock}`]);
  assert.equal(unix.code, 1);
  assert.equal(unix.stderr, `mcpgw: cannot reach the daemon at unix:${sock}: no such file or directory\n`);
  // The configuration's gateway.listen is where the CLI looks.
  const dir = tmpdir();
  fs.writeFileSync(path.join(dir, 'mcp.yaml'), `version: 1\ngateway:\n  listen: 127.0.0.1:${port}\n`);
  const viaConfig = await run(['-c', path.join(dir, 'mcp.yaml'), 'auth', 'status']);
  assert.equal(viaConfig.stderr, `mcpgw: cannot reach the daemon at http://127.0.0.1:${port}: connection refused\n`);

  for (const [args, re] of [
    [['auth'], /^mcpgw: auth: login, status or logout\?$/m],
    [['auth', 'frobnicate'], /^mcpgw: auth: unknown command 'frobnicate'$/m],
    [['auth', 'login'], /^mcpgw: auth login takes one server ID$/m],
    [['auth', 'status', 'extra'], /^mcpgw: auth status takes no argument$/m],
    [['auth', 'logout', 'x', '--paste'], /^mcpgw: --paste goes with auth login$/m],
    [['auth', 'login', 'x', '--timeout', 'soon'], /^mcpgw: --timeout takes a number of seconds, not 'soon'$/m],
    [['auth', 'status', '--gateway', 'example.org'], /^mcpgw: --gateway must be http:\/\/HOST:PORT/m],
  ]) {
    const r = await run(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re, args.join(' '));
  }
  const help = await run(['--help']);
  assert.match(help.stdout, /mcpgw auth login\|status\|logout/);
  const authHelp = await run(['auth', '--help']);
  assert.equal(authHelp.code, 0);
  assert.match(authHelp.stdout, /--paste/);
});

test('client_secret: {file: …}, as systemd\'s LoadCredential= hands it over: read at load, never shown', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  const creds = tmpdir();
  fs.writeFileSync(path.join(creds, 'client-secret'), 'cc-secret\n', { mode: 0o600 });
  const cc = `version: 1\nservers:\n  secured:\n    transport: streamable_http\n    url: ${as.url}\n`
    + '    oauth:\n      client_id: cc-client\n      client_secret:\n        file: ${CREDENTIALS_DIRECTORY}/client-secret\n'
    + '      grant: client_credentials\n';
  const d = await start(cc, { env: { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '', CREDENTIALS_DIRECTORY: creds } });
  t.after(() => d.stop());
  await waitFor(async () => (await d.get('/v1/tools')).json.tools.some((x) => x.name === 'whoami'), 20000 * slow);
  assert.match((await d.post('/v1/tools/whoami/call', { dialog: 'd1', arguments: {} })).body, /called by cc-client/);
  const s = (await d.get('/v1/servers')).json.servers.find((x) => x.id === 'secured');
  assert.equal(s.config.oauth.client_secret, '***');
  assert.ok(!d.stderr.includes('cc-secret'));

  // A file that is missing, holds more than one line or is a FIFO: the key's error,
  // naming the path, never the text.
  fs.writeFileSync(path.join(creds, 'two'), 'line-one-secret\nline-two\n');
  const check = () => run(['--check-config', '-c', path.join(creds, 'bad.yaml')], { env: { CREDENTIALS_DIRECTORY: creds } })
    .then((r) => { assert.equal(r.code, 1); return r.stderr; });
  fs.writeFileSync(path.join(creds, 'bad.yaml'), cc.replace('/client-secret', '/nosuch'));
  assert.match(await check(), /'servers\.secured\.oauth\.client_secret': the file '.*\/nosuch' cannot be used: No such file or directory/);
  fs.writeFileSync(path.join(creds, 'bad.yaml'), cc.replace('/client-secret', '/two'));
  const two = await check();
  assert.match(two, /the file '.*\/two' cannot be used: more than one line/);
  assert.ok(!two.includes('line-one-secret'));
  // A FIFO would block the loader (and a reload): refused unopened.
  execFileSync('mkfifo', [path.join(creds, 'fifo')]);
  fs.writeFileSync(path.join(creds, 'bad.yaml'), cc.replace('/client-secret', '/fifo'));
  assert.match(await check(), /the file '.*\/fifo' cannot be used: not a regular file/);
});
