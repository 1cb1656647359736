// The gateway as one MCP server at /mcp (issue 7): the official SDK client
// over streamable HTTP, sessions as dialogs, list_changed on reload, and the
// transport rules checked with raw HTTP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { start, waitFor, sleep, fixtures, slow, sseReader } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const JSON_ACCEPT = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = (version = '2025-11-25', id = 1) => ({
  jsonrpc: '2.0', id, method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

// Stops the daemon and checks it exited cleanly with no sanitizer report.
async function stopClean(d) {
  const r = await d.stop();
  assert.doesNotMatch(d.stderr, /AddressSanitizer|LeakSanitizer|runtime error/);
  assert.equal(r.code, 0, d.stderr.slice(-2000));
}

async function connect(d, { dialog, path = '/mcp' } = {}) {
  const opts = dialog ? { requestInit: { headers: { 'X-Mcpgw-Dialog': dialog } } } : {};
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${d.port}${path}`), opts);
  const client = new Client({ name: 'mcpgw-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

const leasesOf = async (d, dialog) =>
  ((await d.get('/v1/dialogs')).json.dialogs.find((x) => x.dialog === dialog) || { leases: [] }).leases;

// The dialog holding the instance a call result's _meta["mcpgw/lease"] names.
const dialogOf = async (d, result) => {
  const instance = result._meta['mcpgw/lease'].instance;
  return (await d.get('/v1/dialogs')).json.dialogs.find((x) => x.leases.some((l) => l.instance === instance))?.dialog;
};
const SESSION_DIALOG = /^mcp-session:[0-9a-f]{16}$/;

// Raw POST /mcp with a JSON-RPC body (object, array or raw string).
const rpc = (d, body, headers = {}) =>
  d.request('POST', '/mcp', { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { ...JSON_ACCEPT, ...headers } });

async function session(d, version = '2025-11-25') {
  const r = await rpc(d, INIT(version));
  assert.equal(r.status, 200, r.body);
  const sid = r.headers['mcp-session-id'];
  const h = { 'mcp-session-id': sid, 'mcp-protocol-version': version };
  assert.equal((await rpc(d, { jsonrpc: '2.0', method: 'notifications/initialized' }, h)).status, 202);
  return { sid, h };
}

// GET /mcp as an event stream; `events` fills as events arrive.
function openStream(d, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: d.port, method: 'GET', path: '/mcp', agent: false,
      headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const s = { status: res.statusCode, events: [], close: () => req.destroy() };
      res.setEncoding('utf8');
      res.on('data', sseReader((ev) => s.events.push(ev)));
      res.on('error', () => {});
      resolve(s);
    });
    req.on('error', (e) => { if (e.code !== 'ECONNRESET') reject(e); });
    req.end();
  });
}

const fx = (extra = '') => `version: 1\nservers:\n  fx:\n    command: ${FIXTURE}\n${extra}`;

test('the SDK client lists the merged catalog and calls tools through /mcp', async (t) => {
  const d = await start(fx(), { waitReady: true });
  t.after(() => stopClean(d));
  const { client } = await connect(d);
  t.after(() => client.close());
  assert.equal(client.getServerVersion().name, 'mcpgw');
  assert.equal(client.getServerCapabilities().tools.listChanged, true);
  const listed = (await client.listTools()).tools.map((x) => x.name);
  const rest = (await d.get('/v1/tools')).json.tools.map((x) => x.name);
  assert.deepEqual(listed, rest);
  assert.ok(listed.includes('mcp_release') && listed.includes('echo'));

  const echo = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
  assert.deepEqual(echo.content, [{ type: 'text', text: 'hello' }]);
  assert.match(echo._meta['mcpgw/lease'].reminder, /mcp_release/);
  const img = await client.callTool({ name: 'image', arguments: {} });
  assert.deepEqual(img.content, [{ type: 'image', data: PNG_1X1, mimeType: 'image/png' }], 'images pass unchanged');
  const add = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
  assert.deepEqual(add.structuredContent, { sum: 5 });

  await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /Unknown tool: no_such_tool/);
  const released = await client.callTool({ name: 'mcp_release', arguments: { serverId: 'fx' } });
  assert.equal(released.isError, false);
  assert.match(released.content[0].text, /released the lease on 'fx'/);
  const bad = await client.callTool({ name: 'mcp_release', arguments: {} });
  assert.equal(bad.isError, true);
  assert.deepEqual(await client.ping(), {});
});

test('two sessions are two dialogs; DELETE releases the session\'s leases', async (t) => {
  const d = await start(fx(), { waitReady: true });
  t.after(() => stopClean(d));
  const a = await connect(d);
  const b = await connect(d);
  t.after(() => Promise.all([a.client.close(), b.client.close()]));
  assert.notEqual(a.transport.sessionId, b.transport.sessionId);
  const da = await dialogOf(d, await a.client.callTool({ name: 'echo', arguments: { text: 'a' } }));
  const db = await dialogOf(d, await b.client.callTool({ name: 'echo', arguments: { text: 'b' } }));
  assert.match(da, SESSION_DIALOG);
  assert.match(db, SESSION_DIALOG);
  assert.notEqual(da, db, 'each session holds a lease under its own dialog');
  const [la] = await leasesOf(d, da);
  const [lb] = await leasesOf(d, db);
  assert.notEqual(la.pid, lb.pid);

  await a.transport.terminateSession();
  assert.deepEqual(await leasesOf(d, da), []);
  const dialogs = (await d.get('/v1/dialogs')).json.dialogs.map((x) => x.dialog);
  assert.deepEqual(dialogs, [db], 'b keeps its lease');
});

// security.md C6: a session id is a bearer secret. A session without
// X-Mcpgw-Dialog holds its leases under a name of its own that no surface
// maps back to the id and that no REST call can name.
test('a session id is shown nowhere, and REST cannot reach the session\'s instance', async (t) => {
  const d = await start(fx(), { waitReady: true, args: ['--log-level', 'debug'] });
  t.after(() => stopClean(d));
  let events = '';
  const evReq = http.get({ host: '127.0.0.1', port: d.port, path: '/v1/events' }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (c) => { events += c; });
    res.on('error', () => {});
  });
  evReq.on('error', () => {});
  t.after(() => evReq.destroy());
  const { client, transport } = await connect(d);
  t.after(() => client.close());
  const sid = transport.sessionId;
  assert.match(sid, /^[0-9a-f]{32}$/);
  const first = await client.callTool({ name: 'echo', arguments: { text: 'mine' } });
  const instance = first._meta['mcpgw/lease'].instance;
  const pub = await dialogOf(d, first);
  assert.match(pub, SESSION_DIALOG, 'the session\'s dialog has its own public name');
  await waitFor(() => events.includes('"action":"acquired"'));
  await waitFor(() => d.stderr.includes(pub));

  const surfaces = { events, log: d.stderr };
  for (const p of ['/v1/dialogs', '/v1/servers', '/v1/problems', '/v1/tools', '/metrics']) {
    surfaces[p] = (await d.get(p)).body;
  }
  assert.ok(surfaces['/v1/dialogs'].includes(pub) && events.includes(pub), 'the public name is what is shown');
  for (const [where, text] of Object.entries(surfaces)) {
    assert.ok(!text.includes(sid), `the session id appears in ${where}`);
  }

  // The public name cannot be named by a call: not in the body, not in
  // X-Mcpgw-Dialog, not for mcp_release, not to start another /mcp session.
  let r = await d.post('/v1/tools/echo/call', { dialog: pub, arguments: { text: 'x' } });
  assert.equal(r.status, 400);
  assert.equal(r.json.error.code, 'bad_dialog');
  r = await d.post('/v1/tools/echo/call', { arguments: { text: 'x' } }, { headers: { 'x-mcpgw-dialog': pub } });
  assert.equal(r.status, 400);
  r = await d.post('/v1/tools/mcp_release/call', { dialog: pub, arguments: { serverId: 'fx' } });
  assert.equal(r.status, 400);
  assert.equal((await rpc(d, INIT(), { 'x-mcpgw-dialog': pub })).status, 400);
  // The id itself is only a REST dialog like any other: a different instance.
  r = await d.post('/v1/tools/echo/call', { dialog: sid, arguments: { text: 'y' } });
  assert.equal(r.status, 200, r.body);
  assert.notEqual(r.json.lease.instance, instance, 'REST naming the session id gets its own instance');
  const again = await client.callTool({ name: 'echo', arguments: { text: 'still mine' } });
  assert.equal(again._meta['mcpgw/lease'].instance, instance, 'the session keeps its instance');
  assert.equal((await leasesOf(d, pub)).length, 1);

  // An operator may release the session's leases by the public name; the
  // session's next call leases again.
  r = await d.post(`/v1/dialogs/${pub}/release`, {});
  assert.equal(r.status, 200, r.body);
  assert.deepEqual(r.json.released, ['fx']);
  assert.deepEqual(await leasesOf(d, pub), []);
  const after = await client.callTool({ name: 'echo', arguments: { text: 'new' } });
  assert.notEqual(after._meta['mcpgw/lease'].instance, instance);
  assert.match(after._meta['mcpgw/lease'].reminder, /mcp_release/);
  assert.equal(await dialogOf(d, after), pub);
});

test('X-Mcpgw-Dialog names the dialog, shared with REST calls', async (t) => {
  const d = await start(fx(), { waitReady: true });
  t.after(() => stopClean(d));
  const { client } = await connect(d, { dialog: 'agent7/worker' });
  t.after(() => client.close());
  await client.callTool({ name: 'echo', arguments: { text: 'x' } });
  const [l] = await leasesOf(d, 'agent7/worker');
  assert.ok(l, 'the lease is under the named dialog');
  const r = await d.post('/v1/tools/echo/call', { dialog: 'agent7/worker', arguments: { text: 'y' } });
  assert.equal(r.status, 200);
  assert.equal((await leasesOf(d, 'agent7/worker'))[0].pid, l.pid, 'REST and MCP share the instance');
  const bad = await rpc(d, INIT(), { 'x-mcpgw-dialog': '../etc' });
  assert.equal(bad.status, 400);
});

// Clients that take a URL per conversation and no header: the URL names the
// dialog, and every request of the session is checked against it.
test('/mcp/d/{dialog} names the dialog, shared with REST and the header', async (t) => {
  const d = await start(fx(), { waitReady: true });
  t.after(() => stopClean(d));
  const { client } = await connect(d, { path: '/mcp/d/team/alice' });
  t.after(() => client.close());
  await client.callTool({ name: 'echo', arguments: { text: 'x' } });
  const [l] = await leasesOf(d, 'team/alice');
  assert.ok(l, 'the lease is under the dialog the URL names');
  const r = await d.post('/v1/tools/echo/call', { dialog: 'team/alice', arguments: { text: 'y' } });
  assert.equal(r.status, 200);
  assert.equal((await leasesOf(d, 'team/alice'))[0].pid, l.pid, 'REST and the URL share the instance');
  const { client: viaHeader } = await connect(d, { dialog: 'team/alice' });
  t.after(() => viaHeader.close());
  await viaHeader.callTool({ name: 'echo', arguments: { text: 'z' } });
  assert.equal((await leasesOf(d, 'team/alice')).length, 1, 'the header names the same dialog');
  assert.equal((await leasesOf(d, 'team/alice'))[0].pid, l.pid);

  const post = (p, body, headers = {}) => d.request('POST', p, { body: JSON.stringify(body), headers: { ...JSON_ACCEPT, ...headers } });
  let bad = await post('/mcp/d/a/b/c', INIT(), {});
  assert.equal(bad.status, 400, 'three parts');
  assert.equal(bad.json.id, 1);
  bad = await post('/mcp/d/', INIT(), {});
  assert.equal(bad.status, 400, 'no dialog');
  bad = await post('/mcp/d/x', INIT(), { 'x-mcpgw-dialog': 'y' });
  assert.equal(bad.status, 400, 'the header and the URL disagree');
  assert.match(bad.json.error.message, /different dialogs/);
  const ok = await post('/mcp/d/x', INIT(), { 'x-mcpgw-dialog': 'x' });
  assert.equal(ok.status, 200, 'the header and the URL agree');
  const h = { 'mcp-session-id': ok.headers['mcp-session-id'], 'mcp-protocol-version': '2025-11-25' };
  const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
  assert.equal((await post('/mcp/d/x', list, h)).status, 200);
  assert.equal((await post('/mcp', list, h)).status, 200, 'the session id alone still finds it');
  bad = await post('/mcp/d/other', list, h);
  assert.equal(bad.status, 400, 'a URL naming another dialog');
  assert.equal(bad.json.id, 2);
  assert.equal((await d.request('DELETE', '/mcp/d/x', { headers: h })).status, 204);
  assert.equal((await d.get('/v1/dialogs')).status, 200);
});

test('a reload that changes the catalog sends tools/list_changed', async (t) => {
  const d = await start(fx(), { waitReady: true });
  t.after(() => stopClean(d));
  const { client } = await connect(d);
  t.after(() => client.close());
  let changed = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
  await sleep(300 * slow); // the SDK opens its GET stream after notifications/initialized
  fs.writeFileSync(d.configPath, fx(`  fy:\n    command: ${FIXTURE}\n    transform: [{prefix: y_}]\n`));
  const r = await d.post('/v1/reload', {});
  assert.equal(r.status, 200, r.body);
  await waitFor(() => changed > 0, 10000 * slow);
  // The file watch reloads too; its commits may land after the first
  // notification, so the new tools are awaited rather than expected at once.
  await waitFor(async () => (await client.listTools()).tools.some((x) => x.name === 'y_echo'), 10000 * slow);
  const before = changed;
  fs.writeFileSync(d.configPath, fx());
  assert.equal((await d.post('/v1/reload', {})).status, 200);
  await waitFor(() => changed > before, 10000 * slow);
});

test('transport rules: sessions, versions, notifications, bad bodies', async (t) => {
  const d = await start(fx(), { waitReady: true });
  t.after(() => stopClean(d));
  const { sid, h } = await session(d);
  assert.match(sid, /^[0-9a-f]{32}$/);

  const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
  let r = await rpc(d, list);
  assert.equal(r.status, 400, 'no session id');
  r = await rpc(d, list, { 'mcp-session-id': 'f'.repeat(32) });
  assert.equal(r.status, 404, 'unknown session id');
  assert.equal(r.json.error.code, -32001);
  r = await rpc(d, list, { ...h, 'mcp-protocol-version': '1999-01-01' });
  assert.equal(r.status, 400, 'unsupported protocol version header');
  r = await rpc(d, list, { 'mcp-session-id': sid }); // no version header: assumed 2025-03-26
  assert.equal(r.status, 200);
  assert.ok(Array.isArray(r.json.result.tools));

  r = await rpc(d, '{"jsonrpc":"2.0", "id": 3, "method": ', h);
  assert.equal(r.status, 400);
  assert.equal(r.json.error.code, -32700);
  for (const body of ['42', '"x"', '[]', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]']) {
    r = await rpc(d, body, h);
    assert.equal(r.status, 400, body);
    assert.equal(r.json.error.code, -32600, body);
  }
  for (const msg of [{ id: 4, method: 'ping' }, { jsonrpc: '2.0', id: {}, method: 'ping' },
    { jsonrpc: '2.0', id: 5, method: 7 }, { jsonrpc: '2.0', id: 6, method: 'tools/call', params: [] }]) {
    r = await rpc(d, msg, h);
    assert.equal(r.status, 200, JSON.stringify(msg));
    assert.ok([-32600, -32602].includes(r.json.error.code), JSON.stringify(r.json));
  }
  r = await rpc(d, { jsonrpc: '2.0', id: 7, method: 'no/such' }, h);
  assert.equal(r.json.error.code, -32601);
  r = await rpc(d, { jsonrpc: '2.0', id: 8, method: 'tools/list', params: { cursor: 'garbage' } }, h);
  assert.equal(r.json.error.code, -32602);
  r = await rpc(d, { jsonrpc: '2.0', id: 9, method: 'logging/setLevel', params: { level: 'debug' } }, h);
  assert.deepEqual(r.json.result, {});
  r = await rpc(d, { jsonrpc: '2.0', id: 10, method: 'prompts/list' }, h);
  assert.deepEqual(r.json.result, { prompts: [] });
  r = await rpc(d, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }, h);
  assert.equal(r.status, 202);
  assert.equal(r.body, '');
  r = await rpc(d, { jsonrpc: '2.0', id: 99, result: {} }, h);
  assert.equal(r.status, 202, 'a response is accepted');
  r = await rpc(d, INIT(), h);
  assert.equal(r.json.error.code, -32600, 'initialize twice');
  r = await rpc(d, list, { ...h, 'content-type': 'text/plain' });
  assert.equal(r.status, 415);
  r = await rpc(d, list, { ...h, accept: 'text/html' });
  assert.equal(r.status, 406);
  r = await rpc(d, list, { ...h, accept: 'text/event-stream' });
  assert.equal(r.headers['content-type'], 'text/event-stream');
  assert.match(r.body, /^event: message\ndata: \{"jsonrpc":"2.0","id":2,"result":\{"tools":/);
  r = await d.request('PUT', '/mcp', { headers: h });
  assert.equal(r.status, 405);
  assert.equal(r.headers.allow, 'GET, POST, DELETE');
  r = await d.get('/mcp', { headers: { ...h, accept: 'application/json' } });
  assert.equal(r.status, 406, 'GET without text/event-stream');

  assert.equal((await d.request('DELETE', '/mcp', { headers: h })).status, 204);
  assert.equal((await rpc(d, list, h)).status, 404, 'an ended session is gone');
  assert.equal((await d.request('DELETE', '/mcp', { headers: h })).status, 404);
});

// JSON-RPC: an error answers the request it refuses, by id, whenever the
// body held one; only a body that cannot be read gets id null.
test('transport refusals carry the request id', async (t) => {
  const d = await start(fx(), { waitReady: true });
  t.after(() => stopClean(d));
  const { h } = await session(d);
  const cases = [
    [{ jsonrpc: '2.0', id: 21, method: 'tools/list' }, {}, 400, 'no session id'],
    [{ jsonrpc: '2.0', id: 'req-22', method: 'tools/list' }, { 'mcp-session-id': 'f'.repeat(32) }, 404, 'unknown session'],
    [{ jsonrpc: '2.0', id: 23, method: 'tools/list' }, { ...h, 'mcp-protocol-version': '1999-01-01' }, 400, 'unsupported version'],
    [{ jsonrpc: '2.0', id: 24, method: 'tools/list' }, { ...h, accept: 'text/html' }, 406, 'not acceptable'],
    [{ jsonrpc: '2.0', id: 25, method: 'tools/list' }, { ...h, 'content-type': 'text/plain' }, 415, 'not JSON'],
  ];
  for (const [msg, headers, status, what] of cases) {
    const r = await rpc(d, msg, headers);
    assert.equal(r.status, status, what);
    assert.equal(r.json.jsonrpc, '2.0', what);
    assert.equal(r.json.id, msg.id, `${what}: ${r.body}`);
    assert.equal(typeof r.json.error.message, 'string', what);
  }
  // Nothing to name: a body that is not JSON, or a request without an id.
  let r = await rpc(d, '{"jsonrpc":"2.0", "id": 26, "method": ', h);
  assert.equal(r.json.id, null);
  r = await rpc(d, { jsonrpc: '2.0', id: { x: 1 }, method: 'tools/list' }, {});
  assert.equal(r.status, 400);
  assert.equal(r.json.id, null, 'an id that is not a string or number is not echoed');
});

test('a 2025-03-26 session may batch; others may not', async (t) => {
  const d = await start(fx(), { waitReady: true });
  t.after(() => stopClean(d));
  const old = await session(d, '2025-03-26');
  const r = await rpc(d, [
    { jsonrpc: '2.0', id: 1, method: 'ping' },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'b' } } },
  ], old.h);
  assert.equal(r.status, 200, r.body);
  assert.equal(r.json.length, 2);
  const byId = Object.fromEntries(r.json.map((m) => [m.id, m]));
  assert.deepEqual(byId[1].result, {});
  assert.deepEqual(byId[2].result.content, [{ type: 'text', text: 'b' }]);
  const only = await rpc(d, [{ jsonrpc: '2.0', method: 'notifications/initialized' }], old.h);
  assert.equal(only.status, 202);
  const init = await rpc(d, INIT('2024-11-05'));
  assert.equal(init.json.result.protocolVersion, '2024-11-05');
  const future = await rpc(d, INIT('2099-01-01'));
  assert.equal(future.json.result.protocolVersion, '2025-11-25', 'unknown versions get ours');
});

test('the GET stream: one per session, events with ids, Last-Event-ID replay', async (t) => {
  const d = await start(fx(), { waitReady: true });
  t.after(() => stopClean(d));
  const { h } = await session(d);
  const s1 = await openStream(d, h);
  assert.equal(s1.status, 200);
  const second = await d.get('/mcp', { headers: { ...h, accept: 'text/event-stream' } });
  assert.equal(second.status, 409);
  await waitFor(() => s1.events.length >= 1);
  assert.match(s1.events[0].id, /^0\.\d+$/, 'a priming event carries an id');
  const reload = async (n) => {
    const extra = Array.from({ length: n }, (_, i) => `  f${i}:\n    command: ${FIXTURE}\n    transform: [{prefix: p${i}_}]\n`).join('');
    fs.writeFileSync(d.configPath, fx(extra));
    assert.equal((await d.post('/v1/reload', {})).status, 200);
  };
  await reload(1);
  await waitFor(() => s1.events.some((e) => e.data && e.data.includes('list_changed')));
  const seen = s1.events.filter((e) => e.data).at(-1).id;
  s1.close();
  await sleep(200);
  await reload(2);
  await sleep(300);
  await reload(0);
  await sleep(300);
  const s2 = await openStream(d, { ...h, 'last-event-id': seen });
  assert.equal(s2.status, 200);
  await waitFor(() => s2.events.filter((e) => e.data).length >= 2);
  const replayed = s2.events.filter((e) => e.data);
  assert.ok(replayed.every((e) => JSON.parse(e.data).method === 'notifications/tools/list_changed'));
  const seq = (id) => Number(id.split('.')[1]);
  assert.ok(seq(replayed[0].id) > seq(seen) && seq(replayed[1].id) > seq(replayed[0].id));
  s2.close();
});

test('notifications/cancelled reaches the upstream call', async (t) => {
  const dir = fs.mkdtempSync('/tmp/mcpgw-cancel-');
  const log = path.join(dir, 'methods.log');
  const d = await start(`version: 1\nservers:\n  fx:\n    command: ${FIXTURE}\n    args: ['--log', '${log}']\n`, { waitReady: true });
  t.after(() => stopClean(d));
  const { client } = await connect(d);
  t.after(() => client.close());
  const ac = new AbortController();
  const call = client.callTool({ name: 'sleep', arguments: { ms: 30000 } }, undefined, { signal: ac.signal });
  await waitFor(() => fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes('tools/call'));
  ac.abort('changed my mind');
  await assert.rejects(call);
  await waitFor(() => fs.readFileSync(log, 'utf8').includes('notifications/cancelled'));
  const echo = await client.callTool({ name: 'echo', arguments: { text: 'still here' } });
  assert.equal(echo.content[0].text, 'still here');
});

test('session ids are distinct 128-bit hex strings', async (t) => {
  const d = await start('version: 1\n');
  t.after(() => stopClean(d));
  const N = Number(process.env.MCPGW_SESSION_IDS || 10000);
  const ids = new Set();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  t.after(() => agent.destroy());
  const post = (body, headers = {}) => new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: d.port, method: body ? 'POST' : 'DELETE', path: '/mcp', agent,
      headers: { ...JSON_ACCEPT, ...headers } }, (res) => { res.resume(); res.on('end', () => resolve(res)); });
    req.on('error', reject);
    req.end(body);
  });
  let next = 0;
  const worker = async () => {
    while (next < N) {
      next++;
      const res = await post(JSON.stringify(INIT()));
      assert.equal(res.statusCode, 200);
      const sid = res.headers['mcp-session-id'];
      assert.match(sid, /^[0-9a-f]{32,}$/);
      ids.add(sid);
      assert.equal((await post(undefined, { 'mcp-session-id': sid })).statusCode, 204);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  assert.equal(ids.size, N);
});
