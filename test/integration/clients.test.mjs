// Clients and policy (issue 35): two clients with different servers, tools
// and deny see exactly their own view on every surface (REST, /mcp
// 2025-11-25 sessions through the official SDK client, 2026-07-28 requests
// through the SDK v2 client and raw), a tool a client may not use answers
// as an unknown one, admin routes are the admin's, sessions are their
// client's, and a reload that takes a right away takes it at the next call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { start, waitFor, fixtures, nodeModules, sdk2, sleep } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const MODERN = '2026-07-28';
const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef';
const ADMIN = 'admin-token-0123456789abcdef';
const sha = (s) => crypto.createHash('sha256').update(s).digest('hex');
const auth = (token) => ({ authorization: `Bearer ${token}` });

// alice: fx only, without `add`; bob: both servers, `echo` and res_* only,
// with res_tool_0 denied. The gateway token is the admin client `default`.
const config = (aliceDeny = "['add']") => `version: 1
gateway:
  auth_token: ${ADMIN}
clients:
  alice:
    token: ${ALICE}
    servers: [fx]
    deny: ${aliceDeny}
  bob:
    token_sha256: ${sha(BOB)}
    tools: ['echo', 'res_*']
    deny: ['res_tool_0']
servers:
  fx:
    command: ${FIXTURE}
    truely-stateless: true
  res:
    command: ${FIXTURE}
    args: ['--tools', '2', '--resources', 'bres']
    truely-stateless: true
    transform: [{prefix: 'res_'}]
`;

const ALICE_TOOLS = ['echo', 'image', 'mcp_release', 'progress', 'sleep'];
const BOB_TOOLS = ['echo', 'mcp_release', 'res_add', 'res_echo', 'res_image', 'res_link', 'res_progress',
  'res_sleep', 'res_tool_1', 'res_touch'];

// /readyz needs a token too when there are clients.
async function up(yaml) {
  const d = await start(yaml);
  await waitFor(async () => (await d.get('/readyz', { headers: auth(ADMIN) })).status === 200, 30000);
  return d;
}

async function stopClean(d) {
  const r = await d.stop();
  assert.doesNotMatch(d.stderr, /AddressSanitizer|LeakSanitizer|runtime error/);
  assert.equal(r.code, 0, d.stderr.slice(-2000));
}

const names = (tools, key = (t) => t.name) => tools.map(key).sort();
const url = (d, p = '/mcp') => `http://127.0.0.1:${d.port}${p}`;

async function sdk1(d, token) {
  const transport = new StreamableHTTPClientTransport(new URL(url(d)), { requestInit: { headers: auth(token) } });
  const client = new Client({ name: 'clients-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

function modern(d, token, method, params, id = 1) {
  const h = { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN, 'mcp-method': method, ...auth(token) };
  if (params?.name !== undefined) h['mcp-name'] = params.name;
  if (method === 'resources/read') h['mcp-name'] = params.uri;
  const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } };
  return d.request('POST', '/mcp', { headers: h,
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }) });
}

test('tokens: none, wrong and right; no token in any answer or log', async (t) => {
  const d = await up(config());
  t.after(() => stopClean(d));

  assert.equal((await d.get('/v1/tools')).status, 401);
  assert.equal((await d.get('/v1/tools', { headers: auth('nope-0123456789abcdef') })).status, 401);
  assert.equal((await d.get('/v1/tools', { headers: auth(ALICE.slice(0, -1)) })).status, 401);
  assert.equal((await d.get('/v1/tools', { headers: auth(sha(BOB)) })).status, 401, 'the digest is no token');
  for (const tok of [ALICE, BOB, ADMIN]) assert.equal((await d.get('/v1/tools', { headers: auth(tok) })).status, 200);
  assert.equal((await d.get('/healthz')).status, 200);
  assert.doesNotMatch(d.stderr, new RegExp(`${ALICE}|${BOB}|${ADMIN}`));
});

