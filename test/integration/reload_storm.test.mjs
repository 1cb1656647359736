// Reload storms (design §8): reloads of an unchanged (or re-created) file
// arriving while instances are inside `initialize` — a server being added,
// a lease's new instance, a crashed shared server restarting, an HTTP
// upstream's session — and SIGHUP in the daemon's first milliseconds. Each
// test checks that the daemon survives: /healthz answers, calls work, and
// the harness fails the test if it does not exit 0 on SIGTERM (ASan).
// Nothing the clients see is thrown away: a reload of an unchanged file
// changes nothing (docs/api.md "Reload"), so every POST /v1/reload answers
// 200, every call and release is answered as it would be without reloads,
// and a request that gets no answer at all fails the test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { start, waitFor, sleep, fixtures, nodeModules, slow, bin, tmpdir, track } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const EVERYTHING = path.join(nodeModules, '.bin/mcp-server-everything');
const STORM_MS = 2500 * slow;
const base = 'version: 1\ngateway:\n  reload: {debounce_ms: 100, poll_interval_ms: 100}\n';

// `p` (a request) or {status: 'no answer (…)'}: a transport failure is
// counted as a status of its own, which no test allows.
const answer = (p) => p.catch((e) => ({ status: `no answer (${e.message})` }));

function rewrite(configPath, yaml) {
  const tmp = `${configPath}.tmp${Math.random().toString(36).slice(2)}`;
  fs.writeFileSync(tmp, yaml);
  fs.renameSync(tmp, configPath);
}

// Every 50 ms one reload of the current file, by turns: SIGHUP, POST
// /v1/reload, the file rewritten in place, the file deleted and re-created.
// `yaml()` gives the content to (re)write. Resolves the number of reloads
// triggered; each POST /v1/reload must have answered 200 (the file is whole
// whenever it is posted), unless the daemon died (survived() says why).
async function storm(d, yaml, ms = STORM_MS) {
  const deadline = Date.now() + ms;
  let n = 0;
  const bad = [];
  while (Date.now() < deadline && !d.exited) {
    switch (n % 4) {
    case 0: try { process.kill(d.pid, 'SIGHUP'); } catch { /* gone: survived() says why */ } break;
    case 1: {
      const r = await answer(d.post('/v1/reload', {}));
      if (r.status !== 200) bad.push(`POST /v1/reload: ${r.status} ${r.body ?? ''}`);
      break;
    }
    case 2: rewrite(d.configPath, yaml()); break;
    default:
      fs.unlinkSync(d.configPath);
      await sleep(5);
      fs.writeFileSync(d.configPath, yaml());
    }
    n++;
    await sleep(50);
  }
  if (!d.exited) assert.deepEqual(bad, [], 'every POST /v1/reload of the storm answered 200');
  return n;
}

// The daemon came through: alive, healthy, and its file's servers all ready.
async function survived(d, ids) {
  if (d.exited) {
    const m = /==\d+==ERROR/.exec(d.stderr);
    assert.fail(`the daemon died (${JSON.stringify(d.exited)}):\n${d.stderr.slice(m ? m.index : -4000).slice(0, 6000)}`);
  }
  assert.equal((await d.get('/healthz')).status, 200);
  await waitFor(async () => {
    const list = (await d.get('/v1/servers')).json.servers;
    return ids.every((id) => list.some((s) => s.id === id && s.state === 'ready'));
  }, 20000 * slow);
}

const call = (d, tool, body) => d.post(`/v1/tools/${tool}/call`, body);

