// `npx -y` in a sandbox whose network is [registry] (docs/config.md
// "Network lists"): on its first start npm installs the package through the
// daemon's proxy from the registry npm is configured with, here a registry
// of the test's own on loopback that serves one package built from
// test/fixtures/npx_pkg. Nothing leaves the machine, and nothing of the
// user's npm (~/.npmrc, ~/.npm, npm_config_* of the shell) is read: the
// daemon runs with a HOME of its own and without them, and npm inside the
// sandbox has the sandbox's home.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { start, waitFor, root, slow, fixtures } from './lib/harness.mjs';

const PKG_DIR = path.join(root, 'test/fixtures/npx_pkg');
const PKG = JSON.parse(fs.readFileSync(path.join(PKG_DIR, 'package.json'), 'utf8'));

const bwrap = spawnSync('bwrap', ['--unshare-all', '--unshare-user', '--ro-bind', '/', '/', '--', '/bin/true']);
const npx = spawnSync('npx', ['--version']);
const skip = bwrap.status !== 0 ? `bubblewrap cannot make a sandbox here: ${bwrap.error?.message ?? bwrap.stderr}`
  : npx.status !== 0 ? `no npx on PATH: ${npx.error?.message ?? npx.stderr}` : false;

// One ustar entry: a 512-byte header, the data padded to 512.
function tarEntry(name, data, mode) {
  const h = Buffer.alloc(512);
  const field = (off, len, s) => h.write(s, off, len, 'latin1');
  const octal = (off, len, n) => field(off, len, n.toString(8).padStart(len - 1, '0') + '\0');
  field(0, 100, name);
  octal(100, 8, mode);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, data.length);
  octal(136, 12, 0);
  h.fill(' ', 148, 156);
  field(156, 1, '0');
  field(257, 8, 'ustar\x0000');
  let sum = 0;
  for (const b of h) sum += b;
  field(148, 8, sum.toString(8).padStart(6, '0') + '\0 ');
  return Buffer.concat([h, data, Buffer.alloc((512 - (data.length % 512)) % 512)]);
}

// The package as `npm pack` lays it out: package/<file>, gzipped.
function tarball() {
  const files = ['package.json', ...PKG.files];
  const entries = files.map((f) => {
    const mode = fs.statSync(path.join(PKG_DIR, f)).mode & 0o111 ? 0o755 : 0o644;
    return tarEntry(`package/${f}`, fs.readFileSync(path.join(PKG_DIR, f)), mode);
  });
  return zlib.gzipSync(Buffer.concat([...entries, Buffer.alloc(1024)]));
}

