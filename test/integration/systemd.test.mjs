// systemd files and the man page: systemd-analyze verify on the unit,
// systemd-sysusers and systemd-tmpfiles on an alternate root, groff on
// mcpgw(8). A missing tool skips its test with the reason printed, never a
// silent pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { root, bin, tmpdir } from './lib/harness.mjs';

const UNIT = path.join(root, 'systemd/mcpgw.service');
const SYSUSERS = path.join(root, 'systemd/mcpgw.sysusers');
const TMPFILES = path.join(root, 'systemd/mcpgw.tmpfiles');
const MAN = path.join(root, 'docs/mcpgw.8');

function have(tool) {
  return spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
}

function skipWithout(t, tool, pkg) {
  if (have(tool)) return false;
  const why = `${tool} not installed (Debian package ${pkg})`;
  console.log(`# SKIP: ${why}`);
  t.skip(why);
  return true;
}

// systemd-analyze verify needs ExecStart's binary to exist and every
// Documentation=man: page to resolve; it does not look up User=. So the
// copy runs the built daemon and MANPATH holds docs/mcpgw.8.
function verifyCopy(edit = (s) => s) {
  const dir = tmpdir();
  fs.mkdirSync(path.join(dir, 'man/man8'), { recursive: true });
  fs.copyFileSync(MAN, path.join(dir, 'man/man8/mcpgw.8'));
  const text = edit(fs.readFileSync(UNIT, 'utf8').replaceAll('/usr/local/bin/mcpgw', bin));
  const unit = path.join(dir, 'mcpgw.service');
  fs.writeFileSync(unit, text);
  const r = spawnSync('systemd-analyze', ['verify', unit], {
    encoding: 'utf8',
    env: { ...process.env, MANPATH: path.join(dir, 'man'), SYSTEMD_LOG_COLOR: '0',
      SYSTEMD_LOG_TARGET: 'console' },
  });
  // Only lines about our unit count: a container may have broken units of its own.
  const ours = r.stderr.split('\n').filter((l) => l.includes('mcpgw'));
  return { status: r.status, ours, stderr: r.stderr };
}

test('the unit passes systemd-analyze verify with no warning', (t) => {
  if (skipWithout(t, 'systemd-analyze', 'systemd')) return;
  assert.ok(fs.existsSync(bin), `${bin} must be built first`);
  const r = verifyCopy();
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.ours, [], r.stderr);
});

test('verify would catch a bad directive (the check above is real)', (t) => {
  if (skipWithout(t, 'systemd-analyze', 'systemd')) return;
  const r = verifyCopy((s) => s.replace(/^KillMode=mixed$/m, 'KillMode=bogus'));
  assert.ok(r.ours.some((l) => /kill mode/i.test(l)), r.stderr);
});

