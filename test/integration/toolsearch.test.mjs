// Tool search (issue 29): GET /v1/tools?q= ranks the live catalog, the
// index follows reloads, format=anthropic&defer_loading marks tools for the
// Messages API's tool-search tool; /mcp's find_tools/forget_tools when
// gateway.tool_search is enabled; an answer made before the index is
// complete (a slow machine, a huge catalog) says what it misses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { start, waitFor, fixtures, tmpdir, sdk2 } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const schema = (props) => ({ type: 'object', properties: props });

// Tool definitions as real servers list them (GitHub's and Playwright's MCP servers).
const githubTools = [
  { name: 'create_issue', description: 'Create a new issue in a GitHub repository', inputSchema: schema({ owner: { type: 'string' }, repo: { type: 'string' }, title: { type: 'string' } }) },
  { name: 'list_pull_requests', description: 'List and filter repository pull requests', inputSchema: schema({ owner: { type: 'string' }, state: { type: 'string', description: 'open, closed or all' } }) },
  { name: 'search_code', description: 'Search for code across GitHub repositories', inputSchema: schema({ q: { type: 'string' } }) },
];
const browserTools = [
  { name: 'browser_navigate', description: 'Navigate to a URL', inputSchema: schema({ url: { type: 'string', description: 'The URL to navigate to' } }) },
  { name: 'browser_take_screenshot', description: 'Take a screenshot of the current page', inputSchema: schema({ filename: { type: 'string' } }) },
  { name: 'browser_click', description: 'Perform click on a web page', inputSchema: schema({ element: { type: 'string', description: 'Human-readable element description' } }) },
];

function config(dir, { browserExtra = '', gateway = '' } = {}) {
  const gh = path.join(dir, 'github.json');
  const web = path.join(dir, 'browser.json');
  fs.writeFileSync(gh, JSON.stringify(githubTools));
  fs.writeFileSync(web, JSON.stringify(browserTools));
  return `version: 1
gateway:
  tool_search:
    always_loaded: ['browser_navigate']
${gateway}servers:
  github:
    command: ${FIXTURE}
    args: ['--tools-json', '${gh}']
  playwright:
    command: ${FIXTURE}
    args: ['--tools-json', '${web}']
${browserExtra}`;
}

const q = (text, extra = '') => `/v1/tools?q=${encodeURIComponent(text)}${extra}`;
const names = (r) => r.json.tools.map((t) => t.name);

// The first search builds the index, for up to 50 ms before it answers:
// under valgrind that may not be the whole catalog, and the answer then
// says so. Waits (bounded) for an answer that does not; returns it.
const complete = (d, url) => waitFor(async () => {
  const r = await d.get(url);
  assert.equal(r.status, 200, r.body);
  return r.json.indexing === undefined && r;
});

