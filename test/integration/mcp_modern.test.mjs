// /mcp for MCP 2026-07-28 clients (issue 18): the official SDK v2 client
// (@modelcontextprotocol/client 2.4.0, on Node 22: lib/harness.mjs sdk2) in
// modern, auto and legacy modes next to each other, dialogs without sessions
// (URL and header), progress, cancellation by closing the stream,
// subscriptions/listen after a reload, input rounds from a 2025-era
// upstream; and the revision's transport rules checked with raw HTTP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { start, waitFor, fixtures, sdk2, sleep } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const MODERN = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};

async function stopClean(d) {
  const r = await d.stop();
  assert.doesNotMatch(d.stderr, /AddressSanitizer|LeakSanitizer|runtime error/);
  assert.equal(r.code, 0, d.stderr.slice(-2000));
}

// One raw 2026-07-28 POST: headers as a conforming client sends them unless
// `headers` replaces some (null removes one).
function modern(d, method, params, { id = 1, headers = {}, urlPath = '/mcp' } = {}) {
  const h = {
    'content-type': 'application/json', accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN, 'mcp-method': method,
  };
  const name = params?.name ?? (method === 'resources/read' ? params?.uri : undefined);
  if (name !== undefined) h['mcp-name'] = name;
  for (const [k, v] of Object.entries(headers)) {
    if (v === null) delete h[k.toLowerCase()];
    else h[k.toLowerCase()] = v;
  }
  return d.request('POST', urlPath, { headers: h, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) });
}

// leased fixture `fx` (one instance per dialog) and a shared one `shared`.
const config = (extra = '') => `version: 1
servers:
  fx:
    command: ${FIXTURE}
${extra}  shared:
    command: ${FIXTURE}
    args: ['--tools', '1']
    truely-stateless: true
    transform: [{prefix: 'shared_'}]
`;

const url = (d, p = '/mcp') => `http://127.0.0.1:${d.port}${p}`;
const textOf = (r) => r.content.map((c) => c.text).join('\n');
const dialogsOf = async (d) => Object.fromEntries((await d.get('/v1/dialogs')).json.dialogs
  .map((x) => [x.dialog, x.leases.map((l) => l.instance)]));

test('the SDK v2 client in modern, auto and legacy modes: era, discover, catalog and calls', async (t) => {
  const d = await start(config(), { waitReady: true });
  t.after(() => stopClean(d));

  const pinned = await sdk2(url(d, '/mcp/d/pinned'), { mode: 'modern' });
  t.after(() => pinned.close());
  assert.equal(pinned.ready, true, JSON.stringify(pinned.error));
  assert.equal(pinned.version, MODERN);
  const disc = (await pinned.call({ op: 'discover' })).result;
  assert.deepEqual(disc.supportedVersions, [MODERN]);
  assert.equal(disc.capabilities.tools.listChanged, true);
  assert.equal(disc._meta['io.modelcontextprotocol/serverInfo'].name, 'mcpgw');
  assert.match(disc.instructions, /mcp_release/);

  const auto = await sdk2(url(d, '/mcp/d/auto'), { mode: 'auto' });
  t.after(() => auto.close());
  assert.equal(auto.version, MODERN, 'auto mode settles on 2026-07-28');
  const legacy = await sdk2(url(d, '/mcp/d/legacy'), { mode: 'legacy' });
  t.after(() => legacy.close());
  assert.equal(legacy.version, '2025-11-25');

  for (const c of [pinned, auto, legacy]) {
    const names = (await c.call({ op: 'listTools' })).result.tools.map((x) => x.name).sort();
    for (const want of ['add', 'echo', 'mcp_release', 'shared_tool_0']) assert.ok(names.includes(want), names.join());
    const r = (await c.call({ op: 'callTool', name: 'add', arguments: { a: 2, b: 40 } })).result;
    assert.equal(textOf(r), '42');
    assert.deepEqual(r.structuredContent, { sum: 42 });
  }
  // Each client's dialog (the URL) holds its own instance of fx.
  const dialogs = await dialogsOf(d);
  for (const name of ['pinned', 'auto', 'legacy']) assert.equal(dialogs[name]?.length, 1, JSON.stringify(dialogs));
  assert.equal(new Set([dialogs.pinned[0], dialogs.auto[0], dialogs.legacy[0]]).size, 3);
});

