// A sandboxed instance's limits through its cgroup v2 (memory.max,
// pids.max, cpu.max; docs/hardening.md "Limits"), and the homes of a daemon
// that died. Where the host's cgroup v2 offers no controller (cgroup v1
// holds them, or the cgroup was not delegated) the limits are shown as not
// enforced, with a warning that names them; where a cgroup with the
// memory and pids controllers can be made, a fork bomb and a memory bomb
// meet them (`make cgroup2-test` runs this file in a VM that has them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { start, waitFor, fixtures, slow } from './lib/harness.mjs';

const PROBE = path.join(fixtures, 'sandbox_probe');

const bwrap = spawnSync('bwrap', ['--unshare-all', '--unshare-user', '--ro-bind', '/', '/', '--', '/bin/true']);
const noSandbox = bwrap.status === 0 ? false : `bubblewrap cannot make a sandbox here: ${bwrap.error?.message ?? bwrap.stderr}`;

// This process's cgroup v2 directory and its ancestors up to the mount.
function cgroupChain() {
  const rel = fs.readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => l.startsWith('0::'))?.slice(3);
  const mnt = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
    .map((l) => l.split(' ')).find((f) => f[f.indexOf('-') + 1] === 'cgroup2');
  if (!rel || !mnt) return [];
  const [root, mount] = [mnt[3], mnt[4]];
  const own = path.join(mount, root === '/' ? rel : rel.slice(root.length));
  const chain = [];
  for (let d = own; d.startsWith(mount); d = path.dirname(d)) {
    chain.push(d);
    if (d === mount) break;
  }
  return chain;
}
const read = (f) => { try { return fs.readFileSync(f, 'utf8').trim().split(/\s+/); } catch { return []; } };
const chain = cgroupChain();
const offered = chain.length ? read(path.join(chain[0], 'cgroup.controllers')) : [];
const noControllers = !offered.includes('memory') && !offered.includes('pids') && !offered.includes('cpu');
// A cgroup this test may make children in, whose children get memory and
// pids: the daemon is given one (MCPGW_CGROUP), alone in it, as under its
// systemd unit (Delegate=yes).
const delegating = chain.find((d) => {
  const on = read(path.join(d, 'cgroup.subtree_control'));
  try { fs.accessSync(d, fs.constants.W_OK); } catch { return false; }
  return on.includes('memory') && on.includes('pids');
});
const noLimits = noSandbox || (delegating ? false
  : 'no cgroup v2 with the memory and pids controllers to delegate here (cgroup v1 holds them, or this user may not make cgroups): the limits are not tested for real');

const probe = async (d, dialog, args) => {
  const r = await d.post('/v1/tools/probe/call', { dialog, arguments: args });
  assert.equal(r.status, 200, r.body);
  return r.json.contentItems[0].text;
};

test('limits the host cannot hold are shown as not enforced, with a warning naming them', {
  skip: noSandbox || (noControllers ? false : 'this host offers cgroup v2 controllers'),
}, async (t) => {
  const stateDir = fs.mkdtempSync('/tmp/mcpgw-state-');
  const d = await start(`version: 1
servers:
  probe:
    command: ${PROBE}
    sandbox: {memory: 512MiB, pids: 64, cpu: 0.5}
  plain:
    command: ${PROBE}
    sandbox: true
    transform: [{prefix: p_}]
`, { env: { STATE_DIRECTORY: stateDir }, waitReady: true });
  t.after(async () => { await d.stop(); fs.rmSync(stateDir, { recursive: true, force: true }); });
  const servers = (await d.get('/v1/servers')).json.servers;
  const s = servers.find((x) => x.id === 'probe');
  assert.equal(s.state, 'ready', JSON.stringify(s));
  assert.equal(s.sandbox.enforced, true);
  assert.equal(s.sandbox.limits.memory, 512 * 1024 * 1024);
  assert.equal(s.sandbox.limits.enforced, false, JSON.stringify(s.sandbox));
  assert.match(s.sandbox.limits.reason, /^memory, pids, cpu: /);
  const problems = (await d.get('/v1/problems')).json.problems.filter((p) => p.server === 'probe');
  assert.equal(problems.length, 1, JSON.stringify(problems));
  assert.equal(problems[0].severity, 'warning');
  assert.match(problems[0].message, /^limits not enforced: memory, pids, cpu: /);
  // A sandbox without cgroup limits holds all of its limits (/tmp's size).
  const plain = servers.find((x) => x.id === 'plain');
  assert.equal(plain.sandbox.limits.enforced, true, JSON.stringify(plain.sandbox));
  assert.equal((await d.get('/v1/problems')).json.problems.some((p) => p.server === 'plain'), false);
  // Still a sandbox, and still working.
  assert.equal(await probe(d, 'a', { op: 'env', path: 'HOME' }), 'ok: /home/sandbox');
});