test('REST: every listing is the client\'s own view; denied answers as unknown', async (t) => {
  const d = await up(config());
  t.after(() => stopClean(d));
  const get = (p, tok) => d.get(p, { headers: auth(tok) });

  assert.deepEqual(names((await get('/v1/tools', ALICE)).json.tools), ALICE_TOOLS);
  assert.deepEqual(names((await get('/v1/tools', BOB)).json.tools), BOB_TOOLS);
  assert.ok((await get('/v1/tools', ADMIN)).json.tools.length > BOB_TOOLS.length);
  // the formats and the cache: a second listing of each is the same view
  for (let i = 0; i < 2; i++) {
    assert.deepEqual(names((await get('/v1/tools?format=openai', ALICE)).json.tools, (x) => x.function.name), ALICE_TOOLS);
    assert.deepEqual(names((await get('/v1/tools?format=anthropic', BOB)).json.tools), BOB_TOOLS);
  }
  // search and defer_loading
  const found = (await get('/v1/tools?q=add+numbers&limit=5', ALICE)).json.tools;
  assert.ok(!found.some((x) => /add/.test(x.name)), JSON.stringify(found));
  assert.deepEqual(names((await get('/v1/tools?q=add+numbers', BOB)).json.tools).includes('res_add'), true);
  assert.deepEqual(names((await get('/v1/tools?format=anthropic&defer_loading=all', ALICE)).json.tools), ALICE_TOOLS);

  // toolsets: alice's has no res, and naming it is naming no toolset
  const sets = (await get('/v1/toolsets', ALICE)).json.toolsets;
  assert.deepEqual(sets.map((s) => s.name).sort(), ['fx', 'mcp_admin']);
  assert.deepEqual(sets.find((s) => s.name === 'fx').tools.sort(), ['echo', 'image', 'progress', 'sleep']);
  const hidden = await get('/v1/tools?toolset=res', ALICE), none = await get('/v1/tools?toolset=zzz', ALICE);
  assert.equal(hidden.status, 404);
  assert.equal(hidden.body, none.body.replaceAll('zzz', 'res'));

  // a tool the client may not use, named, described and called: as unknown
  for (const [tok, name] of [[ALICE, 'add'], [ALICE, 'res_echo'], [BOB, 'add'], [BOB, 'res_tool_0']]) {
    const a = await get(`/v1/tools/${name}`, tok), u = await get('/v1/tools/no_such_tool', tok);
    assert.equal(a.status, 404);
    assert.equal(a.body, u.body);
    const c = await d.post(`/v1/tools/${name}/call`, { arguments: { a: 1, b: 2, text: 'x' } }, { headers: auth(tok) });
    const cu = await d.post('/v1/tools/no_such_tool/call', { arguments: { a: 1, b: 2, text: 'x' } }, { headers: auth(tok) });
    assert.equal(c.status, 404);
    assert.equal(c.body, cu.body);
  }
  const ok = await d.post('/v1/tools/echo/call', { arguments: { text: 'hi' } }, { headers: auth(ALICE) });
  assert.equal(ok.status, 200, ok.body);
  assert.equal((await d.post('/v1/tools/res_add/call', { arguments: { a: 1, b: 2 } }, { headers: auth(BOB) })).status, 200);

  // prompts and resources: by server
  assert.deepEqual((await get('/v1/resources', ALICE)).json.resources, []);
  assert.deepEqual((await get('/v1/resources', ALICE)).json.resourceTemplates, []);
  assert.deepEqual((await get('/v1/resources', BOB)).json.resources.map((r) => r.uri).sort(), ['bres://a', 'bres://b']);
});

test('admin routes are for admin clients: 403 forbidden for the others', async (t) => {
  const d = await up(config());
  t.after(() => stopClean(d));

  for (const tok of [ALICE, BOB]) {
    const r = await d.post('/v1/reload', {}, { headers: auth(tok) });
    assert.equal(r.status, 403);
    assert.equal(r.json.error.code, 'forbidden');
    assert.equal((await d.get('/metrics', { headers: auth(tok) })).status, 403);
    assert.equal((await d.post('/v1/servers/fx/authorize', {}, { headers: auth(tok) })).status, 403);
    assert.equal((await d.request('DELETE', '/v1/servers/fx/authorize', { headers: auth(tok) })).status, 403);
  }
  assert.equal((await d.get('/metrics', { headers: auth(ADMIN) })).status, 200);
  assert.equal((await d.post('/v1/reload', {}, { headers: auth(ADMIN) })).status, 200);
});