test('storm: a stdio server added and removed while reloads arrive during its initialize', async (t) => {
  const a = `  a:\n    command: ${FIXTURE}\n    truely-stateless: true\n    transform: [{prefix: 'a_'}]\n`;
  const slowSrv = `  b:\n    command: ${FIXTURE}\n    args: ['--init-delay-ms', '150']\n    truely-stateless: true\n    transform: [{prefix: 'b_'}]\n`;
  const d = await start(base + 'servers:\n' + a, { waitReady: true });
  t.after(() => d.stop());
  let current = base + 'servers:\n' + a, reloads = 0;
  // Each addition is applied at once (POST /v1/reload), so that the storm
  // starts while b is inside its initialize; each removal too.
  const apply = async (yaml) => {
    current = yaml;
    rewrite(d.configPath, yaml);
    const r = await answer(d.post('/v1/reload', {}));
    if (!d.exited) assert.equal(r.status, 200, r.body);
  };
  for (let round = 0; round < 3 && !d.exited; round++) {
    await apply(base + 'servers:\n' + a + slowSrv);
    reloads += await storm(d, () => current, 800 * slow);
    await apply(base + 'servers:\n' + a);
  }
  await apply(base + 'servers:\n' + a + slowSrv);
  reloads += await storm(d, () => current, 600 * slow);
  t.diagnostic(`${reloads} reloads over four additions of b`);
  await survived(d, ['a', 'b']);
  for (const tool of ['a_echo', 'b_echo']) {
    const r = await call(d, tool, { arguments: { text: tool } });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.json.contentItems[0].text, tool);
  }
});

test('storm: each dialog of a leased server starts its own instance while reloads arrive', async (t) => {
  const yaml = base + `  warm_spares: 0\n  max_instances_per_server: 8\nservers:\n  s:\n    command: ${FIXTURE}\n    args: ['--init-delay-ms', '120']\n`;
  const d = await start(yaml, { waitReady: true });
  t.after(() => d.stop());
  let stop = false, calls = 0;
  const statuses = {}, releases = {};
  // Two clients, each a new dialog per call, released after it. A request
  // without an answer ends the client (the daemon may be gone): it is
  // counted, and fails the test below.
  const client = async (k) => {
    for (let i = 0; !stop && i < 200; i++) {
      const dialog = `c${k}-${i}`;
      const r = await answer(call(d, 'echo', { dialog, arguments: { text: dialog } }));
      statuses[r.status] = (statuses[r.status] || 0) + 1;
      calls++;
      if (typeof r.status !== 'number') return;
      if (r.status === 200) assert.equal(r.json.contentItems[0].text, dialog);
      const rel = await answer(d.post(`/v1/dialogs/${dialog}/release`, {}));
      releases[rel.status] = (releases[rel.status] || 0) + 1;
      if (typeof rel.status !== 'number') return;
    }
  };
  const clients = [client(0), client(1)];
  const reloads = await storm(d, () => yaml);
  stop = true;
  await Promise.all(clients);
  t.diagnostic(`${reloads} reloads, ${calls} calls on new instances: ${JSON.stringify(statuses)}, releases: ${JSON.stringify(releases)}`);
  if (d.exited) await survived(d, ['s']);
  assert.ok(reloads > 10 && calls > 4, `reloads ${reloads}, calls ${calls}`);
  assert.equal(statuses[200], calls, `every call answered 200: ${JSON.stringify(statuses)}`);
  assert.deepEqual(Object.keys(releases), ['200'], `every release answered 200: ${JSON.stringify(releases)}`);
  await survived(d, ['s']);
  assert.equal((await call(d, 'echo', { dialog: 'after', arguments: { text: 'ok' } })).status, 200);
});

