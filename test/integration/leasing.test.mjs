// Per-dialog leasing, release, spares, caps, failures, call policy and
// artifacts (design §6–§7, seeds 000, 001, 004).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { start, waitFor, sleep, fixtures, nodeModules, tmpdir, slow } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const THINKING = path.join(nodeModules, '.bin/mcp-server-sequential-thinking');
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const alive = (pid) => {
  try { return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] !== 'Z'; } catch { return false; }
};
const call = (d, tool, dialog, args = {}, extra = {}) =>
  d.post(`/v1/tools/${tool}/call`, { dialog, arguments: args, ...extra });
const leasesOf = async (d, dialog) =>
  ((await d.get('/v1/dialogs')).json.dialogs.find((x) => x.dialog === dialog) || { leases: [] }).leases;

function zombiesOf(pid) {
  let n = 0;
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const st = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      if (f[0] === 'Z' && Number(f[1]) === pid) n++;
    } catch { /* gone */ }
  }
  return n;
}

test('two dialogs never share a stateful server; the reminder comes once', async (t) => {
  const d = await start(`version: 1\nservers:\n  think:\n    command: ${THINKING}\n`, { waitReady: true });
  t.after(() => d.stop());
  const thought = (n) => ({ thought: `step ${n}`, nextThoughtNeeded: true, thoughtNumber: n, totalThoughts: 5 });
  const a1 = await call(d, 'sequentialthinking', 'alice', thought(1));
  assert.equal(a1.status, 200, a1.body);
  assert.match(a1.json.lease.reminder, /mcp_release\(\{"serverId":"think"\}\)/);
  const a2 = await call(d, 'sequentialthinking', 'alice', thought(2));
  assert.equal(a2.json.lease.reminder, undefined, 'later responses carry no reminder');
  const b1 = await call(d, 'sequentialthinking', 'bob/worker', thought(1));
  assert.ok(b1.json.lease.reminder);
  const len = (r) => JSON.parse(r.json.contentItems[0].text).thoughtHistoryLength;
  assert.equal(len(a2), 2);
  assert.equal(len(b1), 1, 'bob does not see alice\'s history');
  const [la] = await leasesOf(d, 'alice');
  const [lb] = await leasesOf(d, 'bob/worker');
  assert.ok(la.pid > 0 && lb.pid > 0);
  assert.notEqual(la.pid, lb.pid);
  assert.equal(la.server, 'think');
  for (const k of ['instance', 'since', 'lastUsed', 'inFlight']) assert.ok(k in la, k);
  const none = await d.post('/v1/tools/sequentialthinking/call', { arguments: thought(1) });
  assert.equal(none.status, 400);
  assert.equal(none.json.error.code, 'dialog_required');
  for (const bad of ['', 'a/b/c', '../x', 'x y', 'a'.repeat(65)]) {
    const r = await call(d, 'sequentialthinking', bad, thought(1));
    assert.equal(r.status, 400, `dialog ${JSON.stringify(bad)}`);
  }
});

test('a truely-stateless server runs one process for every dialog', async (t) => {
  const d = await start(`version: 1\nservers:\n  fx:\n    truely-stateless: true\n    command: ${FIXTURE}\n`, { waitReady: true });
  t.after(() => d.stop());
  for (const dialog of ['a', 'b', 'c/d', undefined]) {
    const r = await call(d, 'echo', dialog, { text: 'x' });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.json.lease, undefined);
  }
  const s = (await d.get('/v1/servers')).json.servers[0];
  assert.equal(s.instances.length, 1);
  assert.equal(s.instances[0].role, 'shared');
});