test('GET /v1/tools?q= ranks the catalog, follows reloads and refuses bad queries', async (t) => {
  const dir = tmpdir();
  const d = await start(config(dir), { waitReady: true });
  t.after(() => d.stop());

  const shot = await complete(d, q('take a screenshot of the page'));
  assert.equal(shot.status, 200, shot.body);
  assert.equal(shot.json.query, 'take a screenshot of the page');
  assert.equal(typeof shot.json.version, 'number');
  assert.equal(shot.json.tools[0].name, 'browser_take_screenshot');
  assert.equal(shot.json.tools[0].toolset, 'playwright');
  assert.equal(shot.json.tools[0].originalName, 'browser_take_screenshot');
  assert.ok(shot.json.tools[0].inputSchema);
  assert.equal(typeof shot.json.tools[0].score, 'number');
  // Scores are rounded to thousandths and written so (3.491, not 3.4910000000000001).
  const written = [...shot.body.matchAll(/"score":([^,}]*)/g)].map((m) => m[1]);
  assert.equal(written.length, shot.json.tools.length);
  for (const w of written) assert.match(w, /^\d+(\.\d{1,3})?$/, shot.body.slice(0, 300));
  assert.ok(shot.json.tools.every((x, i, a) => i === 0 || a[i - 1].score >= x.score), 'best first');
  assert.equal(shot.headers.etag, `"${shot.json.version}"`);

  // The server id is a field: "github issues" finds the GitHub server's issue tool.
  assert.equal(names(await d.get(q('github issues')))[0], 'create_issue');
  // User words reach tool words through synonyms: "open a bug" is create_issue.
  assert.equal(names(await d.get(q('open a bug about the crash')))[0], 'create_issue');
  // A name prefix ranks first; + is a space.
  assert.equal(names(await d.get('/v1/tools?q=browser_cl'))[0], 'browser_click');
  assert.equal(names(await d.get('/v1/tools?q=show+the+open+pull+requests'))[0], 'list_pull_requests');

  assert.equal((await d.get(q('page', '&limit=1'))).json.tools.length, 1);
  const only = await d.get(q('search', '&toolset=github'));
  assert.ok(only.json.tools.length > 0 && only.json.tools.every((x) => x.toolset === 'github'), only.body);
  const oa = await d.get(q('take a screenshot', '&format=openai'));
  assert.equal(oa.json.tools[0].type, 'function');
  assert.equal(oa.json.tools[0].function.name, 'browser_take_screenshot');
  assert.equal(typeof oa.json.tools[0].score, 'number');
  assert.deepEqual((await d.get(q('zzzqqq'))).json.tools, []);

  for (const [url, re] of [
    ['/v1/tools?q=', /at least one word/],
    ['/v1/tools?q=%20%20', /at least one word/],
    [q('x'.repeat(513)), /longer than 512 bytes/],
    [q('page', '&limit=0'), /limit must be an integer from 1 to 100/],
    [q('page', '&limit=101'), /limit must be an integer from 1 to 100/],
    ['/v1/tools?limit=3', /give q too/],
    ['/v1/tools?q=%FF', /UTF-8/],
  ]) {
    const r = await d.get(url);
    assert.equal(r.status, 400, url);
    assert.equal(r.json.error.code, 'bad_query');
    assert.match(r.json.error.message, re, url);
  }
  assert.equal((await d.get(q('x'.repeat(512)))).status, 200);

  // A reload that takes browser_click away: the index follows the catalog.
  const before = shot.json.version;
  fs.writeFileSync(d.configPath, config(dir, { browserExtra: "    tools: {blacklist: ['browser_click']}\n" }));
  assert.equal((await d.post('/v1/reload', {})).status, 200);
  const after = await waitFor(async () => {
    const r = await d.get('/v1/tools?q=browser_cl');
    return r.json.version > before && r;
  });
  assert.ok(!names(after).includes('browser_click'), after.body);
  assert.equal(names(await d.get(q('take a screenshot')))[0], 'browser_take_screenshot');
});

test('format=anthropic&defer_loading marks tools for the tool-search tool, never the always-loaded ones', async (t) => {
  const dir = tmpdir();
  const d = await start(config(dir), { waitReady: true });
  t.after(() => d.stop());

  await complete(d, q('warm the index'));
  const all = await d.get('/v1/tools?format=anthropic&defer_loading=all');
  assert.equal(all.status, 200, all.body);
  const byName = Object.fromEntries(all.json.tools.map((x) => [x.name, x]));
  assert.equal(byName.browser_navigate.defer_loading, undefined, 'always_loaded');
  for (const n of ['create_issue', 'browser_click', 'browser_take_screenshot', 'mcp_release'])
    assert.equal(byName[n].defer_loading, true, n);
  assert.ok(byName.create_issue.input_schema);
  // defer_loading=true, as the Messages API spells the field, is 'all' (it was a
  // pattern matching no tool: nothing deferred, nothing said).
  const yes = await d.get('/v1/tools?format=anthropic&defer_loading=true');
  assert.deepEqual(yes.json.tools.map((x) => [x.name, x.defer_loading]), all.json.tools.map((x) => [x.name, x.defer_loading]));

  const globs = await d.get(`/v1/tools?format=anthropic&defer_loading=${encodeURIComponent('browser_*,search_*')}`);
  const deferred = globs.json.tools.filter((x) => x.defer_loading).map((x) => x.name).sort();
  assert.deepEqual(deferred, ['browser_click', 'browser_take_screenshot', 'search_code']);

  const searched = await d.get(q('take a screenshot', '&format=anthropic&defer_loading=all'));
  assert.equal(searched.json.tools[0].name, 'browser_take_screenshot');
  assert.equal(searched.json.tools[0].defer_loading, true);

  // The plain listing is unchanged.
  assert.ok((await d.get('/v1/tools?format=anthropic')).json.tools.every((x) => x.defer_loading === undefined));
  // always_loaded may change with no new catalog version: no ETag to revalidate.
  assert.equal(all.headers.etag, undefined);
  const many = Array.from({ length: 65 }, (_, i) => `t${i}_*`).join(',');
  for (const url of ['/v1/tools?defer_loading=all', '/v1/tools?format=openai&defer_loading=all', '/v1/tools?format=anthropic&defer_loading=',
    `/v1/tools?format=anthropic&defer_loading=${many}`]) {
    const r = await d.get(url);
    assert.equal(r.status, 400, url);
    assert.match(r.json.error.message, /defer_loading/);
  }
});