test('storm: a crashing shared server restarts while reloads arrive during its initialize', async (t) => {
  const yaml = base + `servers:\n  s:\n    command: ${FIXTURE}\n    args: ['--init-delay-ms', '150', '--crash-on-call', 'add']\n    truely-stateless: true\n`;
  const d = await start(yaml, { waitReady: true });
  t.after(() => d.stop());
  let stop = false, crashes = 0;
  const statuses = {};
  const crasher = (async () => {
    while (!stop) {
      const r = await answer(call(d, 'add', { arguments: { a: 1, b: 2 } }));
      statuses[r.status] = (statuses[r.status] || 0) + 1;
      if (typeof r.status !== 'number') return;
      if (r.status === 502) crashes++;
      // Three crashes: the backoff (0.5 s, 1 s, 2 s) stays within the test.
      if (crashes === 3) return;
      await sleep(20);
    }
  })();
  const reloads = await storm(d, () => yaml, 3500 * slow);
  stop = true;
  await crasher;
  t.diagnostic(`${reloads} reloads, ${crashes} crashes: ${JSON.stringify(statuses)}`);
  if (d.exited) await survived(d, ['s']);
  assert.ok(crashes >= 2, `the server crashed ${crashes} times`);
  // A call that crashes the server is a 502; one made while it restarts is
  // refused with 503 (the server is not ready). Nothing else, and never no
  // answer.
  const other = Object.keys(statuses).filter((st) => st !== '502' && st !== '503');
  assert.deepEqual(other, [], `only 502 and 503: ${JSON.stringify(statuses)}`);
  await survived(d, ['s']);
  const r = await call(d, 'echo', { arguments: { text: 'back' } });
  assert.equal(r.status, 200, r.body);
  assert.ok((await d.get('/v1/servers')).json.servers[0].restarts >= 2);
});

function freePort() {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// server-everything over streamable HTTP, behind a loopback proxy that holds
// every initialize for `delayMs`, so that reloads land inside it.
async function slowEverything(delayMs) {
  const port = await freePort();
  const child = track(spawn(EVERYTHING, ['streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'ignore'] }));
  const stopChild = () => { try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ } };
  await waitFor(() => new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => { s.destroy(); resolve(true); });
    s.on('error', () => resolve(false));
  }), 20000 * slow, 100).catch((e) => { stopChild(); throw e; });
  let inits = 0;
  const proxy = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      if (/"method"\s*:\s*"initialize"/.test(body.toString('utf8'))) {
        inits++;
        await sleep(delayMs);
      }
      const up = http.request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers }, (ur) => {
        res.writeHead(ur.statusCode, ur.headers);
        ur.pipe(res);
      });
      up.on('error', () => { res.destroy(); });
      up.end(body);
    });
  });
  await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
  return {
    port: proxy.address().port,
    inits: () => inits,
    stop: () => { proxy.closeAllConnections?.(); proxy.close(); stopChild(); },
  };
}

test('storm: HTTP upstream sessions start while reloads arrive during their initialize', async (t) => {
  const up = await slowEverything(150);
  t.after(() => up.stop());
  const web = `  web:\n    transport: streamable_http\n    url: http://127.0.0.1:${up.port}/mcp\n`;
  const yamlNone = base + '  warm_spares: 0\nservers:\n';
  const yaml = yamlNone + web;
  const d = await start(yamlNone, { waitReady: true });
  t.after(() => d.stop());
  let current = yaml;
  rewrite(d.configPath, current);
  let stop = false;
  const statuses = {}, releases = {};
  // The client's own failure (the tool never listed) fails the test after
  // the storm.
  const client = (async () => {
    await waitFor(async () => (await d.get('/v1/tools')).json.tools.some((x) => x.name === 'echo'), 20000 * slow);
    for (let i = 0; !stop && i < 200; i++) {
      const dialog = `h${i}`;
      const r = await answer(call(d, 'echo', { dialog, arguments: { message: dialog } }));
      statuses[r.status] = (statuses[r.status] || 0) + 1;
      if (typeof r.status !== 'number') return;
      const rel = await answer(d.post(`/v1/dialogs/${dialog}/release`, {}));
      releases[rel.status] = (releases[rel.status] || 0) + 1;
      if (typeof rel.status !== 'number') return;
    }
  })();
  const reloads = await storm(d, () => current);
  stop = true;
  const failed = await client.then(() => null, (e) => e);
  t.diagnostic(`${reloads} reloads, ${up.inits()} sessions initialized: ${JSON.stringify(statuses)}, releases: ${JSON.stringify(releases)}`);
  if (d.exited) await survived(d, ['web']);
  if (failed) throw failed;
  assert.ok(up.inits() >= 3, `sessions initialized: ${up.inits()}`);
  assert.deepEqual(Object.keys(statuses), ['200'], JSON.stringify(statuses));
  assert.deepEqual(Object.keys(releases), ['200'], `every release answered 200: ${JSON.stringify(releases)}`);
  await survived(d, ['web']);
  const r = await call(d, 'echo', { dialog: 'after', arguments: { message: 'still' } });
  assert.equal(r.status, 200, r.body);
  assert.equal(r.json.contentItems[0].text, 'Echo: still');
});