test('/mcp 2025-11-25 (SDK client): lists and calls of the client\'s view; sessions are their client\'s', async (t) => {
  const d = await up(config());
  t.after(() => stopClean(d));
  const alice = await sdk1(d, ALICE), bob = await sdk1(d, BOB);
  t.after(() => Promise.all([alice.close(), bob.close()]));

  assert.deepEqual(names((await alice.listTools()).tools), ALICE_TOOLS);
  assert.deepEqual(names((await bob.listTools()).tools), BOB_TOOLS);
  assert.deepEqual((await alice.listResources()).resources, []);
  assert.deepEqual((await bob.listResources()).resources.map((r) => r.uri).sort(), ['bres://a', 'bres://b']);
  assert.equal((await alice.callTool({ name: 'echo', arguments: { text: 'hi' } })).isError ?? false, false);

  const err = async (p) => { try { await p; } catch (e) { return { code: e.code, message: e.message }; } return null; };
  for (const [c, name] of [[alice, 'add'], [alice, 'res_echo'], [bob, 'res_tool_0']]) {
    const denied = await err(c.callTool({ name, arguments: { a: 1, b: 2 } }));
    const unknown = await err(c.callTool({ name: 'no_such_tool', arguments: { a: 1, b: 2 } }));
    assert.equal(denied.code, -32602);
    assert.equal(denied.message, unknown.message.replace('no_such_tool', name));
  }
  const r1 = await err(alice.readResource({ uri: 'bres://a' }));
  const r2 = await err(alice.readResource({ uri: 'bres://zzz' }));
  assert.equal(r1.code, r2.code);
  assert.equal(r1.message, r2.message.replace('bres://zzz', 'bres://a'));
  assert.match((await bob.readResource({ uri: 'bres://a' })).contents[0].text, /contents of bres:\/\/a/);

  // alice's session id is no session for bob
  const sid = alice.transport?.sessionId ?? alice._transport?.sessionId;
  assert.ok(sid, 'the SDK keeps the session id');
  const r = await d.request('POST', '/mcp', { headers: { 'content-type': 'application/json',
    accept: 'application/json, text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25', ...auth(BOB) },
  body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) });
  assert.equal(r.status, 404);
});

test('/mcp 2026-07-28 (SDK v2 client and raw): the client\'s view, denied as unknown', async (t) => {
  const d = await up(config());
  t.after(() => stopClean(d));
  const alice = await sdk2(url(d), { mode: 'modern', headers: auth(ALICE) });
  t.after(() => alice.close());
  assert.equal(alice.ready, true, JSON.stringify(alice.error));
  assert.deepEqual(names((await alice.call({ op: 'listTools' })).result.tools), ALICE_TOOLS);

  const list = await modern(d, BOB, 'tools/list', {});
  assert.equal(list.status, 200, list.body);
  assert.deepEqual(names(list.json.result.tools), BOB_TOOLS);
  for (const [tok, name] of [[ALICE, 'add'], [BOB, 'res_tool_0']]) {
    const a = await modern(d, tok, 'tools/call', { name, arguments: { a: 1, b: 2 } });
    const u = await modern(d, tok, 'tools/call', { name: 'no_such_tool', arguments: { a: 1, b: 2 } });
    assert.equal(a.status, u.status);
    assert.equal(a.json.error.code, -32602);
    assert.equal(a.json.error.message, u.json.error.message.replace('no_such_tool', name));
  }
  const ok = await modern(d, BOB, 'tools/call', { name: 'res_echo', arguments: { text: 'yo' } });
  assert.equal(ok.json.result.content[0].text, 'yo');
  const res = await modern(d, ALICE, 'resources/list', {});
  assert.deepEqual(res.json.result.resources, []);
});

