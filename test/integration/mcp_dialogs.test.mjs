// Dialogs on /mcp that no client names (issue 25): a 2026-07-28 request on
// the plain URL uses its client's dialog (gateway.mcp_default_dialog:
// client | shared | none), or the one its _meta["io.mcpgw/dialog"] names;
// a 2025 session's DELETE ends only its own dialog, never one named by URL
// or header (sequential-thinking's history survives a Python-style and an
// SDK-style session); the log says a request's revision; and an enveloped
// request with a 2025-era MCP-Protocol-Version is a header mismatch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { start, run, tmpdir, fixtures, nodeModules, sdk2, waitFor } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const THINKING = path.join(nodeModules, '.bin/mcp-server-sequential-thinking');
const MODERN = '2026-07-28';
const HINT = /msg="mcp requests that name no dialog share this one; give each conversation its own with the URL \/mcp\/d\/<dialog>[^\n]*" dialog=(\S+) server=(\S+)/g;

async function stopClean(d) {
  const r = await d.stop();
  assert.doesNotMatch(d.stderr, /AddressSanitizer|LeakSanitizer|runtime error/);
  assert.equal(r.code, 0, d.stderr.slice(-2000));
}

// One raw 2026-07-28 request; `client` is the envelope's clientInfo.name
// (null: no clientInfo), `meta` adds _meta keys.
function modern(d, method, params = {}, { id = 1, client = 'app-a', meta = {}, headers = {}, urlPath = '/mcp' } = {}) {
  const m = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': {},
    ...(client === null ? {} : { 'io.modelcontextprotocol/clientInfo': { name: client, version: '1' } }),
    ...meta,
  };
  const h = {
    'content-type': 'application/json', accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN, 'mcp-method': method, ...headers,
  };
  if (params.name !== undefined) h['mcp-name'] = params.name;
  return d.request('POST', urlPath, { headers: h, body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: m } }) });
}
const echo = (d, opts) => modern(d, 'tools/call', { name: 'echo', arguments: { text: 'hi' } }, opts);
const instanceOf = (r) => {
  assert.equal(r.status, 200, r.body);
  assert.equal(r.json.result.isError, undefined, r.body);
  return r.json.result._meta['mcpgw/lease'].instance;
};
const dialogsOf = async (d) => Object.fromEntries((await d.get('/v1/dialogs')).json.dialogs
  .map((x) => [x.dialog, x.leases.map((l) => l.instance)]));
const hints = (d) => [...d.stderr.matchAll(HINT)].map((m) => `${m[1]} ${m[2]}`);

const config = (gateway = '') => `version: 1
gateway:
  warm_spares: 0
${gateway}servers:
  fx:
    command: ${FIXTURE}
  fy:
    command: ${FIXTURE}
    transform: [{prefix: 'y_'}]
`;