test('storm: a replacement being prepared goes on through reloads of the same file', async (t) => {
  const v1 = base + `servers:\n  s:\n    command: ${FIXTURE}\n    truely-stateless: true\n`;
  const v2 = base + `servers:\n  s:\n    command: ${FIXTURE}\n    args: ['--init-delay-ms', '400', '--tools', '1']\n    truely-stateless: true\n`;
  const d = await start(v1, { waitReady: true });
  t.after(() => d.stop());
  const before = d.stderr.length;
  rewrite(d.configPath, v2);
  assert.deepEqual((await d.post('/v1/reload', {})).json.changed, ['s']);
  // Reloads every 50 ms for 1.5 s: the 400 ms start of the replacement
  // must finish among them, not begin again at each.
  let swappedDuring = false;
  const unanswered = [];
  const watcher = (async () => {
    for (const until = Date.now() + 1500 * slow; Date.now() < until && !swappedDuring;) {
      const r = await answer(d.get('/v1/tools'));
      if (r.status !== 200) unanswered.push(r.status);
      else swappedDuring = r.json.tools.some((x) => x.name === 'tool_0');
      await sleep(50);
    }
  })();
  const reloads = await storm(d, () => v2, 1500 * slow);
  await watcher;
  assert.deepEqual(unanswered, [], 'GET /v1/tools answered 200 throughout the storm');
  const spawned = (d.stderr.slice(before).match(/msg="server process started" server=s /g) || []).length;
  t.diagnostic(`${reloads} reloads, ${spawned} processes started for the replacement`);
  await survived(d, ['s']);
  assert.ok(swappedDuring, 'the replacement was swapped in during the storm');
  assert.equal(spawned, 1, 'one process for the replacement');
  assert.equal((await call(d, 'tool_0', { arguments: {} })).status, 200);
});

// SigBlk / SigCgt of a process, as numbers (bit n-1 for signal n).
function sigMasks(pid) {
  try {
    const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return { blk: BigInt('0x' + /SigBlk:\s*(\w+)/.exec(st)[1]), cgt: BigInt('0x' + /SigCgt:\s*(\w+)/.exec(st)[1]) };
  } catch { return null; }
}
const HUP = 1n; // SIGHUP is signal 1
// What the daemon holds during its start: SIGHUP, SIGINT, SIGUSR1 (the
// audit log's reopen), SIGTERM (libuv briefly blocks every signal around
// some calls; that is not it).
const HELD = HUP | (1n << 1n) | (1n << 9n) | (1n << 14n);

