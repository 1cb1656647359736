// `mcpgw auth` (docs/operations.md, "OAuth"): the CLI talks to the running
// daemon over its API. `status` lists each OAuth server's state and grant
// (never a token); `login` prints the authorization server's URL and waits
// until a browser (here: a driver following the redirects to mcpgw's
// callback) has authorized the server; `login --paste` hands over the URL
// the browser ended on when the callback is unreachable from it; `logout`
// forgets the grant. The daemon is found through the configuration's
// gateway.listen and its gateway.auth_token, or --gateway and
// $MCPGW_TOKEN; an unreachable daemon and an unknown server are clear
// errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { start, run, waitFor, tmpdir, track, bin, slow } from './lib/harness.mjs';
import { oauthServer, browse } from './lib/oauth_fixture.mjs';

const TOKEN = 'cli-test-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
const yaml = (url, extra = '') => `version: 1\ngateway:\n  auth_token: {env: GW_TOKEN}\n${extra}servers:\n`
  + `  secured:\n    transport: streamable_http\n    url: ${url}\n`;
const daemonEnv = () => ({ XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '', GW_TOKEN: TOKEN });
const server = async (d) => (await d.get('/v1/servers', { headers: auth })).json.servers.find((s) => s.id === 'secured');

// `mcpgw auth …` started, its stdout read line by line: resolves
// {child, line() (the next stdout line), done (resolves {code, stdout, stderr})}.
function cli(args, env = {}) {
  const child = track(spawn(bin, ['auth', ...args], { env: { ...process.env, ...env } }));
  let stdout = '', stderr = '', waiting = null;
  child.stdout.on('data', (b) => { stdout += b; if (waiting) waiting(); });
  child.stderr.on('data', (b) => { stderr += b; });
  const done = new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
  const line = async () => {
    while (!stdout.includes('\n')) {
      if (child.exitCode !== null) throw new Error(`the CLI ended: ${stderr}`);
      await new Promise((r) => { waiting = r; setTimeout(r, 200); });
    }
    return stdout.slice(0, stdout.indexOf('\n'));
  };
  return { child, line, done };
}

// A loopback port nothing listens on.
async function closedPort() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

test('auth status, login through the browser, logout; the daemon found through the config', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  const env = daemonEnv();
  const d = await start(yaml(as.url), { env });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'needs_authorization');

  // The CLI's configuration: the daemon's address and token, as an
  // operator's mcp.yaml with gateway.listen would have them.
  const cfg = path.join(tmpdir(), 'mcp.yaml');
  fs.writeFileSync(cfg, `version: 1\ngateway:\n  listen: ${d.addr}\n  auth_token: {env: GW_TOKEN}\nservers: {}\n`);
  const cliEnv = { GW_TOKEN: TOKEN };

  const before = await run(['auth', 'status', '-c', cfg], { env: cliEnv });
  assert.equal(before.code, 0, before.stderr);
  assert.match(before.stdout, /^SERVER\s+STATE\s+ISSUER\s+SCOPES\s+EXPIRES\s+REFRESHABLE$/m);
  assert.match(before.stdout, /^secured\s+needs_authorization\s+-\s+-\s+-\s+-$/m);

  // login prints the authorization server's URL and waits; the browser
  // follows it to mcpgw's callback; the CLI says so and ends with 0.
  const login = cli(['login', 'secured', '-c', cfg], cliEnv);
  const url = await login.line();
  assert.ok(url.startsWith(new URL(as.url).origin + '/'), url);
  assert.equal(new URL(url).searchParams.get('redirect_uri'), `http://${d.addr}/oauth/callback`);
  const page = await browse(url);
  assert.equal(page.status, 200, page.body);
  assert.match(page.body, /secured is authorized/);
  const out = await login.done;
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /^secured is authorized/m);
  assert.match(out.stderr, /Open this address in a browser to authorize secured/);

  // status shows the grant, never a token.
  await waitFor(async () => (await server(d)).state === 'ready', 20000 * slow);
  const after = await run(['auth', 'status', '-c', cfg], { env: cliEnv });
  assert.equal(after.code, 0, after.stderr);
  const issuer = new URL(as.url).origin;
  const row = after.stdout.split('\n').find((l) => l.startsWith('secured '));
  assert.match(row, new RegExp(`^secured\\s+ready\\s+${issuer.replace(/[.]/g, '\\.')}/?\\s+\\S+\\s+\\d{4}-\\d\\d-\\d\\dT\\S+\\s+yes$`), row);
  const dir = path.join(env.XDG_STATE_HOME, 'mcpgw/oauth');
  const grant = JSON.parse(fs.readFileSync(path.join(dir, fs.readdirSync(dir).find((f) => f.startsWith('grant-'))), 'utf8'));
  for (const secret of [grant.access_token, grant.refresh_token, TOKEN])
    assert.ok(!(after.stdout + after.stderr + out.stdout + out.stderr).includes(secret), 'a secret reached the CLI output');

  // A second login has nothing to do.
  const again = await run(['auth', 'login', 'secured', '-c', cfg], { env: cliEnv });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /secured is already authorized/);

  // logout forgets the grant: the server waits for authorization again.
  const logout = await run(['auth', 'logout', 'secured', '-c', cfg], { env: cliEnv });
  assert.equal(logout.code, 0, logout.stderr);
  assert.match(logout.stdout, /secured: the grant is forgotten/);
  assert.equal((await server(d)).state, 'needs_authorization');
  assert.equal((await server(d)).grant, undefined);
  assert.deepEqual(fs.readdirSync(dir).filter((f) => f.startsWith('grant-')), []);
  await waitFor(() => as.events.some((e) => e.event === 'revoke'));

  // An unknown server is a clear error, for each command that takes one.
  for (const cmd of ['login', 'logout']) {
    const r = await run(['auth', cmd, 'nosuch', '-c', cfg], { env: cliEnv });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr, `mcpgw: the daemon at http://${d.addr} has no server 'nosuch'\n`);
  }

  // --gateway and $MCPGW_TOKEN instead of a configuration; a wrong token
  // says which settings give the right one.
  const gw = ['--gateway', `http://${d.addr}/`, '-c', path.join(tmpdir(), 'absent.yaml')];
  const byEnv = await run(['auth', 'status', ...gw], { env: { MCPGW_TOKEN: TOKEN } });
  assert.equal(byEnv.code, 0, byEnv.stderr);
  assert.match(byEnv.stdout, /^secured\s+needs_authorization\s/m);
  const wrong = await run(['auth', 'status', ...gw], { env: { MCPGW_TOKEN: 'wrong' } });
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /refused the token \(401\): give it with the configuration's gateway\.auth_token \(-c FILE\) or \$MCPGW_TOKEN/);
});

