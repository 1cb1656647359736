// Stdio servers in a sandbox of their own (security.md X1, X2, X4, X5;
// docs/hardening.md "Sandboxed servers"): a hostile fixture tries what a
// malicious server would, inside bubblewrap, and each attempt fails while
// the daemon stays up; homes per dialog; require without bubblewrap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { start, run, waitFor, fixtures, nodeModules } from './lib/harness.mjs';

const PROBE = path.join(fixtures, 'sandbox_probe');
const MEMORY = path.join(nodeModules, '@modelcontextprotocol/server-memory/dist/index.js');
// The server's packages, and test/webcrypto.cjs that NODE_OPTIONS preloads
// (the Makefile sets it for every Node process of the tests).
const TEST_DIR = path.dirname(nodeModules);

// bubblewrap comes with `make deps`; a host whose kernel refuses user
// namespaces cannot run these, and says so instead of failing them.
const bwrap = spawnSync('bwrap', ['--unshare-all', '--unshare-user', '--ro-bind', '/', '/', '--', '/bin/true']);
const skip = bwrap.status === 0 ? false : `bubblewrap cannot make a sandbox here: ${bwrap.error?.message ?? bwrap.stderr}`;

const probe = async (d, dialog, args) => {
  const r = await d.post('/v1/tools/probe/call', { dialog, arguments: args });
  assert.equal(r.status, 200, r.body);
  return r.json.contentItems[0].text;
};

test('a sandboxed server cannot read, write, reach or signal what is not its own', { skip }, async (t) => {
  const home = fs.mkdtempSync('/tmp/mcpgw-home-');
  fs.writeFileSync(path.join(home, 'daemon-secret'), 'the daemon user\'s file');
  const writable = fs.mkdtempSync('/tmp/mcpgw-write-');
  const stateDir = fs.mkdtempSync('/tmp/mcpgw-state-');
  const d = await start(`version: 1
servers:
  probe:
    command: ${PROBE}
    env: {PROBE_SECRET: s3cr3t-value}
    sandbox:
      home: dialog
      write: [${writable}]
`, { env: { HOME: home, STATE_DIRECTORY: stateDir }, waitReady: true });
  t.after(() => d.stop());
  t.after(() => { for (const p of [home, writable, stateDir]) fs.rmSync(p, { recursive: true, force: true }); });
  const state = JSON.parse((await d.get('/v1/servers')).body).servers[0];
  assert.equal(state.state, 'ready', JSON.stringify(state));
  assert.equal(state.sandbox.enforced, true, JSON.stringify(state.sandbox));
  assert.equal(state.sandbox.network, 'none');
  assert.equal(state.sandbox.home, 'dialog');
  assert.deepEqual(state.sandbox.write, [writable]);

  // The config, the daemon's HOME, the host's /root and /home, the
  // daemon's environment through /proc: none is there.
  assert.match(await probe(d, 'a', { op: 'read', path: d.configPath }), /^refused: ENOENT/);
  assert.match(await probe(d, 'a', { op: 'read', path: path.join(home, 'daemon-secret') }), /^refused: ENOENT/);
  assert.match(await probe(d, 'a', { op: 'list', path: '/root' }), /^refused: ENOENT/);
  assert.equal(await probe(d, 'a', { op: 'list', path: '/home' }), 'ok: sandbox');
  assert.match(await probe(d, 'a', { op: 'read', path: `/proc/${d.pid}/environ` }), /^refused: ENOENT/);
  assert.match(await probe(d, 'a', { op: 'signal', number: d.pid }), /^refused: ESRCH/);
  // Its own loopback only: the gateway's port is not reachable.
  assert.match(await probe(d, 'a', { op: 'connect', number: d.port }), /^refused: ECONNREFUSED/);
  // Writes: its home and `write`, nothing else.
  assert.equal(await probe(d, 'a', { op: 'write', path: '/home/sandbox/mine', data: 'dialog a' }), 'ok: written');
  assert.equal(await probe(d, 'a', { op: 'write', path: path.join(writable, 'out'), data: 'shared' }), 'ok: written');
  assert.equal(fs.readFileSync(path.join(writable, 'out'), 'utf8'), 'shared');
  assert.match(await probe(d, 'a', { op: 'write', path: '/usr/evil' }), /^refused: (EROFS|EACCES|EPERM)/);
  assert.match(await probe(d, 'a', { op: 'write', path: '/etc/passwd' }), /^refused: (EROFS|EACCES|EPERM)/);
  assert.equal(await probe(d, 'a', { op: 'env', path: 'HOME' }), 'ok: /home/sandbox');
  assert.equal(await probe(d, 'a', { op: 'env', path: 'PROBE_SECRET' }), 'ok: s3cr3t-value');

  // Dialog b gets a home of its own and cannot see a's, by any path.
  assert.equal(await probe(d, 'b', { op: 'list', path: '/home/sandbox' }), 'ok: ');
  const homes = path.join(stateDir, 'homes/probe.d');
  // The state directory on the host (OAuth grants live there) is hidden too.
  assert.match(await probe(d, 'b', { op: 'list', path: stateDir }), /^refused: ENOENT/);
  const onHost = fs.readdirSync(homes);
  assert.equal(onHost.length >= 2, true, `homes on the host: ${onHost}`);
  for (const h of onHost) {
    assert.match(await probe(d, 'b', { op: 'list', path: path.join(homes, h) }), /^refused: ENOENT/);
  }
  const aHome = onHost.find((h) => fs.existsSync(path.join(homes, h, 'mine')));
  assert.ok(aHome, 'dialog a\'s file is in its home on the host');

  // A dialog's home goes with its lease.
  const rel = await d.post('/v1/dialogs/a/release', {});
  assert.equal(rel.status, 200, rel.body);
  await waitFor(() => !fs.existsSync(path.join(homes, aHome)), 10000);
  assert.ok((await d.get('/healthz')).status === 200);
});