test('SIGHUP in the first milliseconds: the daemon lives, loads its file, reloads once after', async (t) => {
  const dir = tmpdir();
  const configPath = path.join(dir, 'mcp.yaml');
  fs.writeFileSync(configPath, `version: 1\nservers:\n  s:\n    command: ${FIXTURE}\n    truely-stateless: true\n`);
  let held = 0;
  for (let round = 0; round < 3; round++) {
    const child = track(spawn(bin, ['-c', configPath, '--listen', '127.0.0.1:0'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] }));
    let stderr = '', gone = null;
    child.stderr.on('data', (b) => { stderr += b; });
    const exited = new Promise((r) => child.on('exit', (code, signal) => { gone = { code, signal }; r(gone); }));
    t.after(() => { if (!gone) child.kill('SIGKILL'); });
    // spawn() returns once the child has exec'd. Before its first
    // instruction runs (the dynamic loader; under ASan the sanitizer's own
    // start, tens of ms) no program can keep a signal from killing it, so
    // the burst waits, polling, until SIGHUP is blocked or caught: from
    // then on the daemon must take it.
    let m = null;
    for (const until = Date.now() + 5000 * slow; Date.now() < until;) {
      m = sigMasks(child.pid);
      if (m === null || m.blk === HELD || (m.cgt & HUP)) break;
    }
    assert.ok(m !== null, 'the daemon exited before it took SIGHUP in hand');
    for (let i = 0; i < 5; i++) process.kill(child.pid, 'SIGHUP');
    const after = sigMasks(child.pid);
    // Sent while held (blocked until the first load is done): exactly one
    // reload follows. Sent once released: one each, up to five.
    const whileHeld = after !== null && after.blk === HELD;
    if (whileHeld) held++;
    await waitFor(() => gone || /msg=listening /.test(stderr), 10000 * slow, 10);
    assert.equal(gone, null, `the daemon died of an early SIGHUP: ${JSON.stringify(gone)}\n${stderr}`);
    const addr = /msg=listening addr=("?)([^"\s]+)\1/.exec(stderr)[2];
    const port = Number(addr.slice(addr.lastIndexOf(':') + 1));
    const get = (p) => new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: p }, (res) => {
        let body = '';
        res.on('data', (c) => { body += c; });
        res.on('end', () => resolve({ status: res.statusCode, json: JSON.parse(body) }));
      }).on('error', reject);
    });
    await waitFor(async () => (await get('/readyz')).status === 200, 20000 * slow);
    const servers = (await get('/v1/servers')).json.servers;
    assert.ok((await get('/v1/tools')).json.tools.some((x) => x.name === 'echo'), 'the file was loaded');
    await waitFor(() => /msg=reloading [^\n]*trigger=sighup/.test(stderr), 10000 * slow);
    await sleep(300);
    const reloads = (stderr.match(/msg=reloading [^\n]*trigger=sighup/g) || []).length;
    if (whileHeld) assert.equal(reloads, 1, `SIGHUPs before the first load make one reload after it:\n${stderr}`);
    else assert.ok(reloads >= 1 && reloads <= 5, `${reloads} reloads`);
    assert.ok(stderr.indexOf('msg=listening') < stderr.indexOf('msg=reloading'), 'the reload ran after the first load');
    // The held mask is the daemon's alone: its children start with none.
    const pid = servers[0].instances.find((x) => x.pid).pid;
    assert.equal(sigMasks(pid).blk, 0n, 'a child inherits no blocked signal');
    child.kill('SIGTERM');
    const r = await exited;
    assert.equal(r.code, 0, `clean stop:\n${stderr.slice(-4000)}`);
  }
  t.diagnostic(`${held} of 3 bursts arrived while SIGHUP was held`);
  assert.ok(held >= 1, 'SIGHUP was held from the start until the first load was done');
});

test('SIGHUP while the daemon drains on its way out is ignored', async (t) => {
  const d = await start(`version: 1\nservers:\n  s:\n    command: ${FIXTURE}\n    args: ['--delay-ms', '1000']\n    truely-stateless: true\n`, { waitReady: true });
  t.after(() => d.stop('SIGKILL'));
  const slowCall = call(d, 'echo', { arguments: { text: 'drained' } });
  await sleep(200);
  d.child.kill('SIGTERM');
  await d.waitLog(/msg=stopping/);
  process.kill(d.pid, 'SIGHUP');
  const r = await slowCall;
  assert.equal(r.status, 200, 'the call in flight finished');
  const end = await d.exitPromise;
  assert.deepEqual(end, { code: 0, signal: null }, d.stderr.slice(-4000));
});
