// Traces (issue 37): OTLP/HTTP JSON exports checked against the official
// OTLP definitions by a receiver on loopback (lib/otlp_receiver.mjs), the
// span tree of REST and /mcp calls, W3C context in (headers, _meta) and out
// (params._meta of stdio, HTTP and WebSocket upstreams, the HTTP header),
// and a collector that is down or failing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { start, waitFor, fixtures, sleep, slow, tmpdir, sdk2 } from './lib/harness.mjs';
import { oidcServer, browse } from './lib/oidc.mjs';
import { fixtureServer } from './lib/fixture_server.mjs';
import { otlpReceiver, validate } from './lib/otlp_receiver.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';
const TP = `00-${TRACE}-${PARENT}-01`;
const MODERN = '2026-07-28';

const config = (rcv, extra = '') => `version: 1
gateway:
  warm_spares: 0
  tracing:
    endpoint: ${rcv.url}
    service_name: mcpgw-test
servers:
  s:
    command: ${FIXTURE}
    args: ['--meta-tool']
${extra}`;

async function receiver(t, opts) {
  const rcv = await otlpReceiver(opts);
  t.after(() => rcv.close());
  return rcv;
}

// The spans of a trace once `n` of them arrived (exports leave at most a
// second after a span ends).
async function spansOf(rcv, traceId, n) {
  await waitFor(() => rcv.trace(traceId).length >= n, 10000 * slow);
  return rcv.trace(traceId);
}

const one = (spans, pred, what) => {
  const found = spans.filter(pred);
  assert.equal(found.length, 1, `${what}: ${JSON.stringify(spans.map((s) => [s.name, s.kind, s.attrs]))}`);
  return found[0];
};
const named = (spans, name, kind) => one(spans, (s) => s.name === name && s.kind === kind, `${name} (kind ${kind})`);
const textOf = (r) => r.json.contentItems.map((c) => c.text).join('');
// mcpgw's digest of a session id (gw_trace_digest): SHA-256 of a label, its
// NUL and the id, the first 16 bytes in hex.
const sessionDigest = (id) => crypto.createHash('sha256').update('mcpgw mcp.session.id\0').update(id).digest('hex').slice(0, 32);
const traceparentOf = (s) => `00-${s.traceId}-${s.spanId}-01`;

test('the receiver refuses what a collector would: enum names, unknown fields, ids and times of the wrong form', () => {
  const span = { traceId: TRACE, spanId: PARENT, name: 'x', kind: 2, startTimeUnixNano: '1', endTimeUnixNano: '2',
    attributes: [{ key: 'k', value: { intValue: '5' } }], status: { code: 2 } };
  const req = (s) => JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 'm' }, spans: [s] }] }] });
  assert.deepEqual(validate(req(span)).errors, []);
  for (const [bad, why] of [[{ kind: 'SPAN_KIND_SERVER' }, /kind/], [{ color: 'red' }, /color: not a field/],
    [{ traceId: TRACE.toUpperCase() }, /traceId/], [{ spanId: 'abc' }, /spanId/], [{ startTimeUnixNano: '1.5' }, /startTimeUnixNano/],
    [{ status: { code: 'STATUS_CODE_ERROR' } }, /code/], [{ attributes: [{ key: 'k', value: { stringValue: 5 } }] }, /stringValue/]]) {
    const { errors } = validate(req({ ...span, ...bad }));
    assert.ok(errors.some((e) => why.test(e)), `${JSON.stringify(bad)}: ${errors}`);
  }
});