test('dialogs by header: two modern clients naming two dialogs get two instances; none named gets its client\'s', async (t) => {
  const d = await start(config(), { waitReady: true });
  t.after(() => stopClean(d));
  const a = await sdk2(url(d), { mode: 'modern', headers: { 'X-Mcpgw-Dialog': 'conv-a' } });
  t.after(() => a.close());
  const b = await sdk2(url(d), { mode: 'modern', headers: { 'X-Mcpgw-Dialog': 'conv-b/agent' } });
  t.after(() => b.close());
  const ra = (await a.call({ op: 'callTool', name: 'echo', arguments: { text: 'a' } })).result;
  const rb = (await b.call({ op: 'callTool', name: 'echo', arguments: { text: 'b' } })).result;
  assert.equal(textOf(ra), 'a');
  assert.notEqual(ra._meta['mcpgw/lease'].instance, rb._meta['mcpgw/lease'].instance);
  const dialogs = await dialogsOf(d);
  assert.deepEqual(dialogs['conv-a'], [ra._meta['mcpgw/lease'].instance]);
  assert.deepEqual(dialogs['conv-b/agent'], [rb._meta['mcpgw/lease'].instance]);
  // A REST call naming the same dialog shares its lease.
  const rest = await d.post('/v1/tools/echo/call', { dialog: 'conv-a', arguments: { text: 'rest' } });
  assert.equal(rest.status, 200, rest.body);
  assert.deepEqual((await dialogsOf(d))['conv-a'], dialogs['conv-a']);

  // No dialog: the client's own (gateway.mcp_default_dialog: client, the
  // default; mcp_dialogs.test.mjs has the others), an instance of its own;
  // the shared server needs none.
  const none = await sdk2(url(d), { mode: 'modern' });
  t.after(() => none.close());
  const r = (await none.call({ op: 'callTool', name: 'echo', arguments: { text: 'x' } })).result;
  assert.equal(r.isError, undefined, JSON.stringify(r));
  assert.deepEqual((await dialogsOf(d))['mcp-client:mcpgw-sdk2-test'], [r._meta['mcpgw/lease'].instance]);
  assert.ok(![ra, rb].some((x) => x._meta['mcpgw/lease'].instance === r._meta['mcpgw/lease'].instance));
  assert.equal(textOf((await none.call({ op: 'callTool', name: 'shared_tool_0' })).result), 'tool_0 called');
});

