// WebSocket upstreams (transport: websocket, seed 002) against
// test/fixtures/ws_server.mjs, a WebSocket MCP server on the `ws` package.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { start, waitFor, root, slow, sleep, track } from './lib/harness.mjs';

const FIXTURE = path.join(root, 'test/fixtures/ws_server.mjs');

function freePort() {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// Starts the fixture (on `port` when given) and resolves once it listens.
function wsServer(t, mode = 'normal', port = 0) {
  return new Promise((resolve, reject) => {
    const child = track(spawn(process.execPath, [FIXTURE], { env: { ...process.env, MODE: mode, PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] }));
    t.after(() => { try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ } });
    let out = '';
    child.stdout.on('data', (b) => {
      out += b;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve({ port: Number(m[1]), child, stats: async () => (await fetch(`http://127.0.0.1:${m[1]}/stats`)).json() });
    });
    child.on('exit', (code) => reject(new Error(`ws fixture exited ${code}`)));
  });
}

test('websocket: catalog, calls, headers with ${VAR}, one connection per leased dialog', async (t) => {
  const up = await wsServer(t);
  const d = await start(`version: 1
servers:
  rt:
    transport: websocket
    url: ws://127.0.0.1:${up.port}/ws
    headers: {Authorization: 'Bearer \${WS_TOKEN}'}
    transform: [{prefix: 'rt_'}]
`, { waitReady: true, env: { WS_TOKEN: 'ws-secret-123' } });
  t.after(() => d.stop());
  const tools = (await d.get('/v1/tools?toolset=rt')).json.tools.map((x) => x.name).sort();
  assert.deepEqual(tools, ['rt_echo', 'rt_flood', 'rt_whoami']);
  const a = await d.post('/v1/tools/rt_echo/call', { dialog: 'a', arguments: { message: 'over ws' } });
  assert.equal(a.status, 200, a.body);
  assert.equal(a.json.contentItems[0].text, 'Echo: over ws');
  const st = await up.stats();
  assert.equal(st.headers.authorization, 'Bearer ws-secret-123');
  assert.ok(st.protocols.every((p) => p === 'mcp'), JSON.stringify(st.protocols));
  // Each dialog gets its own instance, hence its own WebSocket connection.
  const wa = (await d.post('/v1/tools/rt_whoami/call', { dialog: 'a', arguments: {} })).json.contentItems[0].text;
  const wb = (await d.post('/v1/tools/rt_whoami/call', { dialog: 'b', arguments: {} })).json.contentItems[0].text;
  const wa2 = (await d.post('/v1/tools/rt_whoami/call', { dialog: 'a', arguments: {} })).json.contentItems[0].text;
  assert.equal(wa, wa2, 'a dialog keeps its connection');
  assert.notEqual(wa, wb, 'another dialog has another connection');
  // The secret never shows in the server view.
  const servers = (await d.get('/v1/servers')).body;
  assert.ok(!servers.includes('ws-secret-123'));
  // Releasing the lease closes that dialog's connection.
  const connA = Number(wa.split(' ')[1]);
  assert.ok(!(await up.stats()).closed.includes(connA));
  assert.equal((await d.post('/v1/dialogs/a/release', {})).status, 200);
  await waitFor(async () => (await up.stats()).closed.includes(connA), 10000 * slow);
});

test('websocket: fragmented messages are reassembled; binary frames are ignored', async (t) => {
  const frag = await wsServer(t, 'fragment');
  const bin = await wsServer(t, 'binary');
  const d = await start(`version: 1
servers:
  frag:
    transport: websocket
    truely-stateless: true
    url: ws://127.0.0.1:${frag.port}/
    transform: [{prefix: 'f_'}]
  bin:
    transport: websocket
    truely-stateless: true
    url: ws://127.0.0.1:${bin.port}
    transform: [{prefix: 'b_'}]
`, { waitReady: true });
  t.after(() => d.stop());
  const f = await d.post('/v1/tools/f_echo/call', { arguments: { message: 'in pieces' } });
  assert.equal(f.status, 200, f.body);
  assert.equal(f.json.contentItems[0].text, 'Echo: in pieces');
  const b = await d.post('/v1/tools/b_echo/call', { arguments: { message: 'text only' } });
  assert.equal(b.status, 200, b.body);
  assert.equal(b.json.contentItems[0].text, 'Echo: text only');
});

test('websocket: a server down at start is a Problem, is retried, and recovers', async (t) => {
  const port = await freePort();
  const d = await start(`version: 1\nservers:\n  late:\n    transport: websocket\n    truely-stateless: true\n    url: ws://127.0.0.1:${port}/\n`, { waitReady: true });
  t.after(() => d.stop());
  assert.equal((await d.get('/v1/servers')).json.servers[0].state, 'failed');
  const problems = (await d.get('/v1/problems')).json.problems;
  assert.ok(problems.some((p) => p.server === 'late' && p.severity === 'error'), JSON.stringify(problems));
  await wsServer(t, 'normal', port);
  await waitFor(async () => (await d.get('/v1/servers')).json.servers[0].state === 'ready', 60000 * slow, 250);
  const r = await d.post('/v1/tools/echo/call', { arguments: { message: 'late but here' } });
  assert.equal(r.status, 200, r.body);
  assert.ok((await d.get('/v1/servers')).json.servers[0].restarts >= 1);
});