test('a reload that takes a tool away: the next call fails, long-lived sessions included', async (t) => {
  const d = await up(config());
  t.after(() => stopClean(d));
  const alice = await sdk1(d, ALICE), bob = await sdk1(d, BOB);
  t.after(() => Promise.all([alice.close(), bob.close()]));
  const changed = { alice: 0, bob: 0 };
  alice.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed.alice++; });
  bob.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed.bob++; });
  assert.equal((await alice.callTool({ name: 'echo', arguments: { text: 'a' } })).content[0].text, 'a');
  await sleep(300); // the SDK's GET streams are open

  fs.writeFileSync(d.configPath, config("['add', 'echo']"));
  const r = await d.post('/v1/reload', {}, { headers: auth(ADMIN) });
  assert.equal(r.status, 200, r.body);
  await waitFor(() => changed.alice > 0);
  assert.deepEqual(names((await alice.listTools()).tools), ALICE_TOOLS.filter((n) => n !== 'echo'));
  await assert.rejects(alice.callTool({ name: 'echo', arguments: { text: 'a' } }), (e) => e.code === -32602);
  const rest = await d.post('/v1/tools/echo/call', { arguments: { text: 'a' } }, { headers: auth(ALICE) });
  assert.equal(rest.status, 404);
  assert.equal((await bob.callTool({ name: 'echo', arguments: { text: 'b' } })).content[0].text, 'b');
  await sleep(500);
  assert.equal(changed.bob, 0, 'bob\'s view did not change');
});

test('config: same token twice, a bad digest, no token are errors', async () => {
  const { run } = await import('./lib/harness.mjs');
  const dir = fs.mkdtempSync('/tmp/mcpgw-clients-');
  const check = (yaml) => {
    fs.writeFileSync(path.join(dir, 'mcp.yaml'), yaml);
    return run(['--check-config', '-c', path.join(dir, 'mcp.yaml')]);
  };
  let r = await check(`version: 1\nclients:\n  a: {token: ${ALICE}}\n  b: {token_sha256: ${sha(ALICE)}}\n`);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr + r.stdout, /clients 'a' and 'b' have the same token/);
  r = await check(`version: 1\ngateway: {auth_token: ${ALICE}}\nclients:\n  a: {token: ${ALICE}}\n`);
  assert.match(r.stderr + r.stdout, /clients 'a' and 'default' have the same token/);
  r = await check('version: 1\nclients:\n  a: {token_sha256: abc}\n');
  assert.match(r.stderr + r.stdout, /64 lowercase hex digits/);
  r = await check('version: 1\nclients:\n  a: {servers: []}\n');
  assert.match(r.stderr + r.stdout, /needs a token or a token_sha256/);
  r = await check(`version: 1\nclients:\n  a: {token: ${ALICE}, admin: true, tools: ['x_*']}\n`);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.doesNotMatch(r.stderr + r.stdout, new RegExp(ALICE));
  // mcpgw client token NAME: a token and its token_sha256 line
  const tok = await run(['client', 'token', 'carol']);
  assert.equal(tok.code, 0, tok.stderr);
  const token = /^# ([A-Za-z0-9_-]{43})$/m.exec(tok.stdout)[1];
  assert.match(tok.stdout, new RegExp(`clients:\\n  carol:\\n    token_sha256: ${sha(token)}\\n`));
  assert.notEqual((await run(['client', 'token', 'carol'])).stdout, tok.stdout, 'fresh each time');
  assert.equal((await run(['client', 'token', 'default'])).code, 2);
  r = await check(`version: 1\n${tok.stdout.split('\n').filter((l) => !l.startsWith('#')).join('\n')}`);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  fs.rmSync(dir, { recursive: true, force: true });
});

// fx leases an instance per dialog: the same dialog name of two clients is
// two dialogs, whichever way it is named.
const dialogConfig = () => `version: 1
gateway:
  auth_token: ${ADMIN}
clients:
  alice: {token: ${ALICE}}
  bob: {token: ${BOB}}
servers:
  fx:
    command: ${FIXTURE}
`;