// A registry of one package: its packument at /<name>, its tarball at
// /<name>/-/<name>-<version>.tgz, 404 for anything else (npm's audit and
// update checks). It keeps every path it was asked.
async function registry(tgz) {
  const seen = [];
  const { name, version } = PKG;
  const tgzPath = `/${name}/-/${name}-${version}.tgz`;
  const server = http.createServer((req, res) => {
    // An absolute-form request line (a proxy's) reaches here in origin-form.
    seen.push(req.url);
    const base = `http://127.0.0.1:${server.address().port}`;
    let body, type = 'application/json';
    if (req.method === 'GET' && req.url === `/${name}`) {
      const integrity = `sha512-${crypto.createHash('sha512').update(tgz).digest('base64')}`;
      const shasum = crypto.createHash('sha1').update(tgz).digest('hex');
      const { files, ...manifest } = PKG;
      body = JSON.stringify({
        name,
        'dist-tags': { latest: version },
        versions: { [version]: { ...manifest, _id: `${name}@${version}`, dist: { tarball: base + tgzPath, integrity, shasum } } },
      });
    } else if (req.method === 'GET' && req.url === tgzPath) {
      body = tgz;
      type = 'application/octet-stream';
    } else {
      res.writeHead(404, { 'content-type': type });
      res.end('{"error":"not found"}');
      return;
    }
    res.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}/`;
  return { url, seen, tgzPath, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

// The daemon's environment: the test's, without the NODE_OPTIONS of the
// test runner (its preload is not inside the sandbox) and without any npm
// setting of the shell, with a HOME of its own.
function daemonEnv(home, stateDir) {
  const env = { HOME: home, STATE_DIRECTORY: stateDir, NODE_OPTIONS: undefined };
  for (const k of Object.keys(process.env)) if (/^npm_/i.test(k)) env[k] = undefined;
  return env;
}

test('npx -y installs on first start through the proxy from npm\'s configured registry; network: none cannot', { skip, timeout: 600000 }, async (t) => {
  const tgz = tarball();
  const reg = await registry(tgz);
  const offline = await registry(tgz);
  t.after(() => reg.close());
  t.after(() => offline.close());
  const dir = fs.mkdtempSync('/tmp/mcpgw-npx-');
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const home = path.join(dir, 'daemon-home');
  const stateDir = path.join(dir, 'state');
  const project = path.join(dir, 'project');
  for (const p of [home, project]) fs.mkdirSync(p);
  // The daemon user's own npmrc names the offline registry: neither npm
  // inside nor the `registry` resolver may take it.
  fs.writeFileSync(path.join(home, '.npmrc'), `registry=${offline.url}\n`);
  // A project's .npmrc, the other way a user names the registry.
  fs.writeFileSync(path.join(project, '.npmrc'), `registry=${reg.url}\n`);

  const d = await start(`version: 1
gateway:
  request_timeout: 120s
servers:
  by-env:
    command: npx
    args: [-y, ${PKG.name}]
    env: {npm_config_registry: "${reg.url}", NPX_TOOL: by_env}
    truely-stateless: true
    sandbox: {network: [registry], home: server}
  by-npmrc:
    command: npx
    args: [-y, ${PKG.name}]
    cwd: ${project}
    env: {NPX_TOOL: by_npmrc}
    truely-stateless: true
    sandbox: {network: [registry], home: server}
  offline:
    command: npx
    args: [-y, ${PKG.name}]
    env: {npm_config_registry: "${offline.url}", npm_config_fetch_retries: "0", NPX_TOOL: offline}
    truely-stateless: true
    sandbox: {network: none, home: server}
`, { env: daemonEnv(home, stateDir), waitReady: true });
  t.after(() => d.stop());

  const servers = async () => (await d.get('/v1/servers')).json.servers;
  const regEntry = reg.url.replace(/^http:\/\/|\/$/g, '');
  for (const id of ['by-env', 'by-npmrc']) {
    // Its first start, or a failed one (npm's error in lastStderr).
    const s = await waitFor(async () => (await servers()).find((x) => x.id === id && (x.state === 'ready' || x.state === 'failed')), 120000 * slow);
    assert.equal(s.state, 'ready', JSON.stringify(s));
    assert.equal(s.sandbox.enforced, true, JSON.stringify(s.sandbox));
    assert.deepEqual(s.sandbox.network, ['registry']);
    assert.equal(s.sandbox.home, 'server');
  }

  // Listed, and callable: the server runs from npx's cache in its home.
  const tools = (await d.get('/v1/tools')).json.tools.map((x) => x.name);
  assert.ok(tools.includes('by_env') && tools.includes('by_npmrc'), JSON.stringify(tools));
  for (const tool of ['by_env', 'by_npmrc']) {
    const r = await d.post(`/v1/tools/${tool}/call`, { arguments: { echo: tool } }, { timeoutMs: 60000 * slow });
    assert.equal(r.status, 200, r.body);
    const w = JSON.parse(r.json.contentItems[0].text);
    assert.equal(w.echo, tool);
    assert.equal(w.home, '/home/sandbox');
    assert.match(w.script, new RegExp(`^/home/sandbox/\\.npm/_npx/[0-9a-f]+/node_modules/${PKG.name}/server\\.js$`));
  }
  // The packument and the tarball were fetched, from the configured
  // registry, by both servers (each home its own npm cache).
  assert.ok(reg.seen.filter((u) => u === reg.tgzPath).length >= 2, JSON.stringify(reg.seen));
  assert.ok(reg.seen.includes(`/${PKG.name}`), JSON.stringify(reg.seen));
  for (const id of ['by-env', 'by-npmrc']) {
    const cached = fs.readdirSync(path.join(stateDir, 'homes', id, '.npm/_npx'));
    assert.equal(cached.length, 1, `${id}: ${cached}`);
  }
  // Through the proxy: its namespace has no other way out, and the proxy
  // counted what it let through and refused nothing (the registry was the
  // one configured, not npm's default).
  const metrics = (await d.get('/metrics')).body;
  for (const id of ['by-env', 'by-npmrc']) {
    const allowed = Number(new RegExp(`^mcpgw_sandbox_allowed_total\\{server="${id}"\\} (\\d+)$`, 'm').exec(metrics)?.[1]);
    assert.ok(allowed >= 2, `${id}: ${allowed} allowed\n${metrics}`);
    assert.match(metrics, new RegExp(`^mcpgw_sandbox_denied_total\\{server="${id}"\\} 0$`, 'm'));
  }
  assert.ok(!(await d.get('/v1/problems')).json.problems.some((p) => p.message.includes(regEntry)));

  // network: none: npm cannot reach even a loopback registry (the host's
  // loopback is not the sandbox's); the server fails with what npm said.
  const off = await waitFor(async () => {
    const s = (await servers()).find((x) => x.id === 'offline');
    return s.state !== 'starting' && s.state !== 'ready' && s.lastError ? s : null;
  }, 120000 * slow);
  assert.match(off.lastError, /exited with status/, JSON.stringify(off));
  assert.match((off.lastStderr ?? []).join('\n'), /ECONNREFUSED/, JSON.stringify(off));
  assert.ok((await d.get('/v1/problems')).json.problems.some((p) => p.server === 'offline'));
  assert.ok(!tools.includes('offline'));
  assert.deepEqual(offline.seen, []);
  assert.ok(!fs.existsSync(path.join(stateDir, 'homes', 'offline', '.npm/_npx')) ||
    fs.readdirSync(path.join(stateDir, 'homes', 'offline', '.npm/_npx')).every((h) =>
      !fs.existsSync(path.join(stateDir, 'homes', 'offline', '.npm/_npx', h, 'node_modules', PKG.name))));
});

// `registry` must be the registry npm inside uses: read from the
// environment the server gets, not from the daemon's. The probe fixture,
// run as "npx", asks the proxy for the registry's address itself.
test('registry is read from the server\'s environment: a daemon variable inherit_env keeps out widens nothing', { skip, timeout: 120000 }, async (t) => {
  const reg = await registry(tarball());
  t.after(() => reg.close());
  const dir = fs.mkdtempSync('/tmp/mcpgw-npx-');
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.mkdirSync(path.join(dir, 'home'));
  fs.symlinkSync(path.join(fixtures, 'sandbox_probe'), path.join(dir, 'bin/npx'));
  const d = await start(`version: 1
gateway:
  inherit_env: [PATH]
servers:
  kept-out:
    command: ${dir}/bin/npx
    sandbox: {network: [registry]}
  given:
    command: ${dir}/bin/npx
    env: {npm_config_registry: "${reg.url}"}
    transform: [{prefix: given_}]
    sandbox: {network: [registry]}
`, { env: { ...daemonEnv(path.join(dir, 'home'), path.join(dir, 'state')), npm_config_registry: reg.url }, waitReady: true });
  t.after(() => d.stop());
  const connect = async (tool) => {
    const dest = reg.url.slice('http://'.length, -1);
    const r = await d.post(`/v1/tools/${tool}/call`, { dialog: 'a', arguments: { op: 'proxy', data: `CONNECT ${dest} HTTP/1.1\r\n\r\n`, after: `GET /-/ping?${tool} HTTP/1.1\r\nHost: ${dest}\r\nConnection: close\r\n\r\n` } }, { timeoutMs: 60000 * slow });
    assert.equal(r.status, 200, r.body);
    return r.json.contentItems[0].text;
  };
  assert.match(await connect('probe'), /^ok: HTTP\/1\.1 403/);
  assert.match(await connect('given_probe'), /^ok: HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 404/);
  assert.deepEqual(reg.seen, ['/-/ping?given_probe']);
});