test('REST: the span tree of a leased call, the traceparent header as parent, _meta into the stdio upstream', async (t) => {
  const rcv = await receiver(t);
  const d = await start(config(rcv), { waitReady: true });
  t.after(() => d.stop());

  // The first dialog takes the instance discovery started (a spare).
  const r = await d.post('/v1/tools/meta/call', { dialog: 'a1', arguments: {} },
    { headers: { traceparent: TP, tracestate: 'vendor=1' } });
  assert.equal(r.status, 200, r.body);
  const spans = await spansOf(rcv, TRACE, 3);
  const server = named(spans, 'tools/call meta', 2);
  assert.equal(server.parentSpanId, PARENT);
  assert.equal(server.traceState, 'vendor=1');
  assert.equal(server.service, 'mcpgw-test');
  assert.deepEqual(
    { ...server.attrs, 'mcpgw.instance': undefined },
    { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'meta', 'gen_ai.operation.name': 'execute_tool',
      'network.protocol.name': 'http', 'mcpgw.front': 'rest', 'mcpgw.server': 's', 'mcpgw.dialog': 'a1',
      'mcpgw.instance': undefined });
  assert.equal(server.status.code, undefined, 'an unset status');
  const lease = named(spans, 'mcpgw.lease', 1);
  assert.equal(lease.parentSpanId, server.spanId);
  assert.equal(lease.attrs['mcpgw.lease'], 'spare');
  const client = named(spans, 'tools/call meta', 3);
  assert.equal(client.parentSpanId, server.spanId);
  assert.equal(client.attrs['network.transport'], 'pipe');
  assert.equal(client.attrs['mcp.protocol.version'], '2025-11-25');
  assert.equal(client.attrs['mcpgw.server'], 's');
  // The upstream got the CLIENT span's context, with the caller's tracestate.
  assert.deepEqual(JSON.parse(textOf(r)), { traceparent: traceparentOf(client), tracestate: 'vendor=1' });
  assert.ok(Number(client.startTimeUnixNano) >= Number(server.startTimeUnixNano));
  assert.ok(Number(client.endTimeUnixNano) <= Number(server.endTimeUnixNano));

  // A second dialog needs a new instance: its start and initialize are in the call's trace.
  const trace2 = '1af7651916cd43dd8448eb211c80319c';
  const r2 = await d.post('/v1/tools/echo/call', { dialog: 'a2', arguments: { text: 'x' } },
    { headers: { traceparent: `00-${trace2}-${PARENT}-01` } });
  assert.equal(r2.status, 200, r2.body);
  const spans2 = await spansOf(rcv, trace2, 5);
  const server2 = named(spans2, 'tools/call echo', 2);
  const lease2 = named(spans2, 'mcpgw.lease', 1);
  assert.equal(lease2.attrs['mcpgw.lease'], 'new');
  assert.equal(lease2.parentSpanId, server2.spanId);
  const startSpan = named(spans2, 'mcpgw.instance.start', 1);
  assert.equal(startSpan.parentSpanId, lease2.spanId);
  assert.equal(startSpan.attrs['mcpgw.server'], 's');
  const init = named(spans2, 'initialize', 3);
  assert.equal(init.parentSpanId, startSpan.spanId);
  assert.equal(init.attrs['mcp.method.name'], 'initialize');
  assert.equal(named(spans2, 'tools/call echo', 3).parentSpanId, server2.spanId);

  // A tool error: error.type on the CLIENT span, the SERVER span's status says error.
  const trace3 = '2af7651916cd43dd8448eb211c80319c';
  const r3 = await d.post('/v1/tools/echo/call', { dialog: 'a1', arguments: {} },
    { headers: { traceparent: `00-${trace3}-${PARENT}-01` } });
  assert.equal(r3.json.isError, true, r3.body);
  const spans3 = await spansOf(rcv, trace3, 2);
  const client3 = named(spans3, 'tools/call echo', 3);
  assert.equal(client3.attrs['error.type'], 'tool_error');
  assert.equal(client3.status.code, 2);
  assert.equal(named(spans3, 'tools/call echo', 2).status.code, 2);

  // A timeout.
  const trace4 = '3af7651916cd43dd8448eb211c80319c';
  const r4 = await d.post('/v1/tools/sleep/call', { dialog: 'a1', arguments: { ms: 3000 }, timeout_ms: 200 },
    { headers: { traceparent: `00-${trace4}-${PARENT}-01` } });
  assert.equal(r4.status, 504, r4.body);
  const spans4 = await spansOf(rcv, trace4, 2);
  assert.equal(named(spans4, 'tools/call sleep', 3).attrs['error.type'], 'timeout');
  const server4 = named(spans4, 'tools/call sleep', 2);
  assert.equal(server4.status.code, 2);
  assert.equal(server4.attrs['error.type'], 'timeout');

  // A context that says not sampled is not recorded, and is passed on as it came.
  const unsampled = `00-${'f'.repeat(32)}-${PARENT}-00`;
  const ru = await d.post('/v1/tools/meta/call', { dialog: 'a1', arguments: {} }, { headers: { traceparent: unsampled, tracestate: 'v=2' } });
  assert.equal(ru.status, 200, ru.body);
  assert.deepEqual(JSON.parse(textOf(ru)), { traceparent: unsampled, tracestate: 'v=2' });

  // A malformed traceparent is ignored: a new trace, and the call goes on.
  const before = new Set(rcv.spans.map((s) => s.traceId));
  for (const bad of [`00-${TRACE.toUpperCase()}-${PARENT}-01`, `00-${'0'.repeat(32)}-${PARENT}-01`,
    `ff-${TRACE}-${PARENT}-01`, `00-${TRACE}-${PARENT}-01-extra`, 'garbage']) {
    const rb = await d.post('/v1/tools/echo/call', { dialog: 'a1', arguments: { text: 'y' } }, { headers: { traceparent: bad } });
    assert.equal(rb.status, 200, `${bad}: ${rb.body}`);
  }
  await waitFor(() => rcv.spans.filter((s) => s.kind === 2 && !before.has(s.traceId)).length >= 5);
  for (const s of rcv.spans.filter((x) => x.kind === 2 && !before.has(x.traceId))) {
    assert.equal(s.parentSpanId, undefined, 'a root span');
    assert.notEqual(s.traceId, TRACE);
  }
  assert.equal(rcv.trace('f'.repeat(32)).length, 0, 'nothing of the unsampled trace');
  assert.deepEqual(rcv.errors, []);
  const m = await d.get('/metrics');
  assert.match(m.body, /^mcpgw_trace_spans_dropped_total 0$/m);
  assert.match(m.body, /^mcpgw_trace_spans_exported_total [1-9]\d*$/m);
});