// ---- /mcp with gateway.tool_search enabled ----

// A server tool named find_tools (always loaded, even) is hidden by the built-in.
const mcpConfig = (dir) => {
  const gh = path.join(dir, 'github.json');
  const shadow = path.join(dir, 'shadow.json');
  fs.writeFileSync(gh, JSON.stringify(githubTools));
  fs.writeFileSync(shadow, JSON.stringify([{ name: 'find_tools', description: 'A server tool of that name', inputSchema: schema({}) }]));
  return `version: 1
gateway:
  tool_search:
    enabled: true
    always_loaded: ['echo', 'find_tools']
    max_results: 2
servers:
  shadow:
    command: ${FIXTURE}
    args: ['--tools-json', '${shadow}']
  fx:
    command: ${FIXTURE}
  github:
    command: ${FIXTURE}
    args: ['--tools-json', '${gh}']
`;
};

async function stopClean(d) {
  const r = await d.stop();
  assert.doesNotMatch(d.stderr, /AddressSanitizer|LeakSanitizer|runtime error/);
  assert.equal(r.code, 0, d.stderr.slice(-2000));
}

const toolNames = async (client) => (await client.listTools()).tools.map((x) => x.name);
const activeOf = async (d, dialog) => (await d.get('/v1/dialogs')).json.dialogs.find((x) => x.dialog === dialog)?.activeTools;