test('mcp_default_dialog: client — each client app its own dialog, one app\'s requests together, shown, logged once, released', async (t) => {
  const d = await start(config(), { waitReady: true });
  t.after(() => stopClean(d));

  const a1 = instanceOf(await echo(d, { client: 'app-a' }));
  const a2 = instanceOf(await echo(d, { client: 'app-a', id: 2 }));
  assert.equal(a2, a1, 'one app\'s requests share its dialog\'s instance');
  // A name outside the dialog syntax is made of its characters, with a
  // hash of the name as given: "app b" and "app_b" stay apart.
  const b = instanceOf(await echo(d, { client: 'app b' }));
  const b2 = instanceOf(await echo(d, { client: 'app_b' }));
  const none = instanceOf(await echo(d, { client: null }));
  const long = instanceOf(await echo(d, { client: 'x'.repeat(300) }));
  assert.equal(new Set([a1, b, b2, none, long]).size, 5, 'two client apps never share an instance');
  const dialogs = await dialogsOf(d);
  assert.deepEqual(dialogs['mcp-client:app-a'], [a1]);
  assert.deepEqual(dialogs['mcp-client:app_b'], [b2]);
  assert.deepEqual(dialogs['mcp-default'], [none], 'no clientInfo: mcp-default');
  const spaced = Object.keys(dialogs).find((k) => /^mcp-client:app_b-[0-9a-f]{8}$/.test(k));
  assert.deepEqual(dialogs[spaced], [b], JSON.stringify(dialogs));
  const cut = Object.keys(dialogs).find((k) => k.startsWith('mcp-client:xxx'));
  assert.match(cut, /^mcp-client:x{55}-[0-9a-f]{8}$/);

  // The SDK v2 client pinned to 2026-07-28 on the plain URL: its calls reach
  // a leased server, under its own name.
  const sdk = await sdk2(`http://127.0.0.1:${d.port}/mcp`, { mode: 'modern' });
  t.after(() => sdk.close());
  const r = (await sdk.call({ op: 'callTool', name: 'add', arguments: { a: 2, b: 40 } })).result;
  assert.deepEqual(r.structuredContent, { sum: 42 }, JSON.stringify(r));
  assert.deepEqual((await dialogsOf(d))['mcp-client:mcpgw-sdk2-test'], [r._meta['mcpgw/lease'].instance]);

  // The first lease of each logs how to name a dialog; a second server's
  // lease, or later calls, do not log it again.
  instanceOf(await modern(d, 'tools/call', { name: 'y_echo', arguments: { text: 'y' } }, { client: 'app-a', id: 3 }));
  await d.waitLog(/dialog=mcp-client:mcpgw-sdk2-test server=fx/);
  const lines = hints(d);
  assert.deepEqual(lines.filter((l) => l.startsWith('mcp-client:app-a ')), ['mcp-client:app-a fx'], lines.join('\n'));
  assert.deepEqual(lines.filter((l) => l.startsWith('mcp-default ')), ['mcp-default fx']);
  assert.equal(lines.length, 6, lines.join('\n'));

  // Released like any dialog: by route (then the next call leases anew)…
  const rel = await d.post('/v1/dialogs/mcp-client:app-a/release', {});
  assert.equal(rel.status, 200, rel.body);
  assert.deepEqual(rel.json.released.sort(), ['fx', 'fy']);
  assert.equal((await dialogsOf(d))['mcp-client:app-a'], undefined);
  const a3 = instanceOf(await echo(d, { client: 'app-a', id: 4 }));
  assert.notEqual(a3, a1);
  // …and by mcp_release, which the client's model calls.
  const mr = await modern(d, 'tools/call', { name: 'mcp_release', arguments: { serverId: 'fx' } }, { client: 'app-a', id: 5 });
  assert.equal(mr.status, 200, mr.body);
  assert.equal((await dialogsOf(d))['mcp-client:app-a'], undefined);
  // A REST body cannot name a client's dialog (':' is outside the syntax).
  const rest = await d.post('/v1/tools/echo/call', { dialog: 'mcp-client:app-a', arguments: { text: 'x' } });
  assert.equal(rest.status, 400);
  // The route takes the name percent-encoded too, as encodeURIComponent or
  // Python's quote() write it (':' as %3A); it was 400 bad_dialog.
  instanceOf(await echo(d, { client: 'app-a', id: 6 }));
  const enc = await d.post(`/v1/dialogs/${encodeURIComponent('mcp-client:app-a')}/release`, {});
  assert.equal(enc.status, 200, enc.body);
  assert.deepEqual(enc.json.released, ['fx']);
  assert.equal((await d.post('/v1/dialogs/bad%00/release', {})).status, 400);
});