test('raw 2026-07-28 requests: envelope, headers, removed methods, caching hints, errors with the request id', async (t) => {
  const tools = JSON.stringify([{ name: 'region', description: 'x-mcp-header',
    inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } } }]);
  const d = await start(`version: 1
servers:
  fx:
    command: ${FIXTURE}
  res:
    command: ${FIXTURE}
    args: ['--resources', 'rs', '--tools-json', 'tools.json']
    truely-stateless: true
`, { waitReady: true, files: { 'tools.json': tools } });
  t.after(() => stopClean(d));

  let r = await modern(d, 'tools/list', {}, { id: 101 });
  assert.equal(r.status, 400);
  assert.equal(r.json.id, 101);
  assert.equal(r.json.error.code, -32602);
  r = await modern(d, 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } }, { id: 102 });
  assert.deepEqual([r.status, r.json.id, r.json.error.code], [400, 102, -32602]);
  r = await modern(d, 'tools/list', { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'v999' } }, { id: 103 });
  assert.deepEqual([r.status, r.json.id, r.json.error.code], [400, 103, -32020], 'header and body disagree');
  r = await modern(d, 'server/discover', { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'v999' } },
    { id: 104, headers: { 'mcp-protocol-version': 'v999' } });
  assert.deepEqual([r.status, r.json.id, r.json.error.code], [400, 104, -32022]);
  assert.deepEqual(r.json.error.data, { supported: [MODERN], requested: 'v999' });
  r = await modern(d, 'tools/list', { _meta: META }, { headers: { 'mcp-method': 'prompts/list' } });
  assert.deepEqual([r.status, r.json.error.code], [400, -32020]);
  r = await modern(d, 'tools/call', { name: 'add', arguments: { a: 1, b: 2 }, _meta: META }, { headers: { 'mcp-name': 'echo' } });
  assert.deepEqual([r.status, r.json.error.code], [400, -32020]);
  r = await modern(d, 'tools/call', { name: 'add', arguments: { a: 1, b: 2 }, _meta: META },
    { headers: { 'x-mcpgw-dialog': 'raw', 'mcp-name': ` =?base64?${Buffer.from('add').toString('base64')}?= ` } });
  assert.equal(r.status, 200, r.body);
  assert.equal(r.json.result.content[0].text, '3');
  assert.equal(r.json.result.resultType, 'complete');

  // Mcp-Param-Region must repeat arguments.region.
  r = await modern(d, 'tools/call', { name: 'region', arguments: { region: 'eu' }, _meta: META }, { id: 7 });
  assert.deepEqual([r.status, r.json.id, r.json.error.code], [400, 7, -32020]);
  assert.match(r.json.error.message, /Mcp-Param-Region/);
  r = await modern(d, 'tools/call', { name: 'region', arguments: { region: 'eu' }, _meta: META },
    { headers: { 'mcp-param-region': 'eu' } });
  assert.equal(r.status, 200, r.body);

  for (const method of ['ping', 'initialize', 'logging/setLevel', 'resources/subscribe', 'no/such']) {
    r = await modern(d, method, { _meta: META }, { id: 'x' });
    assert.deepEqual([r.status, r.json.id, r.json.error.code], [404, 'x', -32601], method);
  }
  r = await d.request('GET', '/mcp', { headers: { accept: 'text/event-stream', 'mcp-protocol-version': MODERN } });
  assert.equal(r.status, 405);
  r = await d.request('POST', '/mcp', { headers: { 'content-type': 'application/json', 'mcp-protocol-version': MODERN },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }) });
  assert.equal(r.status, 202);

  for (const method of ['tools/list', 'resources/list', 'resources/templates/list']) {
    r = await modern(d, method, { _meta: META });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.json.result.resultType, 'complete');
    assert.equal(r.json.result.cacheScope, 'public');
    assert.ok(Number.isInteger(r.json.result.ttlMs) && r.json.result.ttlMs >= 0);
    assert.equal(r.json.result._meta['io.modelcontextprotocol/serverInfo'].name, 'mcpgw');
  }
  r = await modern(d, 'resources/read', { uri: 'rs://a', _meta: META });
  assert.equal(r.json.result.contents[0].text, 'contents of rs://a');
  assert.equal(r.json.result.cacheScope, 'private');
  r = await modern(d, 'resources/read', { uri: 'rs://nope/x', _meta: META }, { id: 9 });
  assert.deepEqual([r.json.id, r.json.error.code, r.json.error.data], [9, -32602, { uri: 'rs://nope/x' }]);
  // The 2025-era endpoint is unchanged next to it.
  r = await d.request('POST', '/mcp', { headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
  assert.equal(r.status, 400);
  assert.match(r.json.error.message, /Mcp-Session-Id/);
});

