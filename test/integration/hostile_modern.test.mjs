// Hostile and unlucky input on the 2026-07-28 paths, each a reproduction of
// a defect: an upstream's input_required reaching another caller than the
// one whose request it answers (shared instance, two callers or two
// dialogs), an invalid resultType passed on, the upstream's serverInfo in
// /mcp results, a modern HTTP upstream given a session and a tools/call run
// twice after its 404, and a 2025-era server request whose id looks like
// the gateway's own. The upstream is test/fixtures/modern_hostile.mjs (and
// the C fixture for the 2025-era server).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { start, waitFor, fixtures, root } from './lib/harness.mjs';

const HOSTILE = path.join(root, 'test/fixtures/modern_hostile.mjs');
const FIXTURE = path.join(fixtures, 'mcp_fixture');
const MODERN = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};

async function stopClean(d) {
  const r = await d.stop();
  assert.doesNotMatch(d.stderr, /AddressSanitizer|LeakSanitizer|runtime error/);
  assert.equal(r.code, 0, d.stderr.slice(-2000));
}

const shared = `version: 1
servers:
  h:
    command: ${process.execPath}
    args: [${JSON.stringify(HOSTILE)}]
    protocol: modern
    truely-stateless: true
`;

// A REST call; `dialog` optional, `timeout_ms` bounds a call that would
// otherwise wait for an answer that never comes.
const rest = (d, tool, args, { dialog, extra = {} } = {}) =>
  d.post(`/v1/tools/${tool}/call`, { arguments: args, timeout_ms: 8000, ...extra },
    { headers: dialog ? { 'X-Mcpgw-Dialog': dialog } : {}, timeoutMs: 20000 });
const textOf = (r) => r.json.contentItems.map((c) => c.text).join('\n');
const answer = (requestState, value) => ({ requestState, inputResponses: { q: { action: 'accept', content: { answer: value } } } });

function modern(d, method, params, id = 1) {
  const headers = {
    'content-type': 'application/json', accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN, 'mcp-method': method,
  };
  if (params?.name !== undefined) headers['mcp-name'] = params.name;
  return d.request('POST', '/mcp', { headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } }) });
}

test('an upstream input_required reaches the call it answers, not the most recent one (shared instance)', async (t) => {
  const d = await start(shared, { waitReady: true });
  t.after(() => stopClean(d));
  // X asks; the server answers input_required only once Y's call is in
  // flight too, so the most recent call is Y's when X's round arrives.
  const x = rest(d, 'ask', { who: 'X', after: 'hold' });
  await waitFor(() => d.stderr.includes('got ask X'));
  const y = rest(d, 'hold', {});
  const rx = await x;
  assert.equal(rx.status, 409, rx.body);
  assert.equal(rx.json.inputRequests.q.params.message, 'question for X', rx.body);
  const done = await rest(d, 'ask', { who: 'X', after: 'hold' }, { extra: answer(rx.json.requestState, 'forty-two') });
  assert.equal(done.status, 200, done.body);
  assert.equal(textOf(done), 'X answered {"answer":"forty-two"}');
  const ry = await y;
  assert.equal(ry.status, 200, ry.body);
  assert.equal(textOf(ry), 'held');
});

test('rounds of two dialogs on one shared instance: each parks its own, neither is refused', async (t) => {
  const d = await start(shared, { waitReady: true });
  t.after(() => stopClean(d));
  const a = await rest(d, 'ask', { who: 'A' }, { dialog: 'da' });
  assert.equal(a.status, 409, a.body);
  assert.equal(a.json.inputRequests.q.params.message, 'question for A');
  // A's round is parked (its upstream call open) while B's comes.
  const b = await rest(d, 'ask', { who: 'B' }, { dialog: 'db' });
  assert.equal(b.status, 409, b.body);
  assert.equal(b.json.inputRequests.q.params.message, 'question for B');
  const rb = await rest(d, 'ask', { who: 'B' }, { dialog: 'db', extra: answer(b.json.requestState, 'bee') });
  assert.equal(rb.status, 200, rb.body);
  assert.equal(textOf(rb), 'B answered {"answer":"bee"}');
  const ra = await rest(d, 'ask', { who: 'A' }, { dialog: 'da', extra: answer(a.json.requestState, 'ay') });
  assert.equal(ra.status, 200, ra.body);
  assert.equal(textOf(ra), 'A answered {"answer":"ay"}');
  const m = (await d.get('/metrics')).body;
  assert.match(m, /^mcpgw_server_requests_total\{outcome="refused"\} 0$/m, m);
});

test('an invalid resultType is a malformed result (REST 502, /mcp -32603)', async (t) => {
  const d = await start(shared, { waitReady: true });
  t.after(() => stopClean(d));
  for (const type of ['bogus', 42, '', null, 'input_required ']) {
    const r = await rest(d, 'typed', { type });
    assert.equal(r.status, 502, `${JSON.stringify(type)}: ${r.body}`);
    assert.equal(r.json.error.code, 'upstream_error', r.body);
    assert.match(r.json.error.message, /resultType/, r.body);
  }
  for (const args of [{}, { type: 'complete' }]) {
    const r = await rest(d, 'typed', args);
    assert.equal(r.status, 200, r.body);
    assert.equal(textOf(r), 'typed');
  }
  const bad = await modern(d, 'tools/call', { name: 'typed', arguments: { type: 'bogus' } });
  assert.equal(bad.json.error?.code, -32603, bad.body);
  assert.equal(bad.json.result, undefined, bad.body);
});