test('dialogs belong to their client: body, header, URL and the default dialog; listing and release', async (t) => {
  const d = await up(dialogConfig());
  t.after(() => stopClean(d));
  const call = async (tok, body, headers = {}) => {
    const r = await d.post('/v1/tools/echo/call', { arguments: { text: 'x' }, ...body }, { headers: { ...auth(tok), ...headers } });
    assert.equal(r.status, 200, r.body);
    return r.json.lease.instance;
  };
  const a = await call(ALICE, { dialog: 'chat1' }), b = await call(BOB, { dialog: 'chat1' });
  assert.notEqual(a, b, 'two clients, two dialogs');
  assert.equal(await call(ALICE, {}, { 'x-mcpgw-dialog': 'chat1' }), a);
  assert.equal(await call(BOB, {}, { 'x-mcpgw-dialog': 'chat1' }), b);
  const adm = await call(ADMIN, { dialog: 'chat1' });
  assert.ok(adm !== a && adm !== b);

  // the URL's dialog on /mcp (2025-11-25 session) and the default dialog of a 2026-07-28 request
  const viaUrl = async (tok) => {
    const transport = new StreamableHTTPClientTransport(new URL(url(d, '/mcp/d/chat1')), { requestInit: { headers: auth(tok) } });
    const c = new Client({ name: 'same-name', version: '1' });
    await c.connect(transport);
    const r = await c.callTool({ name: 'echo', arguments: { text: 'u' } });
    await c.close();
    return r._meta['mcpgw/lease'].instance;
  };
  assert.equal(await viaUrl(ALICE), a);
  assert.equal(await viaUrl(BOB), b);
  const dflt = async (tok) => (await modern(d, tok, 'tools/call', { name: 'echo', arguments: { text: 'm' } })).json.result._meta['mcpgw/lease'].instance;
  const da = await dflt(ALICE), db = await dflt(BOB);
  assert.notEqual(da, db, 'mcp-client:raw of alice and of bob');

  // each lists its own, as it named them; the admin lists all with their client
  const list = async (tok) => (await d.get('/v1/dialogs', { headers: auth(tok) })).json.dialogs;
  assert.deepEqual((await list(ALICE)).map((x) => x.dialog).sort(), ['chat1', 'mcp-client:raw']);
  assert.ok((await list(ALICE)).every((x) => x.client === 'alice'));
  assert.deepEqual((await list(BOB)).map((x) => x.dialog).sort(), ['chat1', 'mcp-client:raw']);
  const all = (await list(ADMIN)).map((x) => `${x.client}:${x.dialog}`).sort();
  assert.deepEqual(all, ['alice:chat1', 'alice:mcp-client:raw', 'bob:chat1', 'bob:mcp-client:raw', 'default:chat1']);
  const servers = (await d.get('/v1/servers', { headers: auth(BOB) })).json.servers;
  const shown = servers[0].instances.filter((i) => i.dialog).map((i) => i.dialog).sort();
  assert.deepEqual(shown, ['chat1', 'mcp-client:raw'], 'bob sees no dialog of another client');

  // bob releases his chat1, not alice's; he cannot name hers; the admin can
  const rel = await d.post('/v1/dialogs/chat1/release', {}, { headers: auth(BOB) });
  assert.deepEqual(rel.json, { released: ['fx'] });
  assert.equal(await call(ALICE, { dialog: 'chat1' }), a, 'alice keeps her instance');
  const other = await d.post('/v1/dialogs/chat1/release', { client: 'alice' }, { headers: auth(BOB) });
  assert.equal(other.status, 403);
  assert.equal(other.json.error.code, 'forbidden');
  assert.deepEqual((await d.post('/v1/dialogs/chat1/release', { client: 'alice' }, { headers: auth(ADMIN) })).json, { released: ['fx'] });
  assert.ok(!(await list(ALICE)).some((x) => x.dialog === 'chat1'));
  assert.ok((await list(ADMIN)).some((x) => x.client === 'default' && x.dialog === 'chat1'), 'the admin\'s own stays');
  // /v1/events: bob's snapshot holds his dialogs only, and alice's new
  // lease reaches her stream (as she named it), not bob's
  const streams = { alice: events(d, ALICE), bob: events(d, BOB) };
  t.after(() => { streams.alice.close(); streams.bob.close(); });
  const snap = await streams.bob.snapshot;
  assert.deepEqual(snap.dialogs.map((x) => x.dialog).sort(), ['mcp-client:raw'], 'his chat1 was released above');
  await streams.alice.snapshot;
  await call(ALICE, { dialog: 'chat9' });
  await waitFor(() => streams.alice.seen.some((e) => e.type === 'lease' && e.data.dialog === 'chat9'));
  await sleep(300);
  assert.ok(!streams.bob.seen.some((e) => e.type === 'lease'), JSON.stringify(streams.bob.seen));
});