// A tools/call of the common shape is read from the body's text without its
// tree (mcp_modern.c); any other shape is parsed. Each body below is sent
// as written and again with an unknown member in params, which sends it
// down the parsed path: the two answers must be the same bytes. The debug
// line "mcp call read from its text" tells which path a request took.
test('a tools/call read from its text answers as the parsed body does, results and errors alike', async (t) => {
  const d = await start(config(), { waitReady: true, args: ['--log-level', 'debug'] });
  t.after(() => stopClean(d));
  const meta = JSON.stringify(META);
  const send = (body, headers = {}) => d.request('POST', '/mcp/d/text', {
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'add', ...headers }, body });
  // `params` is the text of the params object's members.
  const body = (params, { id = '5', jsonrpc = '"2.0"' } = {}) =>
    `{"jsonrpc":${jsonrpc},"id":${id},"method":"tools/call","params":{${params}}}`;
  const cases = [
    // [what, body, status, read from the text]
    ['plain', body(`"name":"add","arguments":{"a":1,"b":2},"_meta":${meta}`), 200, true],
    ['spaced, reordered, escaped', ` {\n "params" : { "_meta" : ${meta} , "arguments" : { "b" : 2 , "a" : 1 } , ` +
      `"na\\u006de" : "\\u0061dd" } , "method" : "tools/call" , "id" : 5 , "jsonrpc" : "2.0" }\n`, 200, true],
    ['level and client', body(`"name":"add","arguments":{"a":1,"b":2},"_meta":{"io.modelcontextprotocol/logLevel":"info",` +
      `"io.mcpgw/dialog":"text",${meta.slice(1)}`), 200, true],
    ['a string id', body(`"name":"add","arguments":{"a":1,"b":2},"_meta":${meta}`, { id: '"five"' }), 200, true],
    ['no arguments', body(`"name":"add","_meta":${meta}`), 200, true],
    ['arguments not an object', body(`"name":"add","arguments":[1],"_meta":${meta}`), 400, true],
    ['no name', body(`"arguments":{},"_meta":${meta}`), 400, true],
    ['a name not a string', body(`"name":42,"arguments":{},"_meta":${meta}`), 400, false],
    ['a repeated name', body(`"name":"add","name":"add","arguments":{},"_meta":${meta}`), 400, false],
    ['a repeated _meta member', body(`"name":"add","_meta":{"io.modelcontextprotocol/logLevel":"info",` +
      `"io.modelcontextprotocol/logLevel":"info",${meta.slice(1)}`), 400, false],
    ['a name not UTF-8', body(`"name":"a\xffd","_meta":${meta}`), 400, false],
    ['capabilities not an object', body(`"name":"add","_meta":{"io.modelcontextprotocol/protocolVersion":"${MODERN}",` +
      `"io.modelcontextprotocol/clientCapabilities":"x"}`), 400, true],
    ['a level not known', body(`"name":"add","_meta":{"io.modelcontextprotocol/logLevel":"loud",${meta.slice(1)}`), 400, true],
    ['a dialog not valid', body(`"name":"add","_meta":{"io.mcpgw/dialog":"a b",${meta.slice(1)}`), 400, true],
    ['another dialog than the URL', body(`"name":"add","_meta":{"io.mcpgw/dialog":"other",${meta.slice(1)}`), 400, true],
    ['jsonrpc 1.0', body(`"name":"add","_meta":${meta}`, { jsonrpc: '"1.0"' }), 400, true],
    ['an id not valid', body(`"name":"add","_meta":${meta}`, { id: '[5]' }), 400, true],
    ['cut short', body(`"name":"add","_meta":${meta}`).slice(0, -2), 400, false],
  ];
  // the dialog's first call takes the lease and carries its reminder once
  assert.equal((await send(cases[0][1])).status, 200);
  const count = (line) => d.stderr.split(line).length - 1;
  // How many requests were read from the text, counted once every request's
  // access line (written after it) is in the log: the log's pipe and the
  // answer's socket deliver in either order, so a count taken when only an
  // earlier request's line had come would be off by one.
  let sent = 1;
  const logged = () => waitFor(() => count('path=/mcp/d/text status=') >= sent);
  const readAsText = async (send1) => {
    await logged();
    const text = count('msg="mcp call read from its text"');
    const r = await send1();
    sent++;
    await logged();
    return [r, count('msg="mcp call read from its text"') - text];
  };
  for (const [what, text, status, fromText] of cases) {
    const [asText, n1] = await readAsText(() => send(Buffer.from(text, 'latin1')));
    const [parsed, n2] = await readAsText(() => send(Buffer.from(text.replace('"params":{', '"params":{"x-unknown":true,')
      .replace('"params" : {', '"params" : { "x-unknown" : true ,'), 'latin1')));
    assert.equal(n1, fromText ? 1 : 0, `${what}: read from the text`);
    assert.equal(n2, 0, `${what}: parsed`);
    assert.equal(asText.status, status, `${what}: ${asText.body}`);
    assert.equal(parsed.status, asText.status, what);
    if (/^Parse error/.test(asText.json?.error?.message)) {
      // the message names the line and column, which the added member moves
      assert.equal(asText.json.error.code, -32700, what);
      assert.equal(parsed.json.error.code, -32700, what);
      continue;
    }
    assert.equal(parsed.body, asText.body, what);
  }
  // the headers are checked on that path too
  const r = await send(body(`"name":"add","arguments":{"a":1,"b":2},"_meta":${meta}`), { 'mcp-name': 'echo' });
  assert.deepEqual([r.status, r.json.error.code], [400, -32020]);
  assert.equal((await send(body(`"name":"add","arguments":{"a":1,"b":2},"_meta":${meta}`))).json.result.content[0].text, '3');
  // each request logs its revision at debug, whichever path read it
  const revision = 'msg="mcp request" version=2026-07-28 method=tools/call dialog=text';
  assert.ok(count(revision) >= 2 * cases.filter((c) => c[2] === 200).length, d.stderr.slice(-3000));
  assert.equal((await modern(d, 'server/discover', { _meta: META })).status, 200);
  await d.waitLog(/msg="mcp request" version=2026-07-28 method=server\/discover dialog=mcp-client:raw /);
});