test('release by tool and by route stops the process; idle leases are released', async (t) => {
  const d = await start(`version: 1\ngateway:\n  lease_idle_timeout: 1s\n  warm_spares: 0\nservers:\n  fx:\n    command: ${FIXTURE}\n  fy:\n    command: ${FIXTURE}\n    transform: [{prefix: y_}]\n`, { waitReady: true });
  t.after(() => d.stop());
  await call(d, 'echo', 'd1', { text: 'a' });
  const pid = (await leasesOf(d, 'd1'))[0].pid;
  const rel = await call(d, 'mcp_release', 'd1', { serverId: 'fx' });
  assert.equal(rel.status, 200);
  assert.equal(rel.json.isError, false);
  assert.match(rel.json.contentItems[0].text, /released/);
  assert.deepEqual(await leasesOf(d, 'd1'), []);
  await waitFor(() => !alive(pid), 8000 * slow);
  const again = await call(d, 'mcp_release', 'd1', { serverId: 'fx' });
  assert.match(again.json.contentItems[0].text, /no lease/);
  assert.equal((await call(d, 'mcp_release', 'd1', { serverId: 'nope' })).json.isError, true);

  await call(d, 'echo', 'd2', { text: 'a' });
  await call(d, 'y_echo', 'd2', { text: 'a' });
  const r = await d.post('/v1/dialogs/d2/release', { serverId: 'fy' });
  assert.deepEqual(r.json, { released: ['fy'] });
  const all = await d.post('/v1/dialogs/d2/release', {});
  assert.deepEqual(all.json, { released: ['fx'] });
  assert.equal((await d.post('/v1/dialogs/d2/release', {})).status, 404);
  assert.equal((await d.post('/v1/dialogs/d3/release', { serverId: 'zzz' })).status, 404);

  await call(d, 'echo', 'root/self', { text: 'a' });
  assert.equal((await leasesOf(d, 'root/self')).length, 1);
  assert.deepEqual((await d.post('/v1/dialogs/root/self/release', {})).json, { released: ['fx'] });
  await call(d, 'echo', 'idle', { text: 'a' });
  await waitFor(async () => (await leasesOf(d, 'idle')).length === 0, 10000 * slow);
});

test('warm spares: the discovery instance is the first; the cap answers 429', async (t) => {
  const d = await start(`version: 1\ngateway:\n  warm_spares: 1\n  max_instances_per_server: 3\nservers:\n  fx:\n    command: ${FIXTURE}\n`, { waitReady: true });
  t.after(() => d.stop());
  let s = (await d.get('/v1/servers')).json.servers[0];
  assert.equal(s.instances.length, 1);
  assert.equal(s.instances[0].role, 'spare');
  const sparePid = s.instances[0].pid;
  const r1 = await call(d, 'echo', 'd1', { text: 'a' });
  assert.equal(r1.status, 200);
  assert.equal((await leasesOf(d, 'd1'))[0].pid, sparePid, 'the first lease takes the warm spare');
  await waitFor(async () => (await d.get('/v1/servers')).json.servers[0].instances.filter((i) => i.role === 'spare' && i.state === 'ready').length === 1);
  assert.equal((await call(d, 'echo', 'd2', { text: 'a' })).status, 200);
  assert.equal((await call(d, 'echo', 'd3', { text: 'a' })).status, 200);
  s = (await d.get('/v1/servers')).json.servers[0];
  assert.equal(s.instances.filter((i) => i.role !== 'retired').length, 3);
  const over = await call(d, 'echo', 'd4', { text: 'a' });
  assert.equal(over.status, 429);
  assert.equal(over.headers['retry-after'], '1');
  assert.equal((await call(d, 'echo', 'd1', { text: 'b' })).status, 200, 'existing leases still work');
});

test('a leased instance that dies fails its calls with 502; the next call says restarted', async (t) => {
  const d = await start(`version: 1\nservers:\n  fx:\n    command: ${FIXTURE}\n    args: [--tools, '1', --crash-on-call, tool_0, --delay-ms, '300']\n`, { waitReady: true });
  t.after(() => d.stop());
  assert.equal((await call(d, 'echo', 'd1', { text: 'a' })).status, 200);
  const pid = (await leasesOf(d, 'd1'))[0].pid;
  const inflight = call(d, 'echo', 'd1', { text: 'slow' });
  await sleep(50);
  const crash = await call(d, 'tool_0', 'd1');
  assert.equal(crash.status, 502);
  assert.equal((await inflight).status, 502, 'in-flight calls fail at once');
  const next = await call(d, 'echo', 'd1', { text: 'b' });
  assert.equal(next.status, 200, next.body);
  assert.equal(next.json.lease.restarted, true);
  assert.notEqual((await leasesOf(d, 'd1'))[0].pid, pid);
  const later = await call(d, 'echo', 'd1', { text: 'c' });
  assert.equal(later.json.lease.restarted, undefined);
  const problems = (await d.get('/v1/problems')).json.problems;
  assert.ok(problems.some((p) => p.server === 'fx' && /exited with status 3/.test(p.message)), JSON.stringify(problems));
});

