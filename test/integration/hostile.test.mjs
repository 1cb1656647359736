// Hostile clients and hostile servers (security.md C2–C7, S2–S6): each is
// bounded, answered with a clear error or recorded as a Problem, and never
// affects other clients, servers or calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { start, waitFor, sleep, fixtures, tmpdir, slow, sseReader } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');

function rssKb(pid) {
  const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]);
}

test('500 slow clients hold no one up; beyond max_connections: 503', async (t) => {
  const d = await start('version: 1\ngateway:\n  max_connections: 600\n  header_timeout: 30s\n');
  t.after(() => d.stop());
  const socks = [];
  t.after(() => socks.forEach((s) => s.destroy()));
  for (let i = 0; i < 500; i++) {
    const s = net.connect({ host: d.host, port: d.port });
    s.on('error', () => {});
    s.on('connect', () => s.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: '));
    socks.push(s);
  }
  await sleep(300);
  for (let i = 0; i < 20; i++) assert.equal((await d.get('/healthz')).status, 200);
  // Past the cap the listener still accepts and answers 503 at once.
  const extra = [];
  for (let i = 0; i < 120; i++) {
    const s = net.connect({ host: d.host, port: d.port });
    s.on('error', () => {});
    extra.push(s);
  }
  t.after(() => extra.forEach((s) => s.destroy()));
  const refused = await new Promise((resolve) => {
    const s = net.connect({ host: d.host, port: d.port }, () => s.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
    let buf = '';
    s.on('data', (b) => { buf += b; });
    s.on('close', () => resolve(buf));
    s.on('error', () => resolve(buf));
  });
  assert.match(refused, /^HTTP\/1\.1 503 /);
  socks.forEach((s) => s.destroy());
  extra.forEach((s) => s.destroy());
  await waitFor(async () => (await d.get('/healthz')).status === 200);
});

test('hostile bodies and paths: deep JSON, NUL, non-UTF-8, huge numbers', async (t) => {
  const d = await start(`version: 1\nservers:\n  s:\n    truely-stateless: true\n    command: ${FIXTURE}\n`, { waitReady: true });
  t.after(() => d.stop());
  const deep = '{"arguments":' + '['.repeat(5000) + ']'.repeat(5000) + '}';
  let r = await d.post('/v1/tools/echo/call', deep);
  assert.equal(r.status, 400);
  assert.equal(r.json.error.code, 'bad_json');
  r = await d.post('/v1/tools/echo/call', Buffer.from('{"arguments":{"text":"\xff\xfe"}}', 'latin1'));
  assert.equal(r.status, 400, 'invalid UTF-8 in JSON');
  r = await d.post('/v1/tools/echo/call', '{"arguments":{"text":"a\\u0000b"}}');
  assert.ok([200, 400].includes(r.status), r.body);
  r = await d.post('/v1/tools/echo/call', '{"arguments":{"text":"x"},"timeout_ms":1e400}');
  assert.equal(r.status, 400);
  r = await d.post('/v1/tools/echo/call', '{"arguments":{},"arguments":{}}');
  assert.equal(r.status, 400, 'duplicate keys');
  let out = await d.raw('GET /v1/tools/ech\x00o HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  assert.match(out, /^HTTP\/1\.1 400 /);
  out = await d.raw('GET /v1/tools/\xff\xfe HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  assert.match(out, /^HTTP\/1\.1 (400|404) /);
  out = await d.raw(`GET /${'a/'.repeat(4000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  assert.match(out, /^HTTP\/1\.1 (404|414|431) /);
  assert.equal((await d.post('/v1/tools/echo/call', { arguments: { text: 'still fine' } })).status, 200);
});

test('hostile servers: notification floods, huge listings, garbage — others unaffected', async (t) => {
  const dir = tmpdir();
  const many = path.join(dir, 'many.json');
  fs.writeFileSync(many, JSON.stringify(Array.from({ length: 10001 }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } }))));
  const d = await start(`version: 1
servers:
  flood:
    truely-stateless: true
    command: ${FIXTURE}
    args: [--notify-flood, '20000', --garbage]
    transform: [{prefix: f_}]
  huge:
    truely-stateless: true
    command: ${FIXTURE}
    args: [--tools-json, ${many}]
    transform: [{prefix: h_}]
  calm:
    truely-stateless: true
    command: ${FIXTURE}
    transform: [{prefix: c_}]
`, { waitReady: true });
  t.after(() => d.stop());
  const servers = (await d.get('/v1/servers')).json.servers;
  const huge = servers.find((s) => s.id === 'huge');
  assert.equal(huge.state, 'failed');
  assert.match(huge.lastError, /10,?000|too (many|long)|limit/i, huge.lastError);
  const flood = servers.find((s) => s.id === 'flood');
  assert.equal(flood.state, 'ready');
  await waitFor(async () => (await d.get('/v1/servers')).json.servers.find((s) => s.id === 'flood').instances[0].counters.notifications >= 20000, 20000 * slow);
  const calls = await Promise.all(Array.from({ length: 20 }, (_, i) => d.post(`/v1/tools/${i % 2 ? 'c' : 'f'}_echo/call`, { arguments: { text: `x${i}` } })));
  calls.forEach((c, i) => { assert.equal(c.status, 200, c.body); assert.equal(c.json.contentItems[0].text, `x${i}`); });
  assert.ok(rssKb(d.pid) < 300 * 1024 * slow, `daemon RSS ${rssKb(d.pid)} kB stays bounded`);
});

// Every 6-byte piece of `secret` found in `text` (none may be: P6).
function pieces(text, secret) {
  const found = [];
  for (let i = 0; i + 6 <= secret.length; i++) if (text.includes(secret.slice(i, i + 6))) found.push(secret.slice(i, i + 6));
  return found;
}

test('a server printing its secrets on stderr: none reaches /v1/servers, Problems, events, logs or metrics', async (t) => {
  const envSecret = 'sk-env-9f8e7d6c5b4a3921';
  const fileSecret = 'file-secret-0a1b2c3d4e';
  const yaml = `version: 1\nservers:\n  leaky:\n    command: ${FIXTURE}\n` +
    "    args: ['--print-env', 'API_KEY', '--print-env', 'FILE_KEY', '--crash-on-call', 'echo']\n" +
    '    envFile: leaky.env\n    env:\n      API_KEY: {env: LEAK_SECRET}\n';
  const d = await start(yaml, { env: { LEAK_SECRET: envSecret }, files: { 'leaky.env': `FILE_KEY=${fileSecret}\n` }, waitReady: true });
  t.after(() => d.stop());
  let events = '';
  const req = http.get({ host: d.host, port: d.port, path: '/v1/events' }, (res) => {
    res.setEncoding('utf8');
    res.on('data', sseReader((ev) => { events += JSON.stringify(ev) + '\n'; }));
  });
  req.on('error', () => {});
  t.after(() => req.destroy());
  await d.waitLog(/FILE_KEY=/);
  // The leased instance crashes: its death, with its last stderr lines,
  // becomes a Problem and an event.
  await d.post('/v1/tools/echo/call', { dialog: 'd1', arguments: { text: 'a' } });
  await waitFor(async () => (await d.get('/v1/problems')).json.problems.some((p) => p.server === 'leaky' && /stderr/.test(p.message)));
  // (the stream's first event, a snapshot, names both already)
  await waitFor(() => /"event":"problem".*leaky.*stderr/.test(events));
  const servers = JSON.stringify((await d.get('/v1/servers')).json);
  const surfaces = {
    servers,
    problems: JSON.stringify((await d.get('/v1/problems')).json),
    events,
    log: d.stderr,
    metrics: (await d.get('/metrics')).body.toString(),
  };
  assert.match(servers, /API_KEY=\*\*\*/);
  assert.match(servers, /FILE_KEY=\*\*\*/);
  assert.match(surfaces.problems, /FILE_KEY=\*\*\*/);
  for (const [name, text] of Object.entries(surfaces)) {
    for (const secret of [envSecret, fileSecret]) {
      assert.deepEqual(pieces(text, secret), [], `${name} shows pieces of ${secret}`);
    }
  }
});

test('a server quoting its secrets in an initialize error, a stray stdout line or an HTTP error body: masked everywhere', async (t) => {
  const secret = 'sk-quoted-5e4d3c2b1a09';
  const httpSecret = 'sk-http-a1b2c3d4e5f6';
  // An HTTP upstream that answers every request 401, quoting the
  // Authorization header it was sent.
  const upstream = http.createServer((req, res) => {
    req.resume();
    res.writeHead(401, { 'content-type': 'text/plain' });
    res.end(`token rejected: ${req.headers.authorization}`);
  });
  await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
  t.after(() => upstream.close());
  const yaml = `version: 1
servers:
  initerr:
    command: ${FIXTURE}
    args: [--init-error-env, API_KEY]
    env: {API_KEY: {env: QUOTE_SECRET}}
  stray:
    truely-stateless: true
    command: ${FIXTURE}
    args: [--stdout-env, API_KEY]
    env: {API_KEY: {env: QUOTE_SECRET}}
  web:
    transport: streamable_http
    url: http://127.0.0.1:${upstream.address().port}/mcp
    headers: {Authorization: 'Bearer \${HTTP_SECRET}'}
`;
  const d = await start(yaml, { env: { QUOTE_SECRET: secret, HTTP_SECRET: httpSecret }, args: ['--log-level', 'debug'] });
  t.after(() => d.stop());
  let events = '';
  const req = http.get({ host: d.host, port: d.port, path: '/v1/events' }, (res) => {
    res.setEncoding('utf8');
    res.on('data', sseReader((ev) => { events += JSON.stringify(ev) + '\n'; }));
  });
  req.on('error', () => {});
  t.after(() => req.destroy());
  // Each failure has happened: the quoted texts are there, masked.
  await waitFor(async () => {
    const p = JSON.stringify((await d.get('/v1/problems')).json);
    return /bad credentials: API_KEY=\*\*\*/.test(p) && /token rejected: (Bearer )?\*\*\*/.test(p);
  }, 20000 * slow);
  await d.waitLog(/API_KEY=\*\*\*/);
  const surfaces = {
    servers: JSON.stringify((await d.get('/v1/servers')).json),
    problems: JSON.stringify((await d.get('/v1/problems')).json),
    events,
    log: d.stderr,
    metrics: (await d.get('/metrics')).body.toString(),
  };
  for (const [name, text] of Object.entries(surfaces)) {
    for (const s of [secret, httpSecret]) assert.deepEqual(pieces(text, s), [], `${name} shows pieces of ${s}`);
  }
});

const alive = (pid) => {
  try { return !/^\S+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return false; }
};

// The grandchild of the fixture process `leader`, from the file the
// fixture appends "<its pid> <grandchild pid>" to.
async function grandchildOf(file, leader) {
  const find = () => {
    const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n') : [];
    const l = lines.find((x) => x.startsWith(`${leader} `));
    return l ? Number(l.split(' ')[1]) : 0;
  };
  return waitFor(find);
}

// The instance cgroups the daemon `d` has now, from where it says it makes
// them (src/proctree.c: "mcpgw-<pid>-<n>" under its own cgroup v2
// directory, which it logs at start), or null when it logged that it uses
// /proc instead.
function cgroupsOf(d) {
  const m = /msg="each server instance runs in its own cgroup" cgroup=("?)([^"\s]+)\1/.exec(d.stderr);
  if (!m) return null;
  return fs.readdirSync(m[2]).filter((n) => n.startsWith(`mcpgw-${d.pid}-`)).map((n) => path.join(m[2], n));
}

// MCPGW_CGROUP=off: the /proc path; unset: a cgroup per instance where the
// daemon's cgroup is writable (as root on this kind of host), else /proc too.
for (const cgroup of ['off', 'auto']) {
  test(`a setsid grandchild that ignores SIGTERM dies at release and at shutdown (MCPGW_CGROUP=${cgroup})`, async (t) => {
    const dir = tmpdir();
    const gc = [path.join(dir, 'gc1'), path.join(dir, 'gc2')];
    const yaml = 'version: 1\ngateway:\n  warm_spares: 0\nservers:\n' +
      `  a:\n    command: ${FIXTURE}\n    args: ['--setsid-grandchild', '${gc[0]}']\n` +
      `  b:\n    command: ${FIXTURE}\n    args: ['--setsid-grandchild', '${gc[1]}']\n    transform: [{prefix: b_}]\n    truely-stateless: true\n`;
    const d = await start(yaml, { env: { MCPGW_CGROUP: cgroup }, waitReady: true });
    t.after(() => d.stop());
    // The grandchildren left their parents' session and ignore SIGTERM: a
    // test that fails before the daemon has killed them kills them here,
    // from the files where the fixtures write their pids.
    t.after(() => {
      for (const file of gc) {
        const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n') : [];
        for (const l of lines.filter(Boolean)) {
          try { process.kill(Number(l.split(' ')[1]), 'SIGKILL'); } catch { /* gone */ }
        }
      }
    });
    assert.equal((await d.post('/v1/tools/echo/call', { dialog: 'd1', arguments: { text: 'x' } })).status, 200);
    const lease = (await d.get('/v1/dialogs')).json.dialogs.find((x) => x.dialog === 'd1').leases[0];
    const leased = await grandchildOf(gc[0], lease.pid);
    assert.ok(alive(leased));
    const servers = (await d.get('/v1/servers')).json.servers;
    const shared = await grandchildOf(gc[1], servers.find((s) => s.id === 'b').instances[0].pid);
    assert.ok(alive(shared));
    const cgroups = cgroupsOf(d);
    if (cgroup === 'off') assert.equal(cgroups, null, 'MCPGW_CGROUP=off: the daemon uses /proc');
    else if (cgroups === null) t.diagnostic(`cgroups were not used (${/no writable cgroup[^\n]*/.exec(d.stderr)?.[0] ?? 'no cgroup line in the log'}): only the /proc path was tested`);
    else assert.equal(cgroups.length, 2, `a cgroup for each instance: ${cgroups}`);
    assert.equal((await d.post('/v1/dialogs/d1/release', { serverId: 'a' })).status, 200);
    // close stdin, the fixture exits, SIGTERM (ignored), 3 s, SIGKILL.
    await waitFor(() => !alive(leased), 15000 * slow);
    assert.ok(alive(shared), 'the shared instance of b still runs');
    const r = await d.stop('SIGTERM', 30000 * slow);
    assert.equal(r.code, 0);
    assert.ok(!alive(shared), `the grandchild ${shared} of b is gone when the daemon has exited`);
    await t.test('no instance cgroup is left after the stop', { skip: cgroups === null && 'the daemon used no cgroup' }, () => {
      const gone = cgroups.filter((dir) => fs.existsSync(dir));
      assert.deepEqual(gone, [], 'no cgroup left');
      assert.deepEqual(cgroupsOf(d), [], 'no cgroup of this daemon under its cgroup directory');
    });
  });
}