test('/mcp 2025-11-25: find_tools activates for the session, list_changed, calls activate, forget_tools, freed with the session', async (t) => {
  const d = await start(mcpConfig(tmpdir()), { waitReady: true });
  t.after(() => stopClean(d));
  await complete(d, q('warm the index')); // find_tools searches the same index
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${d.port}/mcp`), { requestInit: { headers: { 'X-Mcpgw-Dialog': 'ts-2025' } } });
  const client = new Client({ name: 'mcpgw-test', version: '1.0.0' });
  await client.connect(transport);
  let changed = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
  // The SDK opens its GET stream after notifications/initialized: the
  // access log line of that GET is the marker that it is open.
  await d.waitLog(/msg=http method=GET path=\/mcp status=200/);

  assert.deepEqual(await toolNames(client), ['mcp_release', 'find_tools', 'forget_tools', 'echo']);
  const found = await client.callTool({ name: 'find_tools', arguments: { query: 'open a bug in the github repo' } });
  assert.equal(found.isError, false, JSON.stringify(found));
  assert.equal(found.structuredContent.tools[0].name, 'create_issue');
  assert.ok(found.structuredContent.tools.length <= 2, 'max_results');
  assert.equal(found.structuredContent.tools[0].inputSchema.type, 'object');
  assert.match(found.content[0].text, /create_issue/);
  await waitFor(() => changed > 0);
  assert.ok((await toolNames(client)).includes('create_issue'));
  assert.ok((await activeOf(d, 'ts-2025')).includes('create_issue'));

  // A tool that is not listed can be called, and the call activates it.
  const before = changed;
  const sum = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
  assert.match(sum.content[0].text, /5/);
  await waitFor(() => changed > before);
  assert.ok((await toolNames(client)).includes('add'));

  const one = await client.callTool({ name: 'forget_tools', arguments: { names: ['create_issue'] } });
  assert.match(one.content[0].text, /^1 tool removed/);
  let names = await toolNames(client);
  assert.ok(!names.includes('create_issue') && names.includes('add'), names.join());
  await client.callTool({ name: 'forget_tools', arguments: {} });
  assert.deepEqual(await toolNames(client), ['mcp_release', 'find_tools', 'forget_tools', 'echo']);

  const bad = await client.callTool({ name: 'find_tools', arguments: {} });
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /needs \{"query"/);
  // The sentence names find_tools' own argument, not GET /v1/tools' q=.
  const blank = await client.callTool({ name: 'find_tools', arguments: { query: '  ' } });
  assert.equal(blank.isError, true);
  assert.equal(blank.content[0].text, 'the query must hold at least one word');
  const none = await client.callTool({ name: 'find_tools', arguments: { query: 'zzzqqq' } });
  assert.equal(none.isError, false);
  assert.match(none.content[0].text, /No tool matches/);

  // Activations end with the dialog's leases.
  await client.callTool({ name: 'find_tools', arguments: { query: 'pull requests' } });
  assert.ok((await activeOf(d, 'ts-2025')).includes('list_pull_requests'));
  assert.equal((await d.post('/v1/dialogs/ts-2025/release', {})).status, 200);
  assert.equal(await activeOf(d, 'ts-2025'), undefined);
  names = await toolNames(client);
  assert.ok(!names.includes('list_pull_requests'), names.join());
  await client.close();

  // A session's own dialog: its activations end with the session.
  const own = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${d.port}/mcp`));
  const c2 = new Client({ name: 'mcpgw-test', version: '1.0.0' });
  await c2.connect(own);
  await c2.callTool({ name: 'find_tools', arguments: { query: 'search code' } });
  const dialogs = (await d.get('/v1/dialogs')).json.dialogs.filter((x) => x.activeTools?.includes('search_code'));
  assert.equal(dialogs.length, 1);
  assert.match(dialogs[0].dialog, /^mcp-session:[0-9a-f]{16}$/);
  await own.terminateSession();
  await c2.close();
  await waitFor(async () => (await activeOf(d, dialogs[0].dialog)) === undefined);
});