test('client dialogs are released when idle, like any other', async (t) => {
  const d = await start(config('  lease_idle_timeout: 1s\n'), { waitReady: true });
  t.after(() => stopClean(d));
  const a = instanceOf(await echo(d, { client: 'idle-app' }));
  assert.deepEqual((await dialogsOf(d))['mcp-client:idle-app'], [a]);
  await d.waitLog(/msg="lease released" server=fx dialog=mcp-client:idle-app reason="idle past/);
  assert.equal((await dialogsOf(d))['mcp-client:idle-app'], undefined);
});

test('mcp_default_dialog: shared puts every client in mcp-default; none refuses; a reload switches', async (t) => {
  const d = await start(config('  mcp_default_dialog: shared\n'), { waitReady: true });
  t.after(() => stopClean(d));
  const a = instanceOf(await echo(d, { client: 'app-a' }));
  const b = instanceOf(await echo(d, { client: 'app-b' }));
  assert.equal(b, a);
  assert.deepEqual(await dialogsOf(d), { 'mcp-default': [a] });
  // REST may name mcp-default: it is an ordinary dialog.
  const rest = await d.post('/v1/tools/echo/call', { dialog: 'mcp-default', arguments: { text: 'x' } });
  assert.equal(rest.json.lease.instance, a);

  fs.writeFileSync(d.configPath, config('  mcp_default_dialog: none\n'));
  assert.equal((await d.post('/v1/reload', {})).status, 200);
  const r = await echo(d, { client: 'app-a', id: 2 });
  assert.equal(r.status, 200, r.body);
  assert.equal(r.json.result.isError, true);
  assert.match(r.json.result.content[0].text, /leases an instance per dialog and the request names none.*X-Mcpgw-Dialog.*\/mcp\/d\/.*_meta\["io\.mcpgw\/dialog"\]/);
  // Naming one still works.
  assert.equal(instanceOf(await echo(d, { id: 4, urlPath: '/mcp/d/named' })), (await dialogsOf(d)).named[0]);

  fs.writeFileSync(d.configPath, config(''));
  assert.equal((await d.post('/v1/reload', {})).status, 200);
  const c = instanceOf(await echo(d, { client: 'app-c', id: 5 }));
  assert.deepEqual((await dialogsOf(d))['mcp-client:app-c'], [c]);
});

test('the config key: a bad value is an error at its line', async (t) => {
  const dir = tmpdir();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'mcp.yaml');
  fs.writeFileSync(file, 'version: 1\ngateway:\n  mcp_default_dialog: everyone\n');
  const r = await run(['--check-config', '-c', file]);
  assert.notEqual(r.code, 0);
  assert.match(r.stdout + r.stderr, /mcp\.yaml:3:\d+: error: 'gateway\.mcp_default_dialog' must be 'client', 'shared' or 'none'/);
});

test('_meta["io.mcpgw/dialog"] names the dialog, checked like the header', async (t) => {
  const d = await start(config(), { waitReady: true });
  t.after(() => stopClean(d));
  const DIALOG = 'io.mcpgw/dialog';
  const a = instanceOf(await echo(d, { meta: { [DIALOG]: 'conv-1/agent' } }));
  assert.deepEqual(await dialogsOf(d), { 'conv-1/agent': [a] }, 'no client dialog is made');
  const rest = await d.post('/v1/tools/echo/call', { dialog: 'conv-1/agent', arguments: { text: 'x' } });
  assert.equal(rest.json.lease.instance, a, 'shared with REST');
  // The same dialog in the header (or URL) and _meta is fine; another is not.
  assert.equal(instanceOf(await echo(d, { id: 2, meta: { [DIALOG]: 'conv-1/agent' }, headers: { 'x-mcpgw-dialog': 'conv-1/agent' } })), a);
  assert.equal(instanceOf(await echo(d, { id: 3, meta: { [DIALOG]: 'conv-1/agent' }, urlPath: '/mcp/d/conv-1/agent' })), a);
  for (const [opts, why] of [
    [{ meta: { [DIALOG]: 'conv-2' }, headers: { 'x-mcpgw-dialog': 'conv-1' } }, /another dialog/],
    [{ meta: { [DIALOG]: 'conv-2' }, urlPath: '/mcp/d/conv-1' }, /another dialog/],
    [{ meta: { [DIALOG]: '../etc' } }, /must be "root" or "root\/self"/],
    [{ meta: { [DIALOG]: 'mcp-client:app-a' } }, /must be "root"/],
    [{ meta: { [DIALOG]: 42 } }, /must be "root"/],
  ]) {
    const r = await echo(d, { id: 77, ...opts });
    assert.equal(r.status, 400, r.body);
    assert.equal(r.json.id, 77);
    assert.equal(r.json.error.code, -32602);
    assert.match(r.json.error.message, why);
  }
  // The refused requests leased nothing, and no client dialog was made.
  assert.deepEqual(Object.keys(await dialogsOf(d)), ['conv-1/agent']);
});