test('/mcp 2025-11-25 (the official SDK client, _meta wins over the header) and 2026-07-28', async (t) => {
  const rcv = await receiver(t);
  const d = await start(config(rcv), { waitReady: true });
  t.after(() => d.stop());
  const headerTrace = '4af7651916cd43dd8448eb211c80319c';
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${d.port}/mcp`),
    { requestInit: { headers: { traceparent: `00-${headerTrace}-${PARENT}-01` } } });
  const client = new Client({ name: 'trace-test', version: '1.0.0' });
  await client.connect(transport);
  t.after(() => client.close());
  const metaTrace = '5af7651916cd43dd8448eb211c80319c';
  const metaParent = 'c7ad6b7169203331';
  const res = await client.callTool({ name: 'meta', arguments: {}, _meta: { traceparent: `00-${metaTrace}-${metaParent}-01` } });
  const spans = await spansOf(rcv, metaTrace, 3);
  const server = named(spans, 'tools/call meta', 2);
  assert.equal(server.parentSpanId, metaParent);
  assert.equal(server.attrs['mcp.protocol.version'], '2025-11-25');
  assert.equal(server.attrs['mcpgw.front'], 'mcp');
  assert.equal(server.attrs['gen_ai.tool.name'], 'meta');
  // An opaque digest of the session id, never the id.
  assert.match(server.attrs['mcp.session.id'], /^[0-9a-f]{32}$/);
  assert.equal(server.attrs['mcp.session.id'], sessionDigest(transport.sessionId));
  assert.ok(!JSON.stringify(rcv.spans).includes(transport.sessionId), 'the session id is never exported');
  const upstream = named(spans, 'tools/call meta', 3);
  assert.equal(upstream.parentSpanId, server.spanId);
  assert.equal(JSON.parse(res.content[0].text).traceparent, traceparentOf(upstream));
  // Requests without _meta take the header's context: tools/list answered by the gateway itself.
  await client.listTools();
  const listed = await spansOf(rcv, headerTrace, 2);
  assert.ok(listed.some((s) => s.name === 'tools/list' && s.kind === 2 && s.parentSpanId === PARENT));
  // initialize, which starts the session, has its SERVER span, with the new session's digest.
  const init = named(listed, 'initialize', 2);
  assert.equal(init.parentSpanId, PARENT);
  assert.equal(init.attrs['mcp.method.name'], 'initialize');
  assert.equal(init.attrs['mcp.session.id'], sessionDigest(transport.sessionId));

  // 2026-07-28: a request's own session; its _meta context wins too.
  const modernTrace = '6af7651916cd43dd8448eb211c80319c';
  const body = {
    jsonrpc: '2.0', id: 7, method: 'tools/call',
    params: { name: 'meta', arguments: {}, _meta: {
      'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, traceparent: `00-${modernTrace}-${PARENT}-01` } },
  };
  const r = await d.request('POST', '/mcp', {
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call', 'mcp-name': 'meta', 'x-mcpgw-dialog': 'modern1' },
    body: JSON.stringify(body),
  });
  assert.equal(r.status, 200, r.body);
  const mspans = await spansOf(rcv, modernTrace, 3);
  const mserver = named(mspans, 'tools/call meta', 2);
  assert.equal(mserver.parentSpanId, PARENT);
  assert.equal(mserver.attrs['mcp.protocol.version'], MODERN);
  assert.equal(mserver.attrs['mcp.session.id'], undefined, 'no session in 2026-07-28');
  assert.equal(named(mspans, 'tools/call meta', 3).parentSpanId, mserver.spanId);
  assert.deepEqual(rcv.errors, []);
});

test('a span larger than libcurl\'s upload buffer (a 100 KB method name) is exported whole, beside small ones', async (t) => {
  const rcv = await receiver(t);
  const d = await start(config(rcv), { waitReady: true });
  t.after(() => d.stop());
  const client = new Client({ name: 'trace-big', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${d.port}/mcp`)));
  t.after(() => client.close());
  const trace = 'faf7651916cd43dd8448eb211c80319c';
  const method = `x/${'é'.repeat(20000)}${'"'.repeat(20000)}${'y'.repeat(40000)}`;
  await assert.rejects(client.request({ method, params: { _meta: { traceparent: `00-${trace}-${PARENT}-01` } } }, EmptyResultSchema));
  await client.listTools({ _meta: { traceparent: `00-${trace}-${PARENT}-01` } });
  const spans = await spansOf(rcv, trace, 2);
  const big = named(spans, method, 2);
  assert.equal(big.attrs['mcp.method.name'], method);
  assert.equal(big.status.code, 2);
  named(spans, 'tools/list', 2);
  assert.deepEqual(rcv.errors, []);
});