test('/mcp 2026-07-28: activation per dialog, list_changed on the dialog\'s listen stream, none without a dialog', async (t) => {
  const d = await start(mcpConfig(tmpdir()), { waitReady: true });
  t.after(() => stopClean(d));
  await complete(d, q('warm the index')); // find_tools searches the same index
  const c = await sdk2(`http://127.0.0.1:${d.port}/mcp/d/ts-a`, { mode: 'modern' });
  t.after(() => c.close());
  const sub = (await c.call({ op: 'listen', filter: { toolsListChanged: true } })).result;
  assert.deepEqual(sub.honoredFilter, { toolsListChanged: true });
  const list = async () => (await c.call({ op: 'listTools' })).result.tools.map((x) => x.name);
  assert.deepEqual(await list(), ['mcp_release', 'find_tools', 'forget_tools', 'echo']);

  const found = (await c.call({ op: 'callTool', name: 'find_tools', arguments: { query: 'show the open pull requests', limit: 1 } })).result;
  assert.deepEqual(found.structuredContent.tools.map((x) => x.name), ['list_pull_requests']);
  await waitFor(() => c.notifications.some((n) => n.method === 'notifications/tools/list_changed'));
  assert.ok((await list()).includes('list_pull_requests'));
  assert.deepEqual(await activeOf(d, 'ts-a'), ['list_pull_requests']);

  // Another dialog's list is its own; a request that names no dialog activates for its
  // client's default dialog (gateway.mcp_default_dialog: client), not for ts-a.
  const raw = (method, params, headers = {}) => d.request('POST', '/mcp', {
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(params?.name ? { 'mcp-name': params.name } : {}), ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } } } }),
  });
  const bodyOf = (r) => (r.headers['content-type'].startsWith('text/event-stream')
    ? JSON.parse(r.body.split('\n').filter((l) => l.startsWith('data: ')).pop().slice(6)) : r.json);
  const other = bodyOf(await raw('tools/list', {}, { 'x-mcpgw-dialog': 'ts-b' }));
  assert.ok(!other.result.tools.some((x) => x.name === 'list_pull_requests'));
  assert.equal(other.result.cacheScope, 'private');
  assert.equal(other.result.ttlMs, 0);
  const anon = bodyOf(await raw('tools/call', { name: 'find_tools', arguments: { query: 'search code' } }));
  assert.equal(anon.result.structuredContent.tools[0].name, 'search_code');
  const anonList = bodyOf(await raw('tools/list', {}));
  assert.deepEqual(anonList.result.tools.map((x) => x.name), ['mcp_release', 'find_tools', 'forget_tools', 'echo', 'search_code']);
  assert.deepEqual(await activeOf(d, 'mcp-client:raw'), ['search_code']);
  assert.ok(!(await list()).includes('search_code'));

  // A dialog that holds activations but no lease is listed by /v1/dialogs, so
  // releasing it works: its activations end (it was 404 unknown_dialog).
  const rel = await d.post('/v1/dialogs/mcp-client:raw/release', {});
  assert.equal(rel.status, 200, rel.body);
  assert.deepEqual(rel.json.released, []);
  assert.ok(!(await d.get('/v1/dialogs')).json.dialogs.some((x) => x.dialog === 'mcp-client:raw'));
  assert.deepEqual(bodyOf(await raw('tools/list', {})).result.tools.map((x) => x.name), ['mcp_release', 'find_tools', 'forget_tools', 'echo']);
  assert.equal((await d.post('/v1/dialogs/mcp-client:raw/release', {})).status, 404, 'a dialog with nothing is unknown');
});

test('a reload that turns tool search off or on, or changes always_loaded, tells /mcp listeners their tool list changed', async (t) => {
  const dir = tmpdir();
  const d = await start(mcpConfig(dir), { waitReady: true });
  t.after(() => stopClean(d));
  const c = await sdk2(`http://127.0.0.1:${d.port}/mcp/d/ts-r`, { mode: 'modern' });
  t.after(() => c.close());
  await c.call({ op: 'listen', filter: { toolsListChanged: true } });
  const list = async () => (await c.call({ op: 'listTools' })).result.tools.map((x) => x.name);
  const heard = () => c.notifications.filter((n) => n.method === 'notifications/tools/list_changed').length;
  assert.deepEqual(await list(), ['mcp_release', 'find_tools', 'forget_tools', 'echo']);

  const steps = [
    [mcpConfig(dir).replace('enabled: true', 'enabled: false'), (names) => names.includes('create_issue')],
    [mcpConfig(dir), (names) => names.length === 4],
    [mcpConfig(dir).replace("['echo', 'find_tools']", "['echo', 'search_code']"), (names) => names.includes('search_code')],
  ];
  for (const [i, [yaml, check]] of steps.entries()) {
    const before = heard();
    fs.writeFileSync(d.configPath, yaml);
    const r = await d.post('/v1/reload', {});
    assert.equal(r.status, 200, r.body);
    const names = await list();
    assert.ok(check(names), `step ${i}: ${names.join()} ${JSON.stringify(r.json)}`);
    await waitFor(() => heard() > before);
  }
});

// ---- answers made while the index is incomplete ----

// A catalog too big to index in the first search's budget, which
// MCPGW_TOOLSEARCH_QUERY_US=0 makes one tool's worth: so the first answer
// is partial on any machine.
const BIG = 2000;
function bigConfig(dir, gateway = '') {
  const file = path.join(dir, 'big.json');
  const tools = Array.from({ length: BIG }, (_, i) => ({ name: `big_${i}`, description: `Tool number ${i} of the big server`, inputSchema: schema({}) }));
  tools[BIG - 1].description = 'Rotates the zyxwvut keys';
  fs.writeFileSync(file, JSON.stringify(tools));
  return `version: 1
${gateway}servers:
  big:
    command: ${FIXTURE}
    args: ['--tools-file', '${file}']
`;
}
const budget0 = { waitReady: true, env: { MCPGW_TOOLSEARCH_QUERY_US: '0' } };