// What bwrap makes of /etc: small files copied into the sandbox's root
// (no mount each), large ones and directories bound, links into /usr kept
// as links; the root read-only like the binds; and none of the
// descriptors the copies came through left to the server.
const ETC = ['alternatives', 'ca-certificates', 'ca-certificates.conf', 'gai.conf', 'group', 'host.conf', 'hosts',
  'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'localtime', 'mime.types', 'nsswitch.conf', 'npmrc', 'os-release',
  'passwd', 'protocols', 'resolv.conf', 'services', 'ssl', 'timezone'];
test('the sandbox\'s /etc is the host\'s few files, its root read-only, no descriptor left open', { skip }, async (t) => {
  const stateDir = fs.mkdtempSync('/tmp/mcpgw-state-');
  t.after(() => fs.rmSync(stateDir, { recursive: true, force: true }));
  const d = await start(`version: 1\nservers:\n  probe:\n    command: ${PROBE}\n    sandbox: true\n`, { env: { STATE_DIRECTORY: stateDir }, waitReady: true });
  t.after(() => d.stop());
  const present = ETC.filter((n) => fs.existsSync(`/etc/${n}`));
  const listed = (await probe(d, 'a', { op: 'list', path: '/etc' })).replace(/^ok: /, '').split(' ');
  assert.deepEqual(listed.sort(), present.sort());
  for (const n of ['passwd', 'group', 'hosts', 'nsswitch.conf', 'resolv.conf', 'services', 'os-release', 'ld.so.conf']) {
    if (!present.includes(n)) continue;
    // What the probe reads: one read of up to 4095 bytes, up to a NUL.
    const host = fs.readFileSync(`/etc/${n}`).subarray(0, 4095).toString('utf8').split('\0')[0];
    assert.equal(await probe(d, 'a', { op: 'read', path: `/etc/${n}` }), `ok: ${host}`, n);
  }
  assert.match(await probe(d, 'a', { op: 'read', path: '/etc/ld.so.cache' }), /^ok: /);
  if (present.includes('localtime')) assert.match(await probe(d, 'a', { op: 'read', path: '/etc/localtime' }), /^ok: TZif/);
  if (present.includes('ssl')) assert.match(await probe(d, 'a', { op: 'list', path: '/etc/ssl' }), /\bcerts\b/);
  // Nothing new at the root, nothing changed in /etc; /tmp and the home
  // stay writable.
  for (const p of ['/newfile', '/etc/hosts', '/etc/passwd', '/etc/ld.so.cache']) {
    assert.match(await probe(d, 'a', { op: 'write', path: p, data: 'x' }), /^refused: (EROFS|EACCES|EPERM)/, p);
  }
  assert.equal(await probe(d, 'a', { op: 'write', path: '/tmp/x', data: 'x' }), 'ok: written');
  assert.equal(await probe(d, 'a', { op: 'write', path: '/home/sandbox/x', data: 'x' }), 'ok: written');
  // 0-2 and the directory being listed.
  assert.equal(await probe(d, 'a', { op: 'list', path: '/proc/self/fd' }), 'ok: 0 1 2 3');
});