test('many calls run at once on one leased instance; limits queue then answer 429', async (t) => {
  const dir = tmpdir();
  const log = path.join(dir, 'methods.log');
  const d = await start(`version: 1
gateway:
  max_concurrent: 64
servers:
  fx:
    command: ${FIXTURE}
    args: [--delay-ms, '400', --log, ${log}]
    mode: dynamic
    default_tool_config: {max_instances: 50, timeout: 10s}
    tool_config:
      add: {max_instances: 1}
`, { waitReady: true });
  t.after(() => d.stop());
  // 20 calls of 400 ms each within a 2 s budget: only possible concurrently.
  const many = await Promise.all(Array.from({ length: 20 }, (_, i) => call(d, 'echo', 'd1', { text: `m${i}` }, { timeout_ms: 2000 * slow })));
  many.forEach((r, i) => { assert.equal(r.status, 200, r.body); assert.equal(r.json.contentItems[0].text, `m${i}`); });
  assert.equal((await leasesOf(d, 'd1')).length, 1);
  // add is capped at one call at a time: a second waits, then gives up.
  const first = call(d, 'add', 'd1', { a: 1, b: 2 });
  await sleep(50);
  const second = await call(d, 'add', 'd1', { a: 1, b: 2 }, { timeout_ms: 150 });
  assert.equal(second.status, 429);
  assert.equal(second.json.error.code, 'limit_reached');
  assert.equal((await first).status, 200);
  // A queued call runs once the slot frees within its timeout.
  const [q1, q2] = await Promise.all([call(d, 'add', 'd1', { a: 1, b: 1 }), call(d, 'add', 'd1', { a: 2, b: 2 }, { timeout_ms: 3000 })]);
  assert.equal(q1.status, 200);
  assert.equal(q2.status, 200);
  // A client that hangs up cancels its call upstream.
  await new Promise((resolve) => {
    const req = http.request({ host: d.host, port: d.port, method: 'POST', path: '/v1/tools/sleep/call', headers: { 'content-type': 'application/json' } });
    req.on('error', () => resolve());
    req.end(JSON.stringify({ dialog: 'd1', arguments: { ms: 5000 } }));
    setTimeout(() => { req.destroy(); resolve(); }, 200);
  });
  await waitFor(() => fs.readFileSync(log, 'utf8').includes('notifications/cancelled'));
});

test('a queued call\'s timeout runs from its arrival, not from when it gets a slot', async (t) => {
  // sleep is capped at one call at a time with a 1.5 s timeout. The second
  // call waits about 1.2 s behind the first, so it has about 0.3 s left when
  // it is sent: it times out about 1.5 s after it arrived (504), where a
  // timeout restarted at the slot would let its 1.2 s sleep finish (200)
  // about 2.4 s after it arrived.
  const T = 1500 * slow, SLEEP = 1200 * slow;
  const d = await start(`version: 1
servers:
  fx:
    command: ${FIXTURE}
    mode: dynamic
    default_tool_config: {max_instances: 50, timeout: 10s}
    tool_config:
      sleep: {max_instances: 1, timeout: ${T}ms}
`, { waitReady: true });
  t.after(() => d.stop());
  assert.equal((await call(d, 'echo', 'q1', { text: 'warm' })).status, 200);
  const first = call(d, 'sleep', 'q1', { ms: SLEEP });
  await sleep(50);
  const arrived = Date.now();
  const second = await call(d, 'sleep', 'q1', { ms: SLEEP });
  const took = Date.now() - arrived;
  assert.equal(second.status, 504, second.body);
  assert.equal(second.json.error.code, 'call_timeout');
  assert.ok(took < T + SLEEP * 0.6, `the queued call ended ${took} ms after it arrived (timeout ${T} ms)`);
  assert.equal((await first).status, 200);
  // A call that gets its slot with time to spare still runs to the end.
  const [a, b] = await Promise.all([call(d, 'sleep', 'q1', { ms: 100 }), call(d, 'sleep', 'q1', { ms: 100 })]);
  assert.equal(a.status, 200, a.body);
  assert.equal(b.status, 200, b.body);
});