test('progress on the request\'s stream; closing the stream cancels the call upstream', async (t) => {
  const log = path.join(fs.mkdtempSync('/tmp/mcpgw-modern-'), 'fx.log');
  const d = await start(config(`    args: ['--log', '${log}']\n`), { waitReady: true });
  t.after(() => stopClean(d));
  const c = await sdk2(url(d, '/mcp/d/prog'), { mode: 'modern' });
  t.after(() => c.close());
  const r = (await c.call({ op: 'callTool', name: 'progress', arguments: { steps: 3, ms: 30 }, progress: true })).result;
  assert.match(textOf(r), /progress done: 3 steps/);
  assert.deepEqual(r.progressSeen.map((p) => p.progress), [1, 2, 3]);

  const slowCall = c.start({ op: 'callTool', name: 'sleep', arguments: { ms: 20000 } });
  await waitFor(() => fs.readFileSync(log, 'utf8').split('\n').filter((l) => l === 'tools/call').length >= 2);
  await c.call({ op: 'abort', call: slowCall.id });
  const aborted = await slowCall.done;
  assert.ok(aborted.error, JSON.stringify(aborted));
  await waitFor(() => fs.readFileSync(log, 'utf8').includes('notifications/cancelled'));
  await d.waitLog(/msg="mcp tool call" tool=sleep .*status=cancelled/);
});

test('subscriptions/listen hears tools/list_changed after a reload adds a server', async (t) => {
  const d = await start(config(), { waitReady: true });
  t.after(() => stopClean(d));
  const c = await sdk2(url(d), { mode: 'modern' });
  t.after(() => c.close());
  const sub = (await c.call({ op: 'listen', filter: { toolsListChanged: true, promptsListChanged: true } })).result;
  assert.deepEqual(sub.honoredFilter, { toolsListChanged: true, promptsListChanged: true });
  fs.writeFileSync(d.configPath, `${config()}  more:
    command: ${FIXTURE}
    args: ['--tools', '2']
    transform: [{prefix: 'more_'}]
`);
  assert.equal((await d.post('/v1/reload', {})).status, 200);
  await waitFor(() => c.notifications.some((n) => n.method === 'notifications/tools/list_changed'));
  const names = (await c.call({ op: 'listTools' })).result.tools.map((x) => x.name);
  assert.ok(names.includes('more_tool_1'), names.join());
  assert.ok(!c.notifications.some((n) => n.method === 'notifications/resources/list_changed'));
});

test('a 2025-era upstream\'s elicitation reaches a modern client as input rounds; without the capability, -32021', async (t) => {
  const d = await start(`version: 1
servers:
  ask:
    command: ${FIXTURE}
    args: ['--ask-on-call', 'elicitation/create;elicitation/create']
`, { waitReady: true });
  t.after(() => stopClean(d));
  const c = await sdk2(url(d, '/mcp/d/asker'), { mode: 'modern', elicit: { name: 'Ada' } });
  t.after(() => c.close());
  const r = await c.call({ op: 'callTool', name: 'echo', arguments: { text: 'hi' } });
  assert.ok(r.result, JSON.stringify(r.error));
  const text = textOf(r.result);
  assert.match(text, /^hi/);
  assert.equal(text.match(/answer elicitation\/create: .*Ada/g).length, 2, text);

  const bare = await sdk2(url(d, '/mcp/d/bare'), { mode: 'modern' });
  t.after(() => bare.close());
  const e = await bare.call({ op: 'callTool', name: 'echo', arguments: { text: 'hi' } });
  assert.equal(e.error?.code, -32021, JSON.stringify(e));
});