test('websocket: a message over 16 MiB fails the instance with a Problem; the daemon carries on', async (t) => {
  const flood = await wsServer(t, 'flood-init');
  const ok = await wsServer(t);
  const d = await start(`version: 1
servers:
  flood:
    transport: websocket
    truely-stateless: true
    url: ws://127.0.0.1:${flood.port}/
  fine:
    transport: websocket
    url: ws://127.0.0.1:${ok.port}/
`, { waitReady: true });
  t.after(() => d.stop());
  const problem = await waitFor(async () => (await d.get('/v1/problems')).json.problems.find((p) => p.server === 'flood' && p.severity === 'error'));
  assert.match(problem.message, /16 MiB/);
  // A call answered with a message over the cap: 502, the next call gets a new instance.
  const big = await d.post('/v1/tools/flood/call', { dialog: 'x', arguments: {} });
  assert.equal(big.status, 502, big.body);
  const after = await d.post('/v1/tools/echo/call', { dialog: 'x', arguments: { message: 'still here' } });
  assert.equal(after.status, 200, after.body);
  assert.equal(after.json.lease.restarted, true);
});

test('websocket: stalled servers (no upgrade answer, no initialize answer) never block /healthz', async (t) => {
  const sockets = new Set();
  const tcp = net.createServer((s) => { sockets.add(s); s.on('error', () => {}); });
  await new Promise((r) => tcp.listen(0, '127.0.0.1', r));
  t.after(() => { tcp.close(); sockets.forEach((s) => s.destroy()); });
  const quiet = await wsServer(t, 'stall-init');
  const d = await start(`version: 1
servers:
  noupgrade:
    transport: websocket
    truely-stateless: true
    timeout: 2s
    url: ws://127.0.0.1:${tcp.address().port}/
  noinit:
    transport: websocket
    truely-stateless: true
    request_timeout: 3s
    url: ws://127.0.0.1:${quiet.port}/
`);
  t.after(() => d.stop());
  await waitFor(() => sockets.size > 0);
  for (let i = 0; i < 20; i++) {
    const t0 = Date.now();
    const r = await d.get('/healthz');
    assert.equal(r.status, 200);
    assert.ok(Date.now() - t0 < 1000 * slow, 'the loop is never blocked by a stalled upstream');
  }
  const problems = await waitFor(async () => {
    const p = (await d.get('/v1/problems')).json.problems;
    return p.some((x) => x.server === 'noupgrade') && p.some((x) => x.server === 'noinit') ? p : null;
  }, 20000 * slow, 200);
  assert.match(problems.find((x) => x.server === 'noupgrade').message, /within 2000 ms/);
  assert.equal((await d.get('/readyz')).status, 200);
});

// A loopback listener that accepts and never answers: a TLS or upgrade
// handshake to it waits until the instance's own timeout.
async function silentListener(t) {
  const sockets = new Set();
  const tcp = net.createServer((s) => { sockets.add(s); s.on('error', () => {}); s.on('close', () => sockets.delete(s)); });
  await new Promise((r) => tcp.listen(0, '127.0.0.1', r));
  t.after(() => { tcp.close(); sockets.forEach((s) => s.destroy()); });
  return { port: tcp.address().port, sockets };
}

test('websocket: ws:// to a host that is not loopback is refused; wss:// is accepted by the config', async (t) => {
  const silent = await silentListener(t);
  // 0.0.0.0 is not a loopback address, so ws:// refuses it once resolved,
  // before any connection (which would stay on this host anyway).
  const d = await start(`version: 1
servers:
  far:
    transport: websocket
    url: ws://0.0.0.0:9/mcp
  tls:
    transport: websocket
    url: wss://127.0.0.1:${silent.port}/mcp
    timeout: 1s
`, { waitReady: true });
  t.after(() => d.stop());
  const servers = (await d.get('/v1/servers')).json.servers;
  const far = servers.find((s) => s.id === 'far');
  assert.equal(far.state, 'failed');
  assert.match(far.lastError, /wss:\/\//);
  const tls = servers.find((s) => s.id === 'tls');
  assert.equal(tls.config.ok, true, JSON.stringify(tls));
  await sleep(10);
});

// Every failed handshake used to destroy the shared lws context, whose
// eventfd lws closes twice: a connection the gateway accepted in between
// got that descriptor and was closed under it, and libuv aborted.
test('websocket: handshakes that time out again and again while /v1/servers is polled', async (t) => {
  const silent = await silentListener(t);
  const d = await start(`version: 1
servers:
  tls:
    transport: websocket
    url: wss://127.0.0.1:${silent.port}/mcp
    timeout: 1s
`);
  t.after(() => d.stop());
  // Four pollers, each a new connection per request: many accepts, so one
  // lands between the two closes of the eventfd.
  const until = Date.now() + 15000;
  let polls = 0;
  const poller = async () => {
    while (Date.now() < until && !d.exited) {
      const r = await d.get('/v1/servers');
      assert.equal(r.status, 200);
      polls++;
    }
  };
  await Promise.all([poller(), poller(), poller(), poller()]);
  assert.equal(d.exited, null, `the daemon died:\n${d.stderr.slice(-4000)}`);
  assert.ok(polls > 10);
  const tls = (await d.get('/v1/servers')).json.servers.find((s) => s.id === 'tls');
  assert.match(tls.lastError || '', /within 1000 ms/, JSON.stringify(tls));
});