test('a fork bomb and a memory bomb meet their instance\'s limits; nothing else is touched', { skip: noLimits }, async (t) => {
  const base = path.join(delegating, `mcpgw-test-${process.pid}`);
  const stateDir = fs.mkdtempSync('/tmp/mcpgw-state-');
  fs.mkdirSync(base);
  let d;
  t.after(async () => {
    await d?.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
    for (const dir of [path.join(base, 'mcpgw-daemon'), base]) {
      try { fs.rmdirSync(dir); } catch { /* the daemon's leftovers: its own stale cleanup */ }
    }
  });
  d = await start(`version: 1
servers:
  probe:
    command: ${PROBE}
    sandbox: {memory: 64MiB, pids: 16, cpu: 1}
  other:
    command: ${PROBE}
    sandbox: true
    transform: [{prefix: o_}]
`, { env: { MCPGW_CGROUP: base, STATE_DIRECTORY: stateDir }, waitReady: true });
  const state = async (id) => (await d.get('/v1/servers')).json.servers.find((x) => x.id === id);
  const s = await state('probe');
  assert.equal(s.sandbox.limits.enforced, true, JSON.stringify(s.sandbox));
  assert.equal(fs.readFileSync(path.join(base, 'cgroup.subtree_control'), 'utf8').includes('memory'), true);

  // pids.max counts bubblewrap's processes and the server: fewer than 16
  // forks get through, and the server answers after.
  const forked = await probe(d, 'a', { op: 'fork', number: 1000 });
  const m = /^refused: EAGAIN after (\d+)$/.exec(forked);
  assert.ok(m && Number(m[1]) < 16, forked);
  assert.equal(await probe(d, 'a', { op: 'env', path: 'HOME' }), 'ok: /home/sandbox');
  // Another server's instance is not bound by it.
  const other = await d.post('/v1/tools/o_probe/call', { dialog: 'a', arguments: { op: 'fork', number: 40 } });
  assert.equal(other.json.contentItems[0].text, 'ok: forked 40');

  // 256 MiB against 64: the instance dies, and says why.
  const r = await d.post('/v1/tools/probe/call', { dialog: 'b', arguments: { op: 'alloc', number: 256 } });
  assert.notEqual(r.json?.contentItems?.[0]?.text, 'ok: allocated', r.body);
  const killed = await waitFor(async () => {
    const p = (await d.get('/v1/problems')).json.problems
      .find((x) => x.server === 'probe' && /killed: memory limit 64 MiB reached/.test(x.message));
    return p;
  }, 15000 * slow);
  assert.ok(killed);
  assert.match((await state('probe')).lastError, /killed: memory limit 64 MiB reached/);
  assert.equal((await d.get('/healthz')).status, 200);
  assert.equal(await probe(d, 'a', { op: 'env', path: 'HOME' }), 'ok: /home/sandbox');
});