test('images become artifacts; the artifact route refuses escapes', async (t) => {
  const d = await start(`version: 1\ngateway:\n  artifacts_dir: ./art\nservers:\n  fx:\n    command: ${FIXTURE}\n`, { waitReady: true });
  t.after(() => d.stop());
  const r = await call(d, 'image', 'chat1/agent', {});
  assert.equal(r.status, 200, r.body);
  const item = r.json.contentItems.find((x) => x.type === 'input_image');
  assert.ok(item, JSON.stringify(r.json));
  assert.equal(item.mimeType, 'image/png');
  const png = Buffer.from(PNG_1X1, 'base64');
  assert.equal(item.byteLength, png.length);
  assert.equal(item.artifact.rootId, 'chat1');
  assert.equal(item.artifact.selfId, 'agent');
  assert.match(item.artifact.relPath, /^artifacts\/mcp\/fx\/image\/\d{8}T\d{9}Z-[0-9a-f-]{36}\.png$/);
  const onDisk = fs.readFileSync(path.join(d.dir, 'art/chat1/agent', item.artifact.relPath));
  assert.deepEqual(onDisk, png);
  // the item carries the URL that serves it back
  const url = item.artifact.url;
  assert.equal(url, `/api/dialogs/chat1/agent/artifact?path=${item.artifact.relPath}`);
  const got = await new Promise((resolve, reject) => {
    http.get({ host: d.host, port: d.port, path: url }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
  assert.equal(got.status, 200);
  assert.equal(got.headers['content-type'], 'image/png');
  assert.equal(got.headers['x-content-type-options'], 'nosniff');
  assert.deepEqual(got.body, png);
  fs.symlinkSync('/etc/passwd', path.join(d.dir, 'art/chat1/agent/artifacts/mcp/fx/image/link.png'));
  fs.writeFileSync(path.join(d.dir, 'art/secret.txt'), 'secret');
  const { spawnSync } = await import('node:child_process');
  spawnSync('mkfifo', [path.join(d.dir, 'art/chat1/agent/artifacts/mcp/fx/image/fifo.png')]);
  for (const p of ['../../secret.txt', '/etc/passwd', 'artifacts/../../../secret.txt', 'artifacts/mcp/fx/image/link.png',
    'artifacts/mcp/fx/image/%00x', 'artifacts', 'artifacts//mcp', 'other/file', 'artifacts/./mcp',
    'artifacts/mcp/fx/image/fifo.png']) {
    const res = await d.get(`/api/dialogs/chat1/agent/artifact?path=${p.includes('%') ? p : encodeURIComponent(p)}`);
    assert.equal(res.status, 404, p);
    assert.ok(!res.body.includes('root:'), p);
  }
  assert.equal((await d.get(`/api/dialogs/chat2/agent/artifact?path=${encodeURIComponent(item.artifact.relPath)}`)).status, 404, 'another dialog cannot read it');
  // A hard link names the file itself, wherever it lives on the same file
  // system: O_NOFOLLOW does not see it, the link count does.
  fs.writeFileSync(path.join(d.dir, 'outside.txt'), 'outside the artifacts tree');
  fs.linkSync(path.join(d.dir, 'outside.txt'), path.join(d.dir, 'art/chat1/agent/artifacts/mcp/fx/image/hard.png'));
  const hard = await d.get(`/api/dialogs/chat1/agent/artifact?path=${encodeURIComponent('artifacts/mcp/fx/image/hard.png')}`);
  assert.equal(hard.status, 404, hard.body);
  assert.ok(!hard.body.includes('outside the'));
});

test('every saved artifact carries its URL: audio described by an input_text too, and anonymous calls', async (t) => {
  const dir = tmpdir();
  const tools = path.join(dir, 'tools.json');
  fs.writeFileSync(tools, JSON.stringify([{ name: 'audio', description: 'a sound', inputSchema: { type: 'object' } },
    { name: 'image', description: 'a picture', inputSchema: { type: 'object' } }]));
  const d = await start(`version: 1\ngateway:\n  artifacts_dir: ./art\nservers:
  fx:\n    command: ${FIXTURE}\n    args: ['--tools-json', '${tools}']
  st:\n    command: ${FIXTURE}\n    args: ['--tools-json', '${tools}']\n    truely-stateless: true\n    transform: [{prefix: 'st_'}]
`, { waitReady: true });
  t.after(() => d.stop());
  const r = await call(d, 'audio', 'chat1', {});
  assert.equal(r.status, 200, r.body);
  const [item] = r.json.contentItems;
  assert.equal(item.type, 'input_text');
  assert.match(item.text, /^\[audio content \(audio\/wav, 16 bytes\) saved as artifact artifacts\/mcp\/fx\/audio\/\S+\.wav\]$/);
  assert.deepEqual(Object.keys(item.artifact), ['rootId', 'selfId', 'relPath', 'url']);
  assert.equal(item.artifact.url, `/api/dialogs/chat1/chat1/artifact?path=${item.artifact.relPath}`);
  const got = await d.get(item.artifact.url);
  assert.equal(got.status, 200);
  assert.equal(got.headers['content-type'], 'audio/wav');
  // a call without a dialog stores under anonymous/anonymous, and says so
  const anon = await call(d, 'st_image', undefined, {});
  assert.equal(anon.status, 200, anon.body);
  const img = anon.json.contentItems[0].artifact;
  assert.equal(img.url, `/api/dialogs/anonymous/anonymous/artifact?path=${img.relPath}`);
  assert.equal((await d.get(img.url)).status, 200);
});

// The files of one dialog's artifacts, oldest first by name (names start with their time).
const artifactFiles = (art, dialog) => {
  const dir = path.join(art, dialog, 'artifacts/mcp/fx/image');
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
};
const treeBytes = (dir) => fs.readdirSync(dir, { withFileTypes: true }).reduce((n, e) =>
  n + (e.isDirectory() ? treeBytes(path.join(dir, e.name)) : fs.statSync(path.join(dir, e.name)).size), 0);

test('artifact caps: the oldest go first, per dialog and in all; the index survives a restart', async (t) => {
  const png = Buffer.from(PNG_1X1, 'base64');
  const n = png.length; // 70 bytes: a dialog holds two, the tree four
  const d = await start(`version: 1
gateway:
  artifacts_dir: ./art
  artifacts_max_bytes_per_dialog: ${2 * n + 10}
  artifacts_max_bytes: ${4 * n + 10}
servers:
  fx:
    command: ${FIXTURE}
`, { waitReady: true });
  t.after(() => d.stop());
  const art = path.join(d.dir, 'art');
  const image = async (dialog) => {
    const r = await call(d, 'image', dialog, {});
    assert.equal(r.status, 200, r.body);
    const item = r.json.contentItems.find((x) => x.type === 'input_image');
    assert.ok(item, r.body);
    return item.artifact.relPath;
  };
  const fetch = (dialog, rel) => d.get(`/api/dialogs/${dialog}/artifact?path=${encodeURIComponent(rel)}`);
  const a = [];
  for (let i = 0; i < 4; i++) a.push(await image('a/x'));
  assert.deepEqual(artifactFiles(art, 'a/x'), a.slice(2).map((p) => path.basename(p)));
  assert.equal((await fetch('a/x', a[0])).status, 404);
  const newest = await fetch('a/x', a[3]);
  assert.equal(newest.status, 200);
  assert.equal(Number(newest.headers['content-length']), n);
  const b = [];
  for (let i = 0; i < 2; i++) b.push(await image('b/y'));
  assert.equal(treeBytes(art), 4 * n);
  // A fifth file passes the global cap: the oldest of all (a's third) goes.
  const c0 = await image('c/z');
  assert.deepEqual(artifactFiles(art, 'a/x'), [path.basename(a[3])]);
  assert.deepEqual(artifactFiles(art, 'b/y'), b.map((p) => path.basename(p)));
  assert.deepEqual(artifactFiles(art, 'c/z'), [path.basename(c0)]);
  assert.ok(treeBytes(art) <= 4 * n + 10, `${treeBytes(art)} bytes on disk`);
  // Files the gateway did not write there are neither counted nor removed.
  fs.writeFileSync(path.join(art, 'a/x/artifacts/notes.txt'), 'x'.repeat(1000));
  await d.stop();

  // Another daemon on the same tree with a lower cap reads the tree on its
  // first save and trims every dialog to one file, the newest.
  const d2 = await start(`version: 1
gateway:
  artifacts_dir: ${art}
  artifacts_max_bytes_per_dialog: ${n + 10}
servers:
  fx:
    command: ${FIXTURE}
`, { waitReady: true });
  t.after(() => d2.stop());
  const r = await call(d2, 'image', 'c/z', {});
  assert.equal(r.status, 200, r.body);
  const c1 = r.json.contentItems[0].artifact.relPath;
  assert.deepEqual(artifactFiles(art, 'a/x'), [path.basename(a[3])]);
  assert.deepEqual(artifactFiles(art, 'b/y'), [path.basename(b[1])]);
  assert.deepEqual(artifactFiles(art, 'c/z'), [path.basename(c1)]);
  assert.equal(fs.readFileSync(path.join(art, 'a/x/artifacts/notes.txt'), 'utf8').length, 1000);
  await d2.stop();

  // An artifact larger than a cap is not saved, and the result says so.
  const d3 = await start(`version: 1
gateway:
  artifacts_dir: ${art}
  artifacts_max_bytes_per_dialog: ${n - 1}
servers:
  fx:
    command: ${FIXTURE}
`, { waitReady: true });
  t.after(() => d3.stop());
  const big = await call(d3, 'image', 'd/w', {});
  assert.equal(big.status, 200, big.body);
  assert.deepEqual(big.json.contentItems, [{ type: 'input_text', text: `[image content of ${n} bytes was not saved: it is larger than the gateway's artifact cap]` }]);
  assert.deepEqual(artifactFiles(art, 'd/w'), []);
  assert.deepEqual(artifactFiles(art, 'c/z'), [path.basename(c1)], 'nothing was removed for it');
});

test('500 lease/release cycles leave no zombie and no leaked descriptor', async (t) => {
  const d = await start(`version: 1\ngateway:\n  warm_spares: 2\n  max_instances_per_server: 64\nservers:\n  fx:\n    command: ${FIXTURE}\n`, { waitReady: true });
  t.after(() => d.stop());
  const fds = () => fs.readdirSync(`/proc/${d.pid}/fd`).length;
  // Both counts are taken at rest: every instance retired and reaped, the
  // spares ready (a released instance still draining holds its pipes).
  const atRest = async () => {
    const s = (await d.get('/v1/servers')).json.servers[0];
    return s.instances.every((i) => i.role !== 'retired') &&
      s.instances.filter((i) => i.role === 'spare' && i.state === 'ready').length === 2 &&
      zombiesOf(d.pid) === 0;
  };
  await call(d, 'echo', 'warmup', { text: 'x' });
  await d.post('/v1/dialogs/warmup/release', {});
  await waitFor(atRest, 30000 * slow, 100);
  const before = fds();
  const cycles = 500, lanes = 10;
  await Promise.all(Array.from({ length: lanes }, async (_, lane) => {
    for (let i = lane; i < cycles; i += lanes) {
      const r = await call(d, 'echo', `cyc${i}`, { text: 'x' }, { timeout_ms: 20000 });
      assert.equal(r.status, 200, r.body);
      assert.deepEqual((await d.post(`/v1/dialogs/cyc${i}/release`, {})).json, { released: ['fx'] });
    }
  }));
  await waitFor(atRest, 30000 * slow, 200);
  assert.equal(zombiesOf(d.pid), 0);
  const after = fds();
  assert.ok(Math.abs(after - before) <= 2, `descriptors before ${before}, after ${after}`);
});