test('a search answered before the index is complete says what it misses, and the index completes in the background', async (t) => {
  const d = await start(bigConfig(tmpdir()), budget0);
  t.after(() => stopClean(d));

  const first = await d.get(q('zyxwvut'));
  assert.equal(first.status, 200, first.body);
  assert.deepEqual(first.json.tools, []);
  assert.deepEqual(first.json.indexing, { toolsets: 1, tools: BIG }, first.body);
  // A search of toolsets that are indexed misses nothing.
  const admin = await d.get(q('release', '&toolset=mcp_admin'));
  assert.equal(admin.json.indexing, undefined, admin.body);
  assert.equal(names(admin)[0], 'mcp_release');

  // Each search builds one tool's worth here: that fewer searches than
  // there are tools find the last one shows that the loop went on
  // building between them.
  let searches = 0;
  const done = await waitFor(async () => {
    searches++;
    const r = await d.get(q('zyxwvut'));
    return r.json.indexing === undefined && r;
  });
  assert.equal(names(done)[0], `big_${BIG - 1}`);
  assert.ok(searches < BIG / 2, `${searches} searches`);
});

test('find_tools answered before the index is complete says so in its text and structured content', async (t) => {
  const d = await start(bigConfig(tmpdir(), 'gateway:\n  tool_search: {enabled: true}\n'), budget0);
  t.after(() => stopClean(d));
  const c = await sdk2(`http://127.0.0.1:${d.port}/mcp/d/ts-big`, { mode: 'modern' });
  t.after(() => c.close());
  const find = async () => (await c.call({ op: 'callTool', name: 'find_tools', arguments: { query: 'rotate the zyxwvut keys' } })).result;

  const partial = await find();
  assert.equal(partial.isError, false, JSON.stringify(partial));
  assert.deepEqual(partial.structuredContent, { tools: [], indexing: { toolsets: 1, tools: BIG } });
  assert.match(partial.content[0].text, new RegExp(`^No tool matches 'rotate the zyxwvut keys' yet: ${BIG} tools of 1 server`));
  assert.match(partial.content[0].text, /still being indexed/);

  const found = await waitFor(async () => {
    const r = await find();
    return r.structuredContent.indexing === undefined && r;
  });
  assert.equal(found.structuredContent.tools[0].name, `big_${BIG - 1}`);
  assert.doesNotMatch(found.content[0].text, /indexing/);
});

test('what a search could not search yet is counted over the client\'s own toolsets', async (t) => {
  const dir = tmpdir();
  const ALICE = 'alice-token-0123456789abcdef';
  const ADMIN = 'admin-token-0123456789abcdef';
  const auth = (token) => ({ headers: { authorization: `Bearer ${token}` } });
  const gh = path.join(dir, 'github.json');
  fs.writeFileSync(gh, JSON.stringify(githubTools));
  const yaml = `${bigConfig(dir, `gateway:\n  auth_token: ${ADMIN}\nclients:\n  alice:\n    token: ${ALICE}\n    servers: [github]\n`)}  github:
    command: ${FIXTURE}
    args: ['--tools-json', '${gh}']
`;
  const d = await start(yaml, { env: budget0.env });
  t.after(() => stopClean(d));
  await waitFor(async () => (await d.get('/readyz', auth(ADMIN))).status === 200);

  // The first search: the big server is not indexed, but it is not alice's.
  const mine = await d.get(q('zyxwvut'), auth(ALICE));
  assert.equal(mine.status, 200, mine.body);
  assert.deepEqual(mine.json.tools, []);
  assert.ok(!(mine.json.indexing?.tools >= BIG), mine.body);
  assert.ok(mine.json.indexing === undefined || mine.json.indexing.toolsets === 1, mine.body);
});