test('the same server unsandboxed sees what the sandbox hides (the probe can tell)', { skip }, async (t) => {
  const d = await start(`version: 1\nservers:\n  probe:\n    command: ${PROBE}\n    sandbox: false\n`, { waitReady: true });
  t.after(() => d.stop());
  assert.match(await probe(d, 'a', { op: 'read', path: d.configPath }), /^ok: version: 1/);
  assert.equal(await probe(d, 'a', { op: 'signal', number: d.pid }), 'ok: signalled');
  assert.equal(await probe(d, 'a', { op: 'connect', number: d.port }), 'ok: connected');
  const s = (await d.get('/v1/servers')).json.servers[0];
  assert.equal(s.sandbox.enforced, false);
  assert.equal(s.sandbox.reason, 'off in the config');
});

test('server-memory with home: dialog keeps each dialog\'s graph in its own home', { skip }, async (t) => {
  const stateDir = fs.mkdtempSync('/tmp/mcpgw-state-');
  const d = await start(`version: 1
servers:
  mem:
    command: node
    args: [${MEMORY}]
    env: {MEMORY_FILE_PATH: /home/sandbox/memory.jsonl}
    sandbox:
      home: dialog
      read: [${TEST_DIR}]
`, { env: { STATE_DIRECTORY: stateDir }, waitReady: true });
  t.after(() => d.stop());
  t.after(() => fs.rmSync(stateDir, { recursive: true, force: true }));
  const call = (dialog, tool, args) => d.post(`/v1/tools/${tool}/call`, { dialog, arguments: args });
  let r = await call('one', 'create_entities', { entities: [{ name: 'alpha', entityType: 't', observations: ['seen by one'] }] });
  assert.equal(r.status, 200, r.body);
  r = await call('two', 'create_entities', { entities: [{ name: 'beta', entityType: 't', observations: ['seen by two'] }] });
  assert.equal(r.status, 200, r.body);
  const graph = async (dialog) => JSON.parse((await call(dialog, 'read_graph', {})).json.contentItems[0].text);
  assert.deepEqual((await graph('one')).entities.map((e) => e.name), ['alpha']);
  assert.deepEqual((await graph('two')).entities.map((e) => e.name), ['beta']);
  const homes = path.join(stateDir, 'homes/mem.d');
  const files = fs.readdirSync(homes).filter((h) => fs.existsSync(path.join(homes, h, 'memory.jsonl')));
  assert.equal(files.length, 2, `two homes hold a graph: ${fs.readdirSync(homes)}`);
});