test('a call over gateway.max_concurrent: its wait in the queue is a span', async (t) => {
  const rcv = await receiver(t);
  const d = await start(config(rcv).replace('  warm_spares: 0\n', '  warm_spares: 0\n  max_concurrent: 1\n'), { waitReady: true });
  t.after(() => d.stop());
  assert.equal((await d.post('/v1/tools/echo/call', { dialog: 'q1', arguments: { text: 'warm' } })).status, 200);
  const slowCall = d.post('/v1/tools/sleep/call', { dialog: 'q1', arguments: { ms: 1000 * slow } });
  await waitFor(async () => /^mcpgw_tool_calls_in_flight 1$/m.test((await d.get('/metrics')).body));
  const trace = 'eaf7651916cd43dd8448eb211c80319c';
  const r = await d.post('/v1/tools/echo/call', { dialog: 'q1', arguments: { text: 'queued' } }, { headers: { traceparent: `00-${trace}-${PARENT}-01` } });
  assert.equal(r.status, 200, r.body);
  assert.equal((await slowCall).status, 200);
  const spans = await spansOf(rcv, trace, 3);
  const queue = named(spans, 'mcpgw.queue', 1);
  assert.equal(queue.parentSpanId, named(spans, 'tools/call echo', 2).spanId);
  assert.ok(Number(queue.endTimeUnixNano) <= Number(named(spans, 'tools/call echo', 3).startTimeUnixNano));
});