// GET /v1/events as `token`: the snapshot, then every event seen.
function events(d, token) {
  const seen = [];
  let buf = '', req, resolveSnap;
  const snapshot = new Promise((r) => { resolveSnap = r; });
  req = http.get({ host: '127.0.0.1', port: d.port, path: '/v1/events', headers: auth(token) }, (res) => {
    res.on('data', (chunk) => {
      buf += chunk;
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const type = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (type === 'snapshot') resolveSnap(JSON.parse(data));
        else if (type) seen.push({ type, data: JSON.parse(data) });
      }
    });
  });
  req.on('error', () => {});
  return { snapshot, seen, close: () => req.destroy() };
}

test('limits per client: rate (REST 429 with Retry-After, /mcp -32029) and max_concurrent, in /metrics', async (t) => {
  const d = await up(`version: 1
gateway:
  auth_token: ${ADMIN}
clients:
  alice: {token: ${ALICE}, rate: 3/min}
  bob: {token: ${BOB}, max_concurrent: 1}
servers:
  fx:
    command: ${FIXTURE}
    truely-stateless: true
`);
  t.after(() => stopClean(d));
  const call = (tok, name = 'echo', args = { text: 'x' }) =>
    d.post(`/v1/tools/${name}/call`, { arguments: args }, { headers: auth(tok) });

  for (let i = 0; i < 3; i++) assert.equal((await call(ALICE)).status, 200);
  const over = await call(ALICE);
  assert.equal(over.status, 429);
  assert.equal(over.json.error.code, 'rate_limited');
  const after = Number(over.headers['retry-after']);
  assert.ok(after >= 15 && after <= 21, `Retry-After ${after}: a token of 3/min comes back in 20 s`);
  const alice = await sdk1(d, ALICE);
  t.after(() => alice.close());
  await assert.rejects(alice.callTool({ name: 'echo', arguments: { text: 'x' } }), (e) => e.code === -32029);
  const m = await modern(d, ALICE, 'tools/call', { name: 'echo', arguments: { text: 'x' } });
  assert.equal(m.json.error.code, -32029);
  assert.equal((await call(ADMIN)).status, 200, 'the others are not limited');

  const slow = call(BOB, 'sleep', { ms: 1500 });
  await waitFor(async () => /mcpgw_client_calls_in_flight\{client="bob"\} 1/.test((await d.get('/metrics', { headers: auth(ADMIN) })).body));
  const second = await call(BOB);
  assert.equal(second.status, 429);
  assert.equal(second.json.error.code, 'rate_limited');
  assert.equal((await slow).status, 200);
  assert.equal((await call(BOB)).status, 200, 'free again once the first ended');

  const metrics = (await d.get('/metrics', { headers: auth(ADMIN) })).body;
  assert.match(metrics, /mcpgw_client_calls_refused_total\{client="alice"\} 3\n/);
  assert.match(metrics, /mcpgw_client_calls_refused_total\{client="bob"\} 1\n/);
  assert.match(metrics, /mcpgw_client_calls_in_flight\{client="bob"\} 0\n/);
  assert.match(metrics, /mcpgw_client_calls_in_flight\{client="default"\} 0\n/);
});