test('homes a dead daemon left are removed at the start; a live daemon\'s stay', { skip: noSandbox }, async (t) => {
  const stateDir = fs.mkdtempSync('/tmp/mcpgw-state-');
  const outside = fs.mkdtempSync('/tmp/mcpgw-outside-');
  let d;
  t.after(async () => {
    await d?.stop();
    for (const p of [stateDir, outside]) fs.rmSync(p, { recursive: true, force: true });
  });
  fs.writeFileSync(path.join(outside, 'keep'), 'not the home\'s');
  // A pid that is gone: a process that has exited.
  const dead = spawnSync('/bin/true').pid;
  const homes = path.join(stateDir, 'homes');
  const stale = [path.join(homes, 'probe.d', `${dead}-1`), path.join(homes, 'probe.d', `${dead}-7`),
    path.join(homes, 'gone.d', `${dead}-2`)];
  for (const h of stale) {
    fs.mkdirSync(path.join(h, '.cache/deep'), { recursive: true });
    fs.writeFileSync(path.join(h, '.cache/deep/file'), 'left behind');
    fs.symlinkSync(outside, path.join(h, 'link'));
  }
  const live = path.join(homes, 'probe.d', `${process.pid}-1`);
  const server = path.join(homes, 'probe');
  const notOurs = path.join(homes, 'probe.d', 'notes');
  for (const h of [live, server, notOurs]) fs.mkdirSync(h, { recursive: true });
  d = await start(`version: 1
servers:
  probe:
    command: ${PROBE}
    sandbox: {home: dialog}
`, { env: { STATE_DIRECTORY: stateDir }, waitReady: true });
  await waitFor(() => stale.every((h) => !fs.existsSync(h)), 10000 * slow);
  for (const h of [live, server, notOurs]) assert.ok(fs.existsSync(h), `${h} stays`);
  assert.equal(fs.readFileSync(path.join(outside, 'keep'), 'utf8'), 'not the home\'s', 'a link is not followed');
  assert.equal(await probe(d, 'a', { op: 'env', path: 'HOME' }), 'ok: /home/sandbox');
});

// Removing homes goes to libuv's threads, whose pool once started keeps
// four threads (their stacks, a malloc arena, glibc's locks) for the
// daemon's life: a start with nothing to remove must start none (issue 34).
async function startsOnOneThread(t, stateDir) {
  let d;
  t.after(async () => { await d?.stop(); fs.rmSync(stateDir, { recursive: true, force: true }); });
  d = await start(`version: 1
servers:
  probe:
    command: ${PROBE}
`, { env: { STATE_DIRECTORY: stateDir }, waitReady: true });
  assert.match(await probe(d, 'a', { op: 'env', path: 'HOME' }), /^ok: /);
  assert.equal(fs.readdirSync(`/proc/${d.pid}/task`).length, 1, 'the daemon runs on its one thread');
}

test('no homes directory: no sweep, no thread', async (t) => {
  const stateDir = fs.mkdtempSync('/tmp/mcpgw-state-');
  await startsOnOneThread(t, stateDir);
  assert.equal(fs.existsSync(path.join(stateDir, 'homes')), false);
});

// Homes of live daemons only (this test's process stands for one): the
// loop looks, finds nothing to remove.
test('homes with nothing to remove: no thread', async (t) => {
  const stateDir = fs.mkdtempSync('/tmp/mcpgw-state-');
  const live = path.join(stateDir, 'homes', 'probe.d', `${process.pid}-1`);
  fs.mkdirSync(path.join(live, '.cache'), { recursive: true });
  fs.mkdirSync(path.join(stateDir, 'homes', 'probe'), { recursive: true });
  await startsOnOneThread(t, stateDir);
  assert.ok(fs.existsSync(live), 'a live daemon\'s home stays');
});

test('the default state directory is made with its parents for the first home', { skip: noSandbox }, async (t) => {
  const home = fs.mkdtempSync('/tmp/mcpgw-home-');
  let d;
  t.after(async () => { await d?.stop(); fs.rmSync(home, { recursive: true, force: true }); });
  d = await start(`version: 1
servers:
  probe:
    command: ${PROBE}
    sandbox: true
`, { env: { HOME: home, STATE_DIRECTORY: '', XDG_STATE_HOME: '' }, waitReady: true });
  const s = (await d.get('/v1/servers')).json.servers[0];
  assert.equal(s.state, 'ready', s.lastError);
  assert.ok(fs.statSync(path.join(home, '.local/state/mcpgw/homes/probe')).isDirectory());
});
