// Streamable HTTP and legacy SSE upstreams (design §4, §9; seed 002) against
// server-everything from npm, started here on loopback ports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { start, waitFor, nodeModules, slow, track } from './lib/harness.mjs';

const EVERYTHING = path.join(nodeModules, '.bin/mcp-server-everything');

function freePort() {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function everything(mode) {
  const port = await freePort();
  const child = track(spawn(EVERYTHING, [mode], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] }));
  child.stderr.on('data', () => {});
  await waitFor(() => new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => { s.destroy(); resolve(true); });
    s.on('error', () => resolve(false));
  }), 20000 * slow, 100);
  return { port, child, stop: () => { try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ } } };
}

test('streamable HTTP: catalog, calls, one MCP session per dialog, release ends the session', async (t) => {
  const up = await everything('streamableHttp');
  t.after(() => up.stop());
  const d = await start(`version: 1
servers:
  web:
    transport: streamable_http
    url: http://127.0.0.1:${up.port}/mcp
    headers: {X-Test: 'literal'}
    transform: [{prefix: 'w_'}]
`, { waitReady: true });
  t.after(() => d.stop());
  const tools = (await d.get('/v1/tools?toolset=web')).json.tools.map((x) => x.name);
  assert.ok(tools.includes('w_echo'), JSON.stringify(tools));
  const a = await d.post('/v1/tools/w_echo/call', { dialog: 'a', arguments: { message: 'over http' } });
  assert.equal(a.status, 200, a.body);
  assert.equal(a.json.contentItems[0].text, 'Echo: over http');
  assert.ok(a.json.lease.reminder);
  await d.post('/v1/tools/w_echo/call', { dialog: 'b', arguments: { message: 'x' } });
  const dialogs = (await d.get('/v1/dialogs')).json.dialogs;
  const sa = dialogs.find((x) => x.dialog === 'a').leases[0].session;
  const sb = dialogs.find((x) => x.dialog === 'b').leases[0].session;
  assert.ok(sa && sb, JSON.stringify(dialogs));
  assert.notEqual(sa, sb, 'each dialog has its own MCP session');
  assert.equal((await d.post('/v1/dialogs/a/release', {})).status, 200);
  // The released session was DELETEd upstream: it is unknown to the server now.
  await waitFor(async () => {
    const r = await fetch(`http://127.0.0.1:${up.port}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sa, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    return r.status === 404 || r.status === 400;
  });
  const img = await d.post('/v1/tools/w_get-tiny-image/call', { dialog: 'b', arguments: {} });
  assert.equal(img.status, 200, img.body);
  assert.ok(img.json.contentItems.some((x) => x.type === 'input_image' && x.mimeType === 'image/png'));
});

test('streamable HTTP: a lost session restarts the lease', async (t) => {
  let up = await everything('streamableHttp');
  t.after(() => up.stop());
  const d = await start(`version: 1\nservers:\n  web:\n    transport: http\n    url: http://127.0.0.1:${up.port}/mcp\n`, { waitReady: true });
  t.after(() => d.stop());
  assert.equal((await d.post('/v1/tools/echo/call', { dialog: 'a', arguments: { message: '1' } })).status, 200);
  const port = up.port;
  up.stop();
  await new Promise((r) => up.child.on('exit', r));
  const down = await d.post('/v1/tools/echo/call', { dialog: 'a', arguments: { message: '2' } });
  assert.ok([502, 503].includes(down.status), down.body);
  up = await (async () => {
    const child = track(spawn(EVERYTHING, ['streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'ignore'] }));
    const u = { port, child, stop: () => { try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ } } };
    await waitFor(() => new Promise((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    }), 20000 * slow, 100);
    return u;
  })();
  // The restarted server knows none of the old sessions: the first call
  // after it is back is refused unrun (404) and goes again on a new session
  // (design §9), so it succeeds.
  const again = await d.post('/v1/tools/echo/call', { dialog: 'a', arguments: { message: '3' } });
  assert.equal(again.status, 200, again.body);
  assert.equal(again.json.contentItems[0].text, 'Echo: 3');
  assert.equal(again.json.lease.restarted, true);
});

test('legacy HTTP+SSE transport', async (t) => {
  const up = await everything('sse');
  t.after(() => up.stop());
  const d = await start(`version: 1\nservers:\n  old:\n    transport: sse\n    truely-stateless: true\n    url: http://127.0.0.1:${up.port}/sse\n`, { waitReady: true });
  t.after(() => d.stop());
  const r = await d.post('/v1/tools/echo/call', { arguments: { message: 'legacy' } });
  assert.equal(r.status, 200, r.body);
  assert.equal(r.json.contentItems[0].text, 'Echo: legacy');
  const s = (await d.get('/v1/servers')).json.servers[0];
  assert.equal(s.transport, 'sse');
  assert.equal(s.state, 'ready');
});

test('plain http to a non-loopback host is refused', async (t) => {
  const d = await start('version: 1\nservers:\n  far:\n    transport: streamable_http\n    url: http://0.0.0.0:9/mcp\n', { waitReady: true });
  t.after(() => d.stop());
  const s = (await d.get('/v1/servers')).json.servers[0];
  assert.equal(s.state, 'failed');
  assert.match(s.lastError, /https/);
});

test('a server that is down at startup is a Problem, is retried, and recovers', async (t) => {
  const port = await freePort();
  const d = await start(`version: 1\nservers:\n  late:\n    transport: streamable_http\n    truely-stateless: true\n    url: http://127.0.0.1:${port}/mcp\n`, { waitReady: true });
  t.after(() => d.stop());
  let s = (await d.get('/v1/servers')).json.servers[0];
  assert.equal(s.state, 'failed');
  const problems = (await d.get('/v1/problems')).json.problems;
  assert.ok(problems.some((p) => p.server === 'late' && p.severity === 'error'), JSON.stringify(problems));
  const child = track(spawn(EVERYTHING, ['streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'ignore'] }));
  t.after(() => { try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ } });
  await waitFor(async () => (await d.get('/v1/servers')).json.servers[0].state === 'ready', 60000 * slow, 250);
  const r = await d.post('/v1/tools/echo/call', { arguments: { message: 'late but here' } });
  assert.equal(r.status, 200, r.body);
  assert.ok(!(await d.get('/v1/problems')).json.problems.some((p) => p.id === 'server:late:start'));
  s = (await d.get('/v1/servers')).json.servers[0];
  assert.ok(s.restarts >= 1);
});

// A hostile upstream of our own: it answers what it is told to.
function hostile(handler) {
  return new Promise((resolve) => {
    const srv = http.createServer(handler);
    srv.listen(0, '127.0.0.1', () => resolve({ port: srv.address().port, close: () => srv.close() }));
  });
}

test('a stalled upstream never delays other requests; 4xx answers become a Problem with the status', async (t) => {
  const sockets = new Set();
  const stall = await hostile((req) => { sockets.add(req.socket); /* never answers */ });
  const deny = await hostile((req, res) => { res.writeHead(403, { 'content-type': 'text/plain' }); res.end('forbidden by policy X-42'); });
  t.after(() => { stall.close(); deny.close(); sockets.forEach((s) => s.destroy()); });
  const d = await start(`version: 1
servers:
  stalled:
    transport: streamable_http
    truely-stateless: true
    url: http://127.0.0.1:${stall.port}/mcp
    request_timeout: 30s
  denied:
    transport: streamable_http
    truely-stateless: true
    url: http://127.0.0.1:${deny.port}/mcp
`);
  t.after(() => d.stop());
  await waitFor(() => sockets.size > 0);
  for (let i = 0; i < 20; i++) {
    const t0 = Date.now();
    const r = await d.get('/healthz');
    assert.equal(r.status, 200);
    assert.ok(Date.now() - t0 < 1000 * slow, 'the loop is never blocked by the stalled upstream');
  }
  const s = (await d.get('/v1/servers')).json.servers.find((x) => x.id === 'stalled');
  assert.equal(s.state, 'starting', 'still waiting for initialize');
  const problem = await waitFor(async () => (await d.get('/v1/problems')).json.problems.find((p) => p.server === 'denied' && p.severity === 'error'));
  assert.match(problem.message, /403/);
  assert.match(problem.message, /forbidden by policy X-42/);
});

test('progress from an HTTP upstream reaches an MCP client before the result', async (t) => {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const up = await everything('streamableHttp');
  t.after(() => up.stop());
  const d = await start(`version: 1\nservers:\n  web:\n    transport: streamable_http\n    url: http://127.0.0.1:${up.port}/mcp\n`, { waitReady: true });
  t.after(() => d.stop());
  const client = new Client({ name: 'progress-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${d.port}/mcp`)));
  t.after(() => client.close());
  const seen = [];
  const r = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 3 } },
    undefined, { onprogress: (p) => seen.push(p.progress) });
  assert.ok(!r.isError, JSON.stringify(r));
  assert.deepEqual(seen, [1, 2, 3]);
  // The session's dialog holds an MCP session of its own upstream.
  const leases = (await d.get('/v1/dialogs')).json.dialogs.flatMap((x) => x.leases);
  assert.ok(leases.some((l) => l.server === 'web' && typeof l.session === 'string'));
});

// A streamable HTTP MCP server of our own that can forget its sessions (as
// a restarted server does), with a log of every request: method, session,
// tool, the status it answered. `echo` answers at once, `hold` never (its
// POST stays open), `vanish` forgets the session it came on and answers 404.
function forgetful() {
  const sessions = new Set();
  const log = [];
  let next = 0;
  const json = (res, status, body, headers = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const session = req.headers['mcp-session-id'] ?? null;
      const msg = body ? JSON.parse(body) : {};
      const entry = { verb: req.method, method: msg.method ?? null, session, tool: msg.params?.name ?? null,
        text: msg.params?.arguments?.text ?? null, status: 0 };
      log.push(entry);
      const answer = (status, b, headers) => { entry.status = status; json(res, status, b, headers); };
      if (req.method === 'GET') { entry.status = 405; res.writeHead(405); res.end(); return; }
      if (req.method === 'DELETE') { sessions.delete(session); entry.status = 200; res.end(); return; }
      if (msg.method === 'initialize') {
        const sid = `s${++next}`;
        sessions.add(sid);
        answer(200, { jsonrpc: '2.0', id: msg.id, result: { protocolVersion: '2025-11-25',
          capabilities: { tools: {} }, serverInfo: { name: 'forgetful', version: '1' } } }, { 'mcp-session-id': sid });
        return;
      }
      if (!sessions.has(session) || (msg.method === 'tools/call' && msg.params.name === 'vanish')) {
        sessions.delete(session);
        answer(404, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
        return;
      }
      if (msg.id === undefined) { entry.status = 202; res.writeHead(202); res.end(); return; }
      if (msg.method === 'tools/list') {
        const tool = (name) => ({ name, inputSchema: { type: 'object', properties: { text: { type: 'string' } } } });
        answer(200, { jsonrpc: '2.0', id: msg.id, result: { tools: ['echo', 'hold', 'vanish'].map(tool) } });
      } else if (msg.method === 'tools/call' && msg.params.name === 'hold') {
        entry.status = 'held';
      } else if (msg.method === 'tools/call') {
        answer(200, { jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: `${msg.params.arguments.text} on ${session}` }] } });
      } else {
        answer(200, { jsonrpc: '2.0', id: msg.id, result: {} });
      }
    });
  });
  return new Promise((resolve) => {
    srv.listen(0, '127.0.0.1', () => resolve({
      port: srv.address().port, log, forget: () => sessions.clear(),
      close: () => { srv.closeAllConnections(); srv.close(); },
    }));
  });
}

test('a call refused for a lost session is sent once more on a new session; one that reached the old is not', async (t) => {
  const up = await forgetful();
  t.after(() => up.close());
  const d = await start(`version: 1
servers:
  fk:
    transport: streamable_http
    url: http://127.0.0.1:${up.port}/mcp
  fs:
    transport: streamable_http
    truely-stateless: true
    url: http://127.0.0.1:${up.port}/mcp
    transform: [{prefix: 's_'}]
`, { waitReady: true });
  t.after(() => d.stop());
  const calls = (text) => up.log.filter((e) => e.method === 'tools/call' && e.text === text);
  const call = (tool, dialog, text, timeout_ms) => d.post(`/v1/tools/${tool}/call`, { dialog, arguments: { text }, timeout_ms });

  // Leased: dialog a has a session; the server forgets every session.
  const first = await call('echo', 'a', 'one');
  assert.equal(first.status, 200, first.body);
  const old = calls('one')[0].session;
  const held = call('hold', 'a', 'held', 20000 * slow);
  await waitFor(() => calls('held').length === 1);
  up.forget();
  const again = await call('echo', 'a', 'two');
  assert.equal(again.status, 200, again.body);
  const [refused, retried] = calls('two');
  assert.deepEqual([refused.session, refused.status], [old, 404], 'sent on the lost session first');
  assert.equal(retried.status, 200);
  assert.notEqual(retried.session, old, 'then once more, on a new session');
  assert.equal(again.json.contentItems[0].text, `two on ${retried.session}`);
  assert.equal(again.json.lease.restarted, true);
  const afterInit = up.log.findIndex((e) => e.method === 'initialize' && e.status === 200 &&
    up.log.indexOf(e) > up.log.indexOf(refused));
  assert.ok(afterInit > 0 && afterInit < up.log.indexOf(retried), 'a new initialize came between the two');
  // The held call had reached the lost session: it fails and is not sent again.
  const h = await held;
  assert.equal(h.status, 502, h.body);
  assert.equal(calls('held').length, 1);
  assert.ok(!up.log.some((e) => e.verb === 'DELETE' && e.session === old), 'no DELETE for a session the server forgot');

  // Once only: a session lost again on the retry fails the call (502).
  const gone = await call('vanish', 'a', 'twice');
  assert.equal(gone.status, 502, gone.body);
  assert.deepEqual(calls('twice').map((e) => e.status), [404, 404]);
  assert.notEqual(calls('twice')[0].session, calls('twice')[1].session);

  // Shared: the call waits for the shared instance to come back.
  assert.equal((await call('s_echo', undefined, 'three')).status, 200);
  up.forget();
  const shared = await call('s_echo', undefined, 'four');
  assert.equal(shared.status, 200, shared.body);
  assert.deepEqual(calls('four').map((e) => e.status), [404, 200]);
  assert.equal(shared.json.contentItems[0].text, `four on ${calls('four')[1].session}`);
});