test('/mcp results name mcpgw in _meta serverInfo, never the upstream that answered', async (t) => {
  const d = await start(shared, { waitReady: true });
  t.after(() => stopClean(d));
  const ok = await modern(d, 'tools/call', { name: 'typed', arguments: {} });
  assert.equal(ok.status, 200, ok.body);
  assert.equal(ok.json.result.resultType, 'complete', ok.body);
  assert.equal(ok.json.result._meta['io.modelcontextprotocol/serverInfo'].name, 'mcpgw', ok.body);
  assert.doesNotMatch(ok.body, /hostile-upstream/);
  const list = await modern(d, 'tools/list', {});
  assert.equal(list.json.result._meta['io.modelcontextprotocol/serverInfo'].name, 'mcpgw', list.body);

  // A 2025-11-25 session's results do not carry the upstream's either.
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const rpc = (id, method, params, more = {}) => d.request('POST', '/mcp',
    { headers: { ...headers, ...more }, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) });
  const init = await rpc(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
  assert.equal(init.status, 200, init.body);
  const session = { 'mcp-session-id': init.headers['mcp-session-id'], 'mcp-protocol-version': '2025-11-25' };
  const legacy = await rpc(2, 'tools/call', { name: 'typed', arguments: {} }, session);
  assert.equal(legacy.status, 200, legacy.body);
  assert.match(legacy.body, /"typed"/);
  assert.doesNotMatch(legacy.body, /hostile-upstream/);
  await d.request('DELETE', '/mcp', { headers: session });
});

async function hostileHttp(args = []) {
  const child = spawn(process.execPath, [HOSTILE, 'http', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.stderr.on('data', () => {});
  let out = '';
  const url = await new Promise((resolve, reject) => {
    child.stdout.on('data', (b) => {
      out += b;
      const m = /listening (http:\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', () => reject(new Error(`modern_hostile.mjs exited: ${out}`)));
  });
  return { url, stop: async () => { child.kill('SIGTERM'); await exited; } };
}

test('a 2026-07-28 HTTP upstream gets no session, and a tools/call runs once', async (t) => {
  const up = await hostileHttp();
  t.after(() => up.stop());
  const d = await start(`version: 1
servers:
  h:
    transport: streamable_http
    url: ${up.url}
    protocol: modern
`, { waitReady: true });
  t.after(() => stopClean(d));
  // Every answer carries Mcp-Session-Id; a request that sends it back gets
  // 404 after the tool ran.
  const r = await rest(d, 'count', {}, { dialog: 'hd' });
  assert.equal(r.status, 200, r.body);
  assert.equal(textOf(r), 'count=1');
  const stats = await rest(d, 'stats', {}, { dialog: 'hd' });
  assert.deepEqual(JSON.parse(textOf(stats)), { count: 1, sessionHeaders: 0 });
});

test('a 2025-era HTTP upstream whose 404 answers the tools/call itself: the call is not sent again', async (t) => {
  const up = await hostileHttp(['--legacy']);
  t.after(() => up.stop());
  const d = await start(`version: 1
servers:
  h:
    transport: streamable_http
    url: ${up.url}
    protocol: legacy
`, { waitReady: true });
  t.after(() => stopClean(d));
  // The session is the server's own (initialize); the 404 to `count` comes
  // after it ran and names the request's id: not a refused session.
  const r = await rest(d, 'count', {}, { dialog: 'hd' });
  assert.equal(r.status, 502, r.body);
  assert.equal(r.json.lease?.restarted, undefined, r.body);
  const stats = await rest(d, 'stats', {}, { dialog: 'hd' });
  assert.equal(stats.status, 200, stats.body);
  assert.equal(JSON.parse(textOf(stats)).count, 1, stats.body);
});

test('a 2025-era server request whose id looks like the gateway\'s own is relayed and its answer reaches the server', async (t) => {
  const d = await start(`version: 1
servers:
  fx:
    command: ${FIXTURE}
    args: ['--ask-on-call', 'elicitation/create', '--ask-id-prefix', 'mcpgw-input-1-']
`, { waitReady: true });
  t.after(() => stopClean(d));
  const body = { dialog: 'd1', arguments: { text: 'hello' }, timeout_ms: 8000 };
  const r1 = await d.post('/v1/tools/echo/call', body);
  assert.equal(r1.status, 409, r1.body);
  const [key] = Object.keys(r1.json.inputRequests);
  const r2 = await d.post('/v1/tools/echo/call', { ...body, requestState: r1.json.requestState,
    inputResponses: { [key]: { action: 'accept', content: { name: 'Ida' } } } }, { timeoutMs: 20000 });
  assert.equal(r2.status, 200, r2.body);
  assert.match(textOf(r2), /answer elicitation\/create: \{"action":"accept","content":\{"name":"Ida"\}\}/);
});