test('the unit has what the design asks for', () => {
  const unit = fs.readFileSync(UNIT, 'utf8');
  const directives = new Map();
  for (const line of unit.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) directives.set(m[1], [...(directives.get(m[1]) || []), m[2]]);
  }
  const one = (k) => (directives.get(k) || [])[0];
  assert.equal(one('Type'), 'notify');
  assert.equal(one('ExecStart'), '/usr/local/bin/mcpgw -c /etc/mcpgw/mcp.yaml');
  assert.equal(one('ExecReload'), '/bin/kill -HUP $MAINPID');
  assert.equal(one('User'), 'mcpgw');
  assert.equal(one('KillMode'), 'mixed');
  assert.equal(one('Restart'), 'on-failure');
  assert.equal(one('LimitNOFILE'), '65536');
  assert.equal(one('WatchdogSec'), '30s');
  assert.ok(parseInt(one('TimeoutStopSec'), 10) > 15, 'above shutdown_grace (10s) + 5s');
  for (const k of ['NoNewPrivileges', 'ProtectHome', 'PrivateTmp', 'ProtectKernelTunables',
    'RestrictSUIDSGID', 'LockPersonality', 'RestrictRealtime', 'Delegate']) {
    assert.equal(one(k), 'yes', k);
  }
  // A cgroup per server instance needs the delegated cgroup writable.
  assert.equal(one('ProtectControlGroups'), 'no');
  assert.equal(one('ProtectSystem'), 'strict');
  assert.equal(one('SystemCallArchitectures'), 'native');
  assert.ok(!directives.has('MemoryDenyWriteExecute'), "node's JIT needs W+X pages");
  assert.match(one('StateDirectory'), /^mcpgw\b/);
  assert.equal(one('CacheDirectory'), 'mcpgw');
  const env = directives.get('Environment');
  assert.ok(env.includes('HOME=/var/lib/mcpgw'));
  assert.ok(env.includes('npm_config_cache=/var/cache/mcpgw/npm'));
  assert.equal(one('ReadWritePaths'), '/var/lib/mcpgw/artifacts');
  // What bubblewrap (the servers' sandboxes) needs under this hardening, as
  // found under systemd 252 by `make systemd-test`: user namespaces, its
  // write of user.max_user_namespaces, sethostname in its UTS namespace.
  assert.ok(directives.get('ReadWritePaths').includes('/proc/sys/user'));
  for (const k of ['ProtectHostname', 'RestrictNamespaces', 'SystemCallFilter']) {
    assert.ok(!directives.has(k), `${k} keeps bubblewrap from making a sandbox`);
  }
});

test('sysusers and tmpfiles create the user and directories', (t) => {
  if (skipWithout(t, 'systemd-sysusers', 'systemd')) return;
  if (process.getuid() !== 0) {
    console.log('# SKIP: systemd-tmpfiles needs root to chown');
    t.skip('needs root');
    return;
  }
  const r = tmpdir();
  fs.mkdirSync(path.join(r, 'etc'));
  let p = spawnSync('systemd-sysusers', [`--root=${r}`, SYSUSERS], { encoding: 'utf8' });
  assert.equal(p.status, 0, p.stderr);
  const pw = fs.readFileSync(path.join(r, 'etc/passwd'), 'utf8').split('\n')
    .find((l) => l.startsWith('mcpgw:'));
  assert.ok(pw, 'mcpgw in passwd');
  const [, , uid, , gecos, home, shell] = pw.split(':');
  assert.equal(gecos, 'MCP gateway');
  assert.equal(home, '/var/lib/mcpgw');
  assert.match(shell, /nologin/);
  p = spawnSync('systemd-tmpfiles', [`--root=${r}`, '--create', TMPFILES], { encoding: 'utf8' });
  assert.equal(p.status, 0, p.stderr);
  for (const d of ['var/lib/mcpgw', 'var/lib/mcpgw/artifacts', 'var/cache/mcpgw']) {
    const st = fs.statSync(path.join(r, d));
    assert.equal(st.uid, Number(uid), d);
    assert.equal(st.mode & 0o777, 0o750, d);
  }
});

test('mcpgw(8) renders without warnings and documents every option', (t) => {
  if (skipWithout(t, 'groff', 'groff-base')) return;
  const r = spawnSync('groff', ['-man', '-Tutf8', '-ww', '-z', MAN], { encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.equal(r.stderr, '');
  const text = spawnSync('groff', ['-man', '-Tutf8', '-P-cbou', MAN], { encoding: 'utf8' }).stdout;
  const help = spawnSync(bin, ['--help'], { encoding: 'utf8' }).stdout;
  for (const opt of new Set(help.match(/--[a-z][a-z-]+/g))) {
    assert.ok(text.includes(opt), `${opt} of --help is missing from mcpgw(8)`);
  }
  for (const word of ['import', 'SIGHUP', 'SIGTERM', 'EXIT STATUS', '/etc/mcpgw/mcp.yaml']) {
    assert.ok(text.includes(word), word);
  }
});