test('an input round: its span from the 409 to the retry, inside the call\'s trace', async (t) => {
  const rcv = await receiver(t);
  const d = await start(`version: 1
gateway:
  tracing: {endpoint: '${rcv.url}'}
servers:
  s:
    command: ${FIXTURE}
    args: ['--ask-on-call', 'elicitation/create']
`, { waitReady: true });
  t.after(() => d.stop());
  const trace = 'baf7651916cd43dd8448eb211c80319c';
  const body = { dialog: 'r1', arguments: { text: 'hello' } };
  const r1 = await d.post('/v1/tools/echo/call', body, { headers: { traceparent: `00-${trace}-${PARENT}-01` } });
  assert.equal(r1.status, 409, r1.body);
  const key = Object.keys(r1.json.inputRequests)[0];
  const asked = r1.json.inputRequests[key].params._meta;
  const r2 = await d.post('/v1/tools/echo/call', { ...body, requestState: r1.json.requestState,
    inputResponses: { [key]: { action: 'accept', content: { name: 'Ann' } } } });
  assert.equal(r2.status, 200, r2.body);
  const spans = await spansOf(rcv, trace, 4);
  const server = named(spans, 'tools/call echo', 2);
  const round = named(spans, 'mcpgw.input_round', 1);
  assert.equal(round.parentSpanId, server.spanId);
  assert.equal(round.attrs['mcpgw.input_requests'], '1');
  assert.equal(round.status.code, undefined);
  // The upstream request the round continues stays in the first request's trace.
  const client = named(spans, 'tools/call echo', 3);
  assert.equal(client.parentSpanId, server.spanId);
  assert.ok(Number(round.endTimeUnixNano) <= Number(client.endTimeUnixNano));
  // The request handed to the caller carries the relay's CLIENT span.
  const relayed = named(spans, 'elicitation/create', 3);
  assert.equal(relayed.parentSpanId, server.spanId);
  assert.equal(asked?.traceparent, traceparentOf(relayed));
  assert.deepEqual(rcv.errors, []);
});

test('a sampling request relayed to a 2025-11-25 /mcp client is a CLIENT span under the call\'s SERVER span', async (t) => {
  const rcv = await receiver(t);
  const d = await start(`version: 1
gateway:
  warm_spares: 0
  tracing: {endpoint: '${rcv.url}'}
servers:
  s:
    command: ${FIXTURE}
    args: ['--ask-on-call', 'sampling/createMessage']
`, { waitReady: true });
  t.after(() => d.stop());
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${d.port}/mcp`));
  const client = new Client({ name: 'trace-relay', version: '1.0.0' }, { capabilities: { sampling: {} } });
  const asked = [];
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    asked.push(req.params._meta);
    return { role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'm' };
  });
  await client.connect(transport);
  t.after(() => client.close());
  const trace = 'caf7651916cd43dd8448eb211c80319c';
  const res = await client.callTool({ name: 'echo', arguments: { text: 'hi' }, _meta: { traceparent: `00-${trace}-${PARENT}-01` } });
  assert.match(JSON.stringify(res.content), /sampled/);
  const spans = await spansOf(rcv, trace, 3);
  const server = named(spans, 'tools/call echo', 2);
  const relayed = named(spans, 'sampling/createMessage', 3);
  assert.equal(relayed.parentSpanId, server.spanId);
  assert.equal(relayed.attrs['mcp.method.name'], 'sampling/createMessage');
  assert.equal(relayed.attrs['mcpgw.server'], 's');
  assert.equal(relayed.status.code, undefined, 'answered');
  assert.ok(Number(relayed.endTimeUnixNano) <= Number(server.endTimeUnixNano));
  // The request the client handled carries the relay's CLIENT span as its parent to be.
  assert.equal(asked.length, 1);
  assert.equal(asked[0]?.traceparent, traceparentOf(relayed));
  assert.equal(asked[0]?.tracestate, undefined);
  assert.deepEqual(rcv.errors, []);
});

test('an elicitation in a 2026-07-28 input round (the official SDK client) carries the relay\'s CLIENT span in _meta', async (t) => {
  const rcv = await receiver(t);
  const d = await start(`version: 1
gateway:
  warm_spares: 0
  tracing: {endpoint: '${rcv.url}'}
servers:
  s:
    command: ${FIXTURE}
    args: ['--ask-on-call', 'elicitation/create']
`, { waitReady: true });
  t.after(() => d.stop());
  const trace = 'daf7651916cd43dd8448eb211c80319c';
  const sdk = await sdk2(`http://127.0.0.1:${d.port}/mcp`, { mode: 'modern', elicit: { name: 'Ann' },
    headers: { 'X-Mcpgw-Dialog': 'e1', traceparent: `00-${trace}-${PARENT}-01`, tracestate: 'v=7' } });
  t.after(() => sdk.close());
  assert.ok(sdk.ready, JSON.stringify(sdk.error));
  const res = await sdk.call({ op: 'callTool', name: 'echo', arguments: { text: 'hi' } });
  assert.match(JSON.stringify(res.result?.content), /Ann/, JSON.stringify(res));
  const spans = await spansOf(rcv, trace, 3);
  const relayed = named(spans, 'elicitation/create', 3);
  const servers = spans.filter((s) => s.kind === 2 && s.name === 'tools/call echo');
  assert.ok(servers.some((s) => s.spanId === relayed.parentSpanId), 'under a SERVER span of the call');
  assert.equal(sdk.elicited.length, 1, JSON.stringify(sdk.elicited));
  const meta = sdk.elicited[0].params._meta;
  assert.equal(meta?.traceparent, traceparentOf(relayed));
  assert.equal(meta?.tracestate, 'v=7', 'the incoming tracestate passed on');
  assert.deepEqual(rcv.errors, []);
});

