// MCP Apps behind the gateway (docs/api.md, "MCP Apps"): a tool's `_meta`
// (its `ui.resourceUri`), the `ui://` resource list and the resource read
// reach the client as the server sent them — with resource_namespace, the
// `ui://` URIs become `ui://<server id>/…` everywhere at once — and the
// extension is declared both ways. The server is the extension's own
// example, @modelcontextprotocol/server-basic-vanillajs, over stdio and over
// streamable HTTP; wire JSON is compared as the bytes of its serialisation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { start, waitFor, fixtures, nodeModules, root, tmpdir, slow, track } from './lib/harness.mjs';

const VANILLA = path.join(nodeModules, '@modelcontextprotocol/server-basic-vanillajs/dist/index.js');
const APPS_HTTP = path.join(root, 'test/fixtures/apps_http.mjs');
const FIXTURE = path.join(fixtures, 'mcp_fixture');
const UI = 'ui://get-time/mcp-app.html';
const INIT = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'apps-test', version: '1' } };

function freePort() {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// The server over HTTP on loopback; stopped by pid.
async function appsHttp() {
  const port = await freePort();
  const child = track(spawn(process.execPath, [APPS_HTTP], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] }));
  child.stderr.on('data', () => {});
  await waitFor(() => new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => { s.destroy(); resolve(true); });
    s.on('error', () => resolve(false));
  }), 20000 * slow, 100);
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => { try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ } } };
}

// The JSON-RPC message answering `id` in a JSON or SSE body.
function answerIn(text, id) {
  const bodies = text.trimStart().startsWith('{') ? [text]
    : text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5));
  return bodies.map((b) => JSON.parse(b)).find((m) => m.id === id);
}

// A raw MCP session over streamable HTTP (the gateway's /mcp or a server).
async function httpSession(url) {
  let sid = null;
  let next = 1;
  const send = async (method, params) => {
    const id = next++;
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (sid) Object.assign(headers, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' });
    const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) });
    sid = sid || r.headers.get('mcp-session-id');
    const m = answerIn(await r.text(), id);
    assert.ok(m && m.result, `${method}: ${JSON.stringify(m)}`);
    return m.result;
  };
  const init = await send('initialize', INIT);
  if (sid) {
    await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  }
  return { init, send, get sid() { return sid; } };
}

// The server over stdio, talked to directly; closed by pid.
async function stdioSession() {
  const child = track(spawn(process.execPath, [VANILLA, '--stdio'], { stdio: ['pipe', 'pipe', 'ignore'] }));
  const waiting = new Map();
  readline.createInterface({ input: child.stdout }).on('line', (l) => {
    const m = JSON.parse(l);
    waiting.get(m.id)?.(m);
  });
  let next = 1;
  const send = (method, params) => new Promise((resolve, reject) => {
    const id = next++;
    const t = setTimeout(() => reject(new Error(`${method}: no answer`)), 20000 * slow);
    waiting.set(id, (m) => { clearTimeout(t); m.result ? resolve(m.result) : reject(new Error(JSON.stringify(m))); });
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  });
  await send('initialize', INIT);
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  return { send, close: () => { try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ } } };
}

// What a session sees of the app: the tool, the UI resource and its read.
async function view(s, toolName, uri) {
  const tool = (await s.send('tools/list', {})).tools.find((t) => t.name === toolName);
  const resource = (await s.send('resources/list', {})).resources.find((r) => r.uri === uri);
  const read = await s.send('resources/read', { uri });
  return { tool, resource, read };
}