test('an input round\'s requestState is its client\'s, with a dialog and without', async (t) => {
  const d = await up(`version: 1
gateway:
  auth_token: ${ADMIN}
clients:
  alice: {token: ${ALICE}}
  bob: {token: ${BOB}}
servers:
  fx:
    command: ${FIXTURE}
    args: ['--ask-on-call', 'elicitation/create']
  sx:
    command: ${FIXTURE}
    args: ['--ask-on-call', 'elicitation/create']
    truely-stateless: true
    transform: [{prefix: 's_'}]
`);
  t.after(() => stopClean(d));
  const accept = { action: 'accept', content: { name: 'Ann' } };
  for (const [tool, dialog] of [['echo', 'chat1'], ['s_echo', undefined]]) {
    const body = { dialog, arguments: { text: 'hello' } };
    const r1 = await d.post(`/v1/tools/${tool}/call`, body, { headers: auth(ALICE) });
    assert.equal(r1.status, 409, r1.body);
    const key = Object.keys(r1.json.inputRequests)[0];
    const retry = { ...body, inputResponses: { [key]: accept }, requestState: r1.json.requestState };
    const stolen = await d.post(`/v1/tools/${tool}/call`, retry, { headers: auth(BOB) });
    assert.equal(stolen.status, 400, stolen.body);
    assert.equal(stolen.json.error.code, 'bad_request_state');
    const r2 = await d.post(`/v1/tools/${tool}/call`, retry, { headers: auth(ALICE) });
    assert.equal(r2.status, 200, r2.body);
  }
});

test('a reload that gives a client a server: its own prompts/resources list_changed, no other client\'s', async (t) => {
  const d = await up(config());
  t.after(() => stopClean(d));
  const { ResourceListChangedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const alice = await sdk1(d, ALICE), bob = await sdk1(d, BOB);
  t.after(() => Promise.all([alice.close(), bob.close()]));
  const got = { alice: 0, bob: 0 };
  alice.setNotificationHandler(ResourceListChangedNotificationSchema, () => { got.alice++; });
  bob.setNotificationHandler(ResourceListChangedNotificationSchema, () => { got.bob++; });
  assert.deepEqual((await alice.listResources()).resources, []);
  await sleep(300); // the SDK's GET streams are open

  fs.writeFileSync(d.configPath, config().replace('servers: [fx]', 'servers: [fx, res]'));
  assert.equal((await d.post('/v1/reload', {}, { headers: auth(ADMIN) })).status, 200);
  await waitFor(() => got.alice > 0);
  assert.deepEqual((await alice.listResources()).resources.map((r) => r.uri).sort(), ['bres://a', 'bres://b']);
  await sleep(500);
  assert.equal(got.bob, 0, 'bob\'s view did not change');
});

test('prompts: the tools/deny globs decide over final prompt names, on REST and /mcp, listed and got', async (t) => {
  const d = await up(`version: 1
gateway:
  auth_token: ${ADMIN}
clients:
  alice: {token: ${ALICE}, tools: ['echo', 'simple-*']}
  bob: {token: ${BOB}, deny: ['args-*']}
servers:
  ev:
    truely-stateless: true
    command: ${path.join(nodeModules, '.bin/mcp-server-everything')}
    args: [stdio]
`);
  t.after(() => stopClean(d));
  const rest = async (tok) => names((await d.get('/v1/prompts', { headers: auth(tok) })).json.prompts);
  await waitFor(async () => (await rest(ADMIN)).includes('args-prompt'), 30000);
  const all = await rest(ADMIN);
  assert.ok(all.includes('simple-prompt'), JSON.stringify(all));
  const want = { [ALICE]: all.filter((n) => n.startsWith('simple-')), [BOB]: all.filter((n) => !n.startsWith('args-')) };
  assert.deepEqual(want[ALICE], ['simple-prompt']);
  assert.deepEqual(await rest(ALICE), want[ALICE]);
  assert.deepEqual(await rest(BOB), want[BOB]);

  const alice = await sdk1(d, ALICE), bob = await sdk1(d, BOB);
  t.after(() => Promise.all([alice.close(), bob.close()]));
  const err = async (p) => { try { await p; } catch (e) { return { code: e.code, message: e.message }; } return null; };
  for (const [c, tok] of [[alice, ALICE], [bob, BOB]]) {
    assert.deepEqual(names((await c.listPrompts()).prompts), want[tok]);
    assert.ok((await c.getPrompt({ name: 'simple-prompt' })).messages.length > 0);
    const denied = await err(c.getPrompt({ name: 'args-prompt', arguments: { city: 'x' } }));
    const unknown = await err(c.getPrompt({ name: 'no-such-prompt', arguments: { city: 'x' } }));
    assert.ok(denied && unknown, 'both refused');
    assert.equal(denied.code, unknown.code);
    assert.equal(denied.message, unknown.message.replace('no-such-prompt', 'args-prompt'));
  }
});