test('HTTP and WebSocket upstreams get the CLIENT span in _meta, and HTTP in the traceparent header', async (t) => {
  const rcv = await receiver(t);
  const up = await fixtureServer('trace_upstream.mjs');
  t.after(() => up.stop());
  const port = new URL(up.url).port;
  const d = await start(config(rcv, `  web:
    transport: streamable_http
    url: ${up.url}/mcp
    truely-stateless: true
    transform: [{prefix: 'web_'}]
  sock:
    transport: websocket
    url: ws://127.0.0.1:${port}/ws
    truely-stateless: true
    transform: [{prefix: 'ws_'}]
`), { waitReady: true });
  t.after(() => d.stop());
  for (const [tool, transportName, trace] of [['web_meta', 'http', '7af7651916cd43dd8448eb211c80319c'],
    ['ws_meta', 'ws', '8af7651916cd43dd8448eb211c80319c']]) {
    const r = await d.post(`/v1/tools/${tool}/call`, { arguments: {} }, { headers: { traceparent: `00-${trace}-${PARENT}-01` } });
    assert.equal(r.status, 200, r.body);
    const spans = await spansOf(rcv, trace, 2);
    const client = named(spans, 'tools/call meta', 3);
    assert.equal(client.parentSpanId, named(spans, `tools/call ${tool}`, 2).spanId);
    assert.equal(client.attrs['network.transport'], 'tcp');
    assert.equal(client.attrs['server.address'], '127.0.0.1');
    assert.equal(client.attrs['server.port'], port);
    const seen = JSON.parse(textOf(r));
    assert.equal(seen.meta.traceparent, traceparentOf(client), transportName);
    assert.equal(seen.header, transportName === 'http' ? traceparentOf(client) : null);
    // The upstream's session id only as a digest (the HTTP upstream has one).
    assert.equal(client.attrs['mcp.session.id'], transportName === 'http' ? sessionDigest('upstream-session-secret-1') : undefined);
  }
  assert.ok(!JSON.stringify(rcv.spans).includes('upstream-session-secret'), 'an upstream session id is never exported');
  assert.deepEqual(rcv.errors, []);
});