// `direct` as a client of the gateway should see it: identical, but for the
// URIs of a namespaced server (`ui://` → `ui://<id>/`) and the tool's name.
function expected(direct, id, ns) {
  const uri = (u) => (ns ? u.replace(/^ui:\/\//, `ui://${id}/`) : u);
  const e = structuredClone(direct);
  e.tool._meta.ui.resourceUri = uri(e.tool._meta.ui.resourceUri);
  e.tool._meta['ui/resourceUri'] = uri(e.tool._meta['ui/resourceUri']);
  e.resource.uri = uri(e.resource.uri);
  for (const c of e.read.contents) c.uri = uri(c.uri);
  return e;
}

function assertSame(got, want, what) {
  assert.equal(JSON.stringify(got.tool._meta), JSON.stringify(want.tool._meta), `${what}: tool _meta`);
  assert.equal(JSON.stringify(got.resource), JSON.stringify(want.resource), `${what}: resources/list entry`);
  assert.equal(JSON.stringify(got.read), JSON.stringify(want.read), `${what}: resources/read result`);
}

// One daemon, the example twice: `plain` keeps its URIs, `spaced` has
// resource_namespace (and a tool prefix, so both can be served at once).
function config(plain, spaced) {
  const block = (id, how, ns) => `  ${id}:
${how}
    resource_namespace: ${ns}
${ns ? '    transform: [{prefix: \'ns_\'}]\n' : ''}`;
  return `version: 1\nservers:\n${block(plain.id, plain.how, false)}${block(spaced.id, spaced.how, true)}`;
}

const stdioBlock = `    command: ${process.execPath}\n    args: ${JSON.stringify([VANILLA, '--stdio'])}`;
const httpBlock = (url) => `    transport: streamable_http\n    url: ${url}`;

async function checkThrough(d, direct, plainId, spacedId) {
  const states = (await d.get('/v1/servers')).json.servers.map((s) => [s.id, s.state]);
  assert.deepEqual(states, [[plainId, 'ready'], [spacedId, 'ready']]);
  const g = await httpSession(`http://127.0.0.1:${d.port}/mcp`);
  const spacedUri = `ui://${spacedId}/get-time/mcp-app.html`;
  assertSame(await view(g, 'get-time', UI), expected(direct, plainId, false), `${plainId} through /mcp`);
  assertSame(await view(g, 'ns_get-time', spacedUri), expected(direct, spacedId, true), `${spacedId} through /mcp`);

  // REST shows the same `_meta`, and the namespaced resource with its original URI.
  const rest = (await d.get('/v1/tools')).json.tools;
  assert.equal(JSON.stringify(rest.find((t) => t.name === 'get-time')._meta), JSON.stringify(direct.tool._meta));
  assert.equal(JSON.stringify(rest.find((t) => t.name === 'ns_get-time')._meta),
    JSON.stringify(expected(direct, spacedId, true).tool._meta));
  const res = (await d.get('/v1/resources')).json.resources;
  const spaced = res.find((r) => r.uri === spacedUri);
  assert.ok(spaced && spaced.server === spacedId && spaced.originalUri === UI, JSON.stringify(res));

  // The tool whose UI was read runs on the same dialog's instance.
  const called = await g.send('tools/call', { name: 'get-time', arguments: {} });
  assert.match(called.content[0].text, /^\d{4}-\d\d-\d\dT/);
  return g;
}

test('MCP Apps over stdio: tool _meta, ui:// resources and reads pass through, namespaced or not', async (t) => {
  const direct = await stdioSession();
  t.after(() => direct.close());
  const want = await view(direct, 'get-time', UI);
  assert.equal(want.tool._meta.ui.resourceUri, UI, 'the example links its tool to its UI');

  const d = await start(config({ id: 'va', how: stdioBlock }, { id: 'vb', how: stdioBlock }), { waitReady: true });
  t.after(() => d.stop());
  const g = await checkThrough(d, want, 'va', 'vb');

  // Reading the UI and calling the tool used one lease of the session's
  // dialog: the app's calls reach the instance whose UI it shows.
  const dialogs = (await d.get('/v1/dialogs')).json.dialogs;
  const mine = dialogs.filter((x) => x.leases.some((l) => l.server === 'va'));
  assert.equal(mine.length, 1, JSON.stringify(dialogs));
  assert.equal(mine[0].leases.filter((l) => l.server === 'va').length, 1, JSON.stringify(mine));
  const instance = mine[0].leases.find((l) => l.server === 'va').instance;
  await g.send('resources/read', { uri: UI });
  await g.send('tools/call', { name: 'get-time', arguments: {} });
  const after = (await d.get('/v1/dialogs')).json.dialogs.find((x) => x.dialog === mine[0].dialog);
  assert.equal(after.leases.find((l) => l.server === 'va').instance, instance);
});

test('MCP Apps over streamable HTTP: the same, namespaced or not', async (t) => {
  const up = await appsHttp();
  t.after(() => up.stop());
  const direct = await httpSession(up.url);
  const want = await view(direct, 'get-time', UI);
  const d = await start(config({ id: 'ha', how: httpBlock(up.url) }, { id: 'hb', how: httpBlock(up.url) }), { waitReady: true });
  t.after(() => d.stop());
  await checkThrough(d, want, 'ha', 'hb');
});

test('extensions: the gateway declares MCP Apps upstream and its servers\' extensions on /mcp', async (t) => {
  const params = path.join(tmpdir(), 'init.json');
  const ext = { 'io.example/widgets': { version: 2 } };
  const d = await start(`version: 1
servers:
  fx:
    truely-stateless: true
    command: ${FIXTURE}
    args: ${JSON.stringify(['--extensions', JSON.stringify(ext), '--init-params', params])}
`, { waitReady: true });
  t.after(() => d.stop());
  const sent = JSON.parse(fs.readFileSync(params, 'utf8'));
  assert.deepEqual(sent.capabilities.extensions['io.modelcontextprotocol/ui'], { mimeTypes: ['text/html;profile=mcp-app'] });
  const g = await httpSession(`http://127.0.0.1:${d.port}/mcp`);
  assert.deepEqual(g.init.capabilities.extensions, ext);
});

test('FastMCP-style _meta tags pass through; a _meta over 64 KiB is dropped with a warning', async (t) => {
  const schema = { type: 'object', properties: {} };
  const tools = [
    { name: 'tagged', description: 'has tags', inputSchema: schema, _meta: { _fastmcp: { tags: ['alpha', 'beta'] }, 'x-note': 'kept' } },
    { name: 'bulky', description: 'too much meta', inputSchema: schema, _meta: { blob: 'x'.repeat(70 * 1024) } },
    { name: 'bare', description: 'no meta', inputSchema: schema },
  ];
  const file = path.join(tmpdir(), 'tools.json');
  fs.writeFileSync(file, JSON.stringify(tools));
  const d = await start(`version: 1
servers:
  fm:
    truely-stateless: true
    command: ${FIXTURE}
    args: ['--tools-json', '${file}']
`, { waitReady: true });
  t.after(() => d.stop());
  const rest = (await d.get('/v1/tools')).json.tools;
  assert.equal(JSON.stringify(rest.find((x) => x.name === 'tagged')._meta), JSON.stringify(tools[0]._meta));
  const g = await httpSession(`http://127.0.0.1:${d.port}/mcp`);
  const listed = (await g.send('tools/list', {})).tools;
  assert.equal(JSON.stringify(listed.find((x) => x.name === 'tagged')._meta), JSON.stringify(tools[0]._meta));
  const bulky = listed.find((x) => x.name === 'bulky');
  assert.ok(bulky && !('_meta' in bulky), 'the tool stays, without its _meta');
  assert.ok(!('_meta' in listed.find((x) => x.name === 'bare')));
  const warned = (await d.get('/v1/problems')).json.problems.find((p) => p.server === 'fm' && p.tool === 'bulky');
  assert.ok(warned && /_meta/.test(warned.message) && /64 KiB/.test(warned.message), JSON.stringify(warned));
});

test('resource_namespace: tool results link to the URIs the resource list serves, and they read back', async (t) => {
  const d = await start(`version: 1
servers:
  fx:
    truely-stateless: true
    resource_namespace: true
    command: ${FIXTURE}
    args: ['--resources', 'ui']
  gx:
    truely-stateless: true
    command: ${FIXTURE}
    args: ['--resources', 'gx']
    transform: [{prefix: 'g_'}]
`, { waitReady: true });
  t.after(() => d.stop());
  const g = await httpSession(`http://127.0.0.1:${d.port}/mcp`);
  const listed = (await g.send('resources/list', {})).resources.map((r) => r.uri);
  assert.ok(listed.includes('ui://fx/a') && listed.includes('gx://a'), JSON.stringify(listed));

  const linked = await g.send('tools/call', { name: 'link', arguments: { uri: 'ui://a' } });
  assert.deepEqual(linked.content.map((c) => c.uri ?? c.resource.uri), ['ui://fx/a', 'ui://fx/a']);
  const read = await g.send('resources/read', { uri: linked.content[0].uri });
  assert.deepEqual(read.contents.map((c) => [c.uri, c.text]), [['ui://fx/a', 'contents of ui://a']]);

  // A server without resource_namespace: its links stay as it sent them.
  const plain = await g.send('tools/call', { name: 'g_link', arguments: { uri: 'gx://a' } });
  assert.deepEqual(plain.content.map((c) => c.uri ?? c.resource.uri), ['gx://a', 'gx://a']);
});