// Item 2: two REST thoughts on shared1; a session on /mcp/d/shared1 (or
// with X-Mcpgw-Dialog) ends; the next thought continues the same history
// on the same process.
const thought = (n) => ({ thought: `step ${n}`, nextThoughtNeeded: true, thoughtNumber: n, totalThoughts: 9 });
const historyOf = (r) => JSON.parse(r.json.contentItems[0].text).thoughtHistoryLength;
const JSON_ACCEPT = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

test('ending a 2025 session keeps a dialog named by URL or header: Python-style and SDK-style lifecycles', async (t) => {
  const d = await start(`version: 1\nservers:\n  think:\n    command: ${THINKING}\n`, { waitReady: true });
  t.after(() => stopClean(d));
  const rest = (n) => d.post('/v1/tools/sequentialthinking/call', { dialog: 'shared1', arguments: thought(n) });
  const pidOf = async () => (await d.get('/v1/dialogs')).json.dialogs.find((x) => x.dialog === 'shared1')?.leases[0]?.pid;
  assert.equal(historyOf(await rest(1)), 1);
  assert.equal(historyOf(await rest(2)), 2);
  const pid = await pidOf();
  assert.ok(pid > 0);

  // The Python SDK's lifecycle: initialize, notifications/initialized, and
  // DELETE on exit, without a call.
  const init = await d.request('POST', '/mcp/d/shared1', { headers: JSON_ACCEPT, body: JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'mcp', version: '1' } } }) });
  assert.equal(init.status, 200, init.body);
  const h = { ...JSON_ACCEPT, 'mcp-session-id': init.headers['mcp-session-id'], 'mcp-protocol-version': '2025-11-25' };
  assert.equal((await d.request('POST', '/mcp/d/shared1', { headers: h, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' })).status, 202);
  assert.equal((await d.request('DELETE', '/mcp/d/shared1', { headers: h })).status, 204);
  await d.waitLog(/msg="mcp session ended" dialog=shared1 why="deleted by the client"/);
  assert.equal(historyOf(await rest(3)), 3, 'the history outlives the session');
  assert.equal(await pidOf(), pid);

  // The TypeScript SDK (1.32): connect, a call, terminateSession, close.
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${d.port}/mcp/d/shared1`));
  const client = new Client({ name: 'mcpgw-test', version: '1.0.0' });
  t.after(() => client.close());
  await client.connect(transport);
  const r = await client.callTool({ name: 'sequentialthinking', arguments: thought(4) });
  assert.equal(JSON.parse(r.content[0].text).thoughtHistoryLength, 4);
  await transport.terminateSession();
  await client.close();
  await d.waitLog(/msg="mcp session ended" dialog=shared1 why="deleted by the client"[^\n]*\n[^]*msg="mcp session ended" dialog=shared1/);
  assert.equal(historyOf(await rest(5)), 5);
  assert.equal(await pidOf(), pid);

  // The same with the header on the plain URL.
  const viaHeader = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${d.port}/mcp`),
    { requestInit: { headers: { 'X-Mcpgw-Dialog': 'shared1' } } });
  const c2 = new Client({ name: 'mcpgw-test', version: '1.0.0' });
  t.after(() => c2.close());
  await c2.connect(viaHeader);
  await viaHeader.terminateSession();
  await c2.close();
  assert.equal(historyOf(await rest(6)), 6);
  assert.equal(await pidOf(), pid);

  // A session's own dialog still ends with it.
  const own = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${d.port}/mcp`));
  const c3 = new Client({ name: 'mcpgw-test', version: '1.0.0' });
  t.after(() => c3.close());
  await c3.connect(own);
  await c3.callTool({ name: 'sequentialthinking', arguments: thought(1) });
  const session = Object.keys(await dialogsOf(d)).find((k) => k.startsWith('mcp-session:'));
  assert.ok(session);
  await own.terminateSession();
  await c3.close();
  assert.deepEqual(Object.keys(await dialogsOf(d)), ['shared1']);
  // An operator's release still ends the named one.
  assert.equal((await d.post('/v1/dialogs/shared1/release', {})).status, 200);
  assert.equal(historyOf(await rest(7)), 1);
});

test('the log line of a call names its revision', async (t) => {
  const d = await start(config(), { waitReady: true });
  t.after(() => stopClean(d));
  instanceOf(await echo(d, { urlPath: '/mcp/d/rev' }));
  await d.waitLog(/msg="mcp tool call" tool=echo server=fx dialog=rev version=2026-07-28 status=ok/);
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${d.port}/mcp/d/rev25`));
  const client = new Client({ name: 'mcpgw-test', version: '1.0.0' });
  await client.connect(transport);
  t.after(() => client.close());
  await client.callTool({ name: 'echo', arguments: { text: 'x' } });
  await d.waitLog(/msg="mcp tool call" tool=echo server=fx dialog=rev25 version=2025-11-25 status=ok/);
});