// Its daemon runs with a PATH that has no bubblewrap, and so no valgrind.
const noValgrind = process.env.MCPGW_WRAPPER === 'valgrind' && 'its PATH holds no valgrind either';
test('require: true without bubblewrap fails the server; without require it runs with a warning', { skip: skip || noValgrind }, async (t) => {
  const yaml = (require) => `version: 1
gateway:
  sandbox: {default: on, require: ${require}}
servers:
  probe:
    command: ${PROBE}
`;
  // No bubblewrap on the daemon's PATH (the command's path is absolute).
  const env = { PATH: '/nonexistent' };
  const strict = await start(yaml(true), { env });
  t.after(() => strict.stop());
  const failed = await waitFor(async () => {
    const s = (await strict.get('/v1/servers')).json.servers[0];
    return s.state === 'failed' && s;
  }, 15000);
  assert.match(failed.lastError, /sandbox is required.*bubblewrap \(bwrap\) is not on the daemon's PATH/);
  const problems = (await strict.get('/v1/problems')).json.problems;
  assert.ok(problems.some((p) => p.server === 'probe' && p.severity === 'error' && /sandbox is required/.test(p.message)), JSON.stringify(problems));
  assert.equal(failed.instances.length, 0, 'it never ran unsandboxed');

  const lax = await start(yaml(false), { env, waitReady: true });
  t.after(() => lax.stop());
  const s = (await lax.get('/v1/servers')).json.servers[0];
  assert.equal(s.state, 'ready');
  assert.equal(s.sandbox.enforced, false);
  assert.match(s.sandbox.reason, /bubblewrap \(bwrap\) is not on the daemon's PATH/);
  const warn = (await lax.get('/v1/problems')).json.problems.find((p) => p.server === 'probe');
  assert.equal(warn.severity, 'warning');
  assert.match(warn.message, /runs unsandboxed: bubblewrap/);
});

test('--check-config names the key and the path of a sandbox path that does not exist', async () => {
  const dir = fs.mkdtempSync('/tmp/mcpgw-sbcfg-');
  const file = path.join(dir, 'mcp.yaml');
  fs.writeFileSync(file, `version: 1
servers:
  fs:
    command: ${PROBE}
    sandbox:
      read: [./missing-dir]
      network: ["api.github.com", "bad host"]
      cpu: lots
`);
  const r = await run(['--check-config', '-c', file]);
  fs.rmSync(dir, { recursive: true, force: true });
  assert.equal(r.code, 1);
  assert.match(r.stderr + r.stdout, /mcp\.yaml:6:\d+: error: \[server fs\] 'servers\.fs\.sandbox\.read': path '\/tmp\/mcpgw-sbcfg-[^/]+\/missing-dir' does not exist/);
  assert.match(r.stderr + r.stdout, /'servers\.fs\.sandbox\.network': 'bad host' is not a destination/);
  assert.match(r.stderr + r.stdout, /'servers\.fs\.sandbox\.cpu' must be a number of cores/);
});


test('--check-config says which stdio servers would run unsandboxed; -v shows each sandbox', async () => {
  const dir = fs.mkdtempSync('/tmp/mcpgw-sbcfg-');
  const file = path.join(dir, 'mcp.yaml');
  fs.writeFileSync(file, `version: 1
servers:
  open:
    command: ${PROBE}
  closed:
    command: ${PROBE}
    sandbox: {home: dialog, tmp: 8MiB}
`);
  const plain = await run(['--check-config', '-c', file]);
  const verbose = await run(['--check-config', '-v', '-c', file]);
  fs.rmSync(dir, { recursive: true, force: true });
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(plain.stderr, /mcp\.yaml:3:3: info: \[server open\] runs unsandboxed: its sandbox is off/);
  if (skip) assert.match(plain.stderr, /\[server closed\] runs unsandboxed: /);
  else assert.doesNotMatch(plain.stderr, /\[server closed\]/);
  assert.doesNotMatch(plain.stderr, /sandbox \{/);
  assert.match(verbose.stderr, /\[server closed\] sandbox \{"enabled":true,"network":"none","read":\[\],"write":\[\],"home":"dialog","limits":\{"tmp":8388608\}\}/);
  assert.match(verbose.stderr, /\[server open\] sandbox \{"enabled":false,/);
});

test('a sandboxed server cannot trace the daemon, and its /tmp fills up to its size only', { skip }, async (t) => {
  const d = await start(`version: 1
servers:
  probe:
    command: ${PROBE}
    truely-stateless: true
    sandbox: {tmp: 4MiB}
`, { waitReady: true, env: { STATE_DIRECTORY: fs.mkdtempSync('/tmp/mcpgw-state-') } });
  t.after(() => d.stop());
  const p = async (args) => (await d.post('/v1/tools/probe/call', { arguments: args })).json.contentItems[0].text;
  assert.match(await p({ op: 'ptrace', number: d.pid }), /^refused: ESRCH/);
  assert.match(await p({ op: 'fill', path: '/tmp/big' }), /^ok: [0-4] MiB, then ENOSPC/);
  assert.equal((await d.get('/healthz')).status, 200);
});

test('server-filesystem in a sandbox: its write directory works, what the sandbox hides does not', { skip }, async (t) => {
  const share = fs.mkdtempSync('/tmp/mcpgw-share-');
  const stateDir = fs.mkdtempSync('/tmp/mcpgw-state-');
  fs.mkdirSync(path.join(stateDir, 'oauth'), { mode: 0o700 });
  fs.writeFileSync(path.join(stateDir, 'oauth', 'grant.json'), '{"refresh_token":"secret"}', { mode: 0o600 });
  fs.writeFileSync(path.join(share, 'hello.txt'), 'hello from the host');
  // The server itself may use all of / (its own allow-list is no limit
  // here): what it cannot see is the sandbox's doing.
  const d = await start(`version: 1
servers:
  fs:
    command: ${path.join(nodeModules, '.bin/mcp-server-filesystem')}
    args: [/]
    truely-stateless: true
    sandbox:
      write: [${share}]
      read: [${TEST_DIR}]
`, { waitReady: true, env: { STATE_DIRECTORY: stateDir } });
  t.after(() => d.stop());
  t.after(() => { for (const p of [share, stateDir]) fs.rmSync(p, { recursive: true, force: true }); });
  const call = async (tool, args) => (await d.post(`/v1/tools/${tool}/call`, { arguments: args })).json;
  const text = (r) => r.contentItems.map((c) => c.text).join('\n');
  let r = await call('read_text_file', { path: path.join(share, 'hello.txt') });
  assert.equal(text(r), 'hello from the host');
  r = await call('write_file', { path: path.join(share, 'out.txt'), content: 'written inside' });
  assert.notEqual(r.isError, true, text(r));
  assert.equal(fs.readFileSync(path.join(share, 'out.txt'), 'utf8'), 'written inside');
  for (const hidden of ['/etc/shadow', d.configPath, path.join(stateDir, 'oauth', 'grant.json')]) {
    r = await call('read_text_file', { path: hidden });
    assert.equal(r.isError, true, `${hidden}: ${text(r)}`);
    assert.match(text(r), /ENOENT|no such file|not exist|Access denied/i, hidden);
  }
  r = await call('write_file', { path: '/usr/local/evil.txt', content: 'x' });
  assert.equal(r.isError, true, text(r));
  assert.ok(!fs.existsSync('/usr/local/evil.txt'));
});

const PYTHON = '/usr/bin/python3';
test('a Python server (python3 -m) in a sandbox: its cwd read-only, its home its own', { skip: skip || (!fs.existsSync(PYTHON) && `no ${PYTHON}`) }, async (t) => {
  const stateDir = fs.mkdtempSync('/tmp/mcpgw-state-');
  const d = await start(`version: 1
servers:
  py:
    command: ${PYTHON}
    args: [-m, py_server]
    cwd: ${path.join(path.dirname(nodeModules), 'fixtures')}
    env: {PYTHONDONTWRITEBYTECODE: '1'}
    truely-stateless: true
    sandbox: true
`, { waitReady: true, env: { STATE_DIRECTORY: stateDir } });
  t.after(() => d.stop());
  t.after(() => fs.rmSync(stateDir, { recursive: true, force: true }));
  const where = async (p) => JSON.parse((await d.post('/v1/tools/whereami/call', { arguments: { path: p } })).json.contentItems[0].text);
  const w = await where(d.configPath);
  assert.equal(w.cwd, path.join(path.dirname(nodeModules), 'fixtures'));
  assert.equal(w.home, '/home/sandbox');
  assert.match(w.path, /^refused: No such file/);
  assert.match((await where('/etc/hostname')).path, /^refused: No such file/);
  assert.match((await where('/etc/passwd')).path, /^read \d+ bytes/);
});