test('a 2026-07-28 upstream over HTTP gets the context in its request\'s _meta beside the envelope, and the header', async (t) => {
  const rcv = await receiver(t);
  const up = await fixtureServer('trace_upstream.mjs', { MODERN: '1' });
  t.after(() => up.stop());
  const d = await start(config(rcv, `  new:
    transport: streamable_http
    url: ${up.url}/mcp
    protocol: modern
    truely-stateless: true
    transform: [{prefix: 'new_'}]
`), { waitReady: true });
  t.after(() => d.stop());
  const trace = 'faf7651916cd43dd8448eb211c80319c';
  const r = await d.post('/v1/tools/new_meta/call', { arguments: {} }, { headers: { traceparent: `00-${trace}-${PARENT}-01`, tracestate: 'k=v' } });
  assert.equal(r.status, 200, r.body);
  const spans = await spansOf(rcv, trace, 2);
  const client = named(spans, 'tools/call meta', 3);
  assert.equal(client.attrs['mcp.protocol.version'], MODERN);
  const seen = JSON.parse(textOf(r));
  assert.equal(seen.meta.traceparent, traceparentOf(client));
  assert.equal(seen.meta.tracestate, 'k=v');
  assert.equal(seen.meta['io.modelcontextprotocol/protocolVersion'], MODERN, 'the envelope is kept');
  assert.equal(seen.header, traceparentOf(client));
  assert.deepEqual(rcv.errors, []);
});