// A call that ends because its client went away is what an operator looks
// up most: its line names the revision too, though the request (2026-07-28)
// or the session (2025) is gone by the time the call ends.
test('the log line of a call its client abandoned names its revision', async (t) => {
  const d = await start(config(), { waitReady: true });
  t.after(() => stopClean(d));
  const inFlight = async (dialog) => (await d.get('/v1/dialogs')).json.dialogs
    .find((x) => x.dialog === dialog)?.leases[0]?.inFlight;
  const lineOf = async (dialog) => {
    const re = new RegExp(`msg="mcp tool call" tool=sleep server=fx dialog=${dialog} [^\\n]*`);
    await d.waitLog(re);
    return re.exec(d.stderr)[0];
  };
  const call = { name: 'sleep', arguments: { ms: 60000 } };

  // 2026-07-28: the client hangs up while the call runs upstream.
  const req = http.request({ host: d.host, port: d.port, method: 'POST', path: '/mcp/d/gone26', headers: {
    ...JSON_ACCEPT, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'sleep' } });
  req.on('error', () => {});
  req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...call, _meta: {
    'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} } } }));
  await waitFor(async () => (await inFlight('gone26')) === 1);
  req.destroy();
  assert.match(await lineOf('gone26'), /version=2026-07-28 /);

  // 2025-11-25: the session is deleted while its call runs.
  const init = await d.request('POST', '/mcp/d/gone25', { headers: JSON_ACCEPT, body: JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }) });
  assert.equal(init.status, 200, init.body);
  const h = { ...JSON_ACCEPT, 'mcp-session-id': init.headers['mcp-session-id'], 'mcp-protocol-version': '2025-11-25' };
  const pending = d.request('POST', '/mcp/d/gone25', { headers: h, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: call }) })
    .catch(() => null);
  await waitFor(async () => (await inFlight('gone25')) === 1);
  assert.equal((await d.request('DELETE', '/mcp/d/gone25', { headers: h })).status, 204);
  assert.match(await lineOf('gone25'), /version=2025-11-25 /);
  await pending;
});

test('an enveloped request with a 2025-era MCP-Protocol-Version is a header mismatch (-32020)', async (t) => {
  const d = await start(config(), { waitReady: true });
  t.after(() => stopClean(d));
  // docs/api.md: MCP-Protocol-Version must equal the envelope's version.
  for (const v of ['2025-11-25', '2025-06-18']) {
    const r = await echo(d, { id: 'env', headers: { 'mcp-protocol-version': v } });
    assert.equal(r.status, 400, r.body);
    assert.equal(r.json.id, 'env');
    assert.equal(r.json.error.code, -32020, r.body);
  }
  // An initialize is still a 2025 session's, whatever its _meta holds.
  const init = await d.request('POST', '/mcp', { headers: { ...JSON_ACCEPT, 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' },
      _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } } }) });
  assert.equal(init.status, 200, init.body);
  assert.ok(init.headers['mcp-session-id']);
});