test('auth login --paste: the browser cannot reach the callback; the URL it ended on is pasted', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  // The callback the authorization server sends the browser to is on no
  // machine the browser reaches.
  const unreachable = `http://127.0.0.1:${await closedPort()}`;
  const d = await start(yaml(as.url, `  oauth:\n    redirect_uri: ${unreachable}/oauth/callback\n`), { env: daemonEnv() });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  const gw = ['--gateway', `http://${d.addr}`];

  // A URL that is not the answer: the daemon's Problem, non-zero.
  const bad = cli(['login', 'secured', '--paste', ...gw], { MCPGW_TOKEN: TOKEN });
  await bad.line();
  bad.child.stdin.end(`${unreachable}/oauth/callback?code=x&state=forged\n`);
  const refused = await bad.done;
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /secured is not authorized: This authorization response is unknown, expired or already used.*\(400 unknown_state\)/);

  const login = cli(['login', 'secured', '--paste', ...gw], { MCPGW_TOKEN: TOKEN });
  const url = await login.line();
  const ended = await browse(url, { stopAt: unreachable });
  assert.match(ended.url, /\/oauth\/callback\?code=/);
  login.child.stdin.end(`${ended.url}\n`);
  const out = await login.done;
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /^secured is authorized$/m);
  assert.match(out.stderr, /paste here the address the browser ended on/);
  await waitFor(async () => (await server(d)).state === 'ready', 20000 * slow);
});

test('auth: no daemon, bad arguments: clear errors, non-zero', async () => {
  const port = await closedPort();
  const r = await run(['auth', 'status', '--gateway', `http://127.0.0.1:${port}`]);
  assert.equal(r.code, 1);
  assert.equal(r.stderr, `mcpgw: cannot reach the daemon at http://127.0.0.1:${port}: connection refused\n`);
  const login = await run(['auth', 'login', 'x', '--gateway', `http://127.0.0.1:${port}`]);
  assert.equal(login.code, 1);
  assert.match(login.stderr, /cannot reach the daemon/);

  for (const [args, why] of [
    [[], /mcpgw: auth: login, status or logout\?/],
    [['frob'], /mcpgw: auth: unknown command 'frob'/],
    [['login'], /mcpgw: auth login takes one server ID/],
    [['status', 'x'], /mcpgw: auth status takes no argument/],
    [['status', '--paste'], /mcpgw: --paste goes with auth login/],
    [['login', 'x', '--timeout', 'soon'], /mcpgw: --timeout takes a number of seconds, not 'soon'/],
    [['status', '--gateway', 'ftp://x'], /mcpgw: --gateway must be http:\/\/HOST:PORT/],
  ]) {
    const b = await run(['auth', ...args]);
    assert.equal(b.code, 2, `${args}: ${b.stderr}`);
    assert.match(b.stderr, why);
  }
  const help = await run(['--help']);
  assert.match(help.stdout, /mcpgw auth login\|status\|logout/);
});