test('an OAuth refresh on a 401 is a span under the CLIENT span the 401 refused', async (t) => {
  const rcv = await receiver(t);
  const as = await oidcServer();
  t.after(() => as.stop());
  const d = await start(`version: 1
gateway:
  warm_spares: 0
  tracing: {endpoint: '${rcv.url}'}
servers:
  idp:
    transport: streamable_http
    url: ${as.url}
`, { env: { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  const idp = async () => (await d.get('/v1/servers')).json.servers.find((x) => x.id === 'idp');
  await waitFor(async () => (await idp()).state === 'needs_authorization', 20000 * slow);
  const page = await browse((await idp()).authorize);
  assert.equal(page.status, 200, page.text);
  await waitFor(async () => (await d.get('/v1/tools')).json.tools.some((x) => x.name === 'whoami'), 20000 * slow);
  const call = (headers) => d.post('/v1/tools/whoami/call', { dialog: 'o1', arguments: {} }, { headers, timeoutMs: 60000 * slow });
  assert.equal((await call()).status, 200);
  as.send('revoke-access');
  await waitFor(() => as.count('revoked') > 0, 30000 * slow);
  const trace = 'daf7651916cd43dd8448eb211c80319c';
  const r = await call({ traceparent: `00-${trace}-${PARENT}-01` });
  assert.equal(r.status, 200, r.body);
  const spans = await spansOf(rcv, trace, 3);
  const client = named(spans, 'tools/call whoami', 3);
  const refresh = named(spans, 'mcpgw.oauth.refresh', 1);
  assert.equal(refresh.parentSpanId, client.spanId);
  assert.equal(refresh.attrs['mcpgw.server'], 'idp');
  assert.equal(refresh.status.code, undefined);
  assert.deepEqual(rcv.errors, []);
});

const problem = async (d) => (await d.get('/v1/problems')).json.problems.find((p) => p.id === 'tracing:export');
const dropped = async (d) => Number(/^mcpgw_trace_spans_dropped_total (\d+)$/m.exec((await d.get('/metrics')).body)[1]);

test('a collector that answers 500 or is down: calls unaffected, drops counted, the Problem comes and goes', async (t) => {
  const rcv = await receiver(t, { mode: 'fail' });
  const d = await start(config(rcv), { waitReady: true });
  t.after(() => d.stop());
  for (let i = 0; i < 3; i++) {
    const r = await d.post('/v1/tools/echo/call', { dialog: 'f1', arguments: { text: `f${i}` } });
    assert.equal(r.status, 200, r.body);
    assert.equal(textOf(r), `f${i}`);
  }
  await waitFor(async () => (await problem(d)) !== undefined, 20000 * slow);
  assert.match((await problem(d)).message, /answered 500/);
  await waitFor(async () => (await dropped(d)) > 0);
  rcv.mode = 'ok';
  await d.post('/v1/tools/echo/call', { dialog: 'f1', arguments: { text: 'ok' } });
  await waitFor(async () => (await problem(d)) === undefined, 20000 * slow);
  assert.ok(rcv.spans.length > 0);

  // Down: connections refused; the batch is kept and sent again once it is back.
  await rcv.down();
  const trace = '9af7651916cd43dd8448eb211c80319c';
  const r = await d.post('/v1/tools/echo/call', { dialog: 'f1', arguments: { text: 'down' } }, { headers: { traceparent: `00-${trace}-${PARENT}-01` } });
  assert.equal(r.status, 200, r.body);
  await waitFor(async () => /could not be exported/.test((await problem(d))?.message ?? ''), 20000 * slow);
  await rcv.up();
  await waitFor(async () => (await problem(d)) === undefined, 40000 * slow);
  await spansOf(rcv, trace, 2);
  assert.deepEqual(rcv.errors, []);
});

test('a slow collector does not slow calls; shutdown flushes what is queued', async (t) => {
  const rcv = await receiver(t, { mode: 'slow', slowMs: 10000 });
  const d = await start(config(rcv), { waitReady: true });
  t.after(() => d.stop());
  await d.post('/v1/tools/echo/call', { dialog: 'w1', arguments: { text: 'warm' } });
  await sleep(1500); // an export is now waiting on the collector
  const t0 = Date.now();
  for (let i = 0; i < 5; i++) assert.equal((await d.post('/v1/tools/echo/call', { dialog: 'w1', arguments: { text: 's' } })).status, 200);
  assert.ok(Date.now() - t0 < 5000 * slow, 'calls do not wait for the collector');
  await waitFor(async () => /timed out|Timeout/i.test((await problem(d))?.message ?? ''), 20000 * slow);
  // Back to answering at once: the spans still queued leave before the daemon exits.
  rcv.mode = 'ok';
  const trace = 'aaf7651916cd43dd8448eb211c80319c';
  await d.post('/v1/tools/echo/call', { dialog: 'w1', arguments: { text: 'last' } }, { headers: { traceparent: `00-${trace}-${PARENT}-01` } });
  const r = await d.stop();
  assert.equal(r.code, 0);
  assert.ok(rcv.trace(trace).length >= 2, `flushed at shutdown: ${rcv.spans.length} spans`);
});

test('OTEL_* variables turn tracing on when the file says nothing; without an endpoint nothing is sent', async (t) => {
  const rcv = await receiver(t);
  const yaml = `version: 1\nservers:\n  s:\n    command: ${FIXTURE}\n`;
  const d = await start(yaml, { waitReady: true,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: rcv.url, OTEL_SERVICE_NAME: 'from-env', OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=se%20cret, x-other = 2' } });
  t.after(() => d.stop());
  await d.post('/v1/tools/echo/call', { dialog: 'e1', arguments: { text: 'e' } });
  await waitFor(() => rcv.spans.length > 0);
  assert.equal(rcv.spans[0].service, 'from-env');
  assert.equal(rcv.headers[0]['x-api-key'], 'se cret');
  assert.equal(rcv.headers[0]['x-other'], '2');

  const off = await start(yaml, { waitReady: true });
  t.after(() => off.stop());
  const before = rcv.requests;
  await off.post('/v1/tools/echo/call', { dialog: 'o1', arguments: { text: 'o' } }, { headers: { traceparent: TP } });
  await sleep(1500);
  assert.equal(rcv.requests, before);
  assert.match((await off.get('/metrics')).body, /^mcpgw_trace_spans_total 0$/m);

  // A reload turns it on, and off again.
  const withTracing = `version: 1\ngateway:\n  tracing: {endpoint: '${rcv.url}'}\nservers:\n  s:\n    command: ${FIXTURE}\n`;
  fs.writeFileSync(off.configPath, withTracing);
  assert.equal((await off.post('/v1/reload', {})).status, 200);
  const onTrace = 'caf7651916cd43dd8448eb211c80319c';
  await off.post('/v1/tools/echo/call', { dialog: 'o1', arguments: { text: 'o' } }, { headers: { traceparent: `00-${onTrace}-${PARENT}-01` } });
  await spansOf(rcv, onTrace, 2);
  fs.writeFileSync(off.configPath, yaml);
  assert.equal((await off.post('/v1/reload', {})).status, 200);
  const after = rcv.requests;
  await off.post('/v1/tools/echo/call', { dialog: 'o1', arguments: { text: 'o' } }, { headers: { traceparent: TP } });
  await sleep(1500);
  assert.equal(rcv.requests, after);
  assert.deepEqual(rcv.errors, []);
});
