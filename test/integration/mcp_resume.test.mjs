// Resumption of a POST's SSE answer on /mcp (MCP 2025-11-25, "Resumability
// and Redelivery"): a client whose connection breaks while its call streams
// progress comes back with GET + Last-Event-ID and gets the rest of that
// stream, response included, and nothing of any other stream. Raw HTTP over
// loopback, then the official SDK client's own reconnection.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { start, waitFor, sleep, fixtures, tmpdir, slow, sseReader } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const ACCEPT = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function stopClean(d) {
  const r = await d.stop();
  assert.doesNotMatch(d.stderr, /AddressSanitizer|LeakSanitizer|runtime error/);
  assert.equal(r.code, 0, d.stderr.slice(-2000));
}

// An HTTP exchange whose answer is read as SSE events while it arrives;
// `events` fills as they come, `ended` resolves when the response ends (or
// the socket is destroyed), `cut()` destroys the socket.
function sse(d, method, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: d.port, method, path: '/mcp', agent: false,
      headers: { ...ACCEPT, ...headers } }, (res) => {
      const s = { status: res.statusCode, headers: res.headers, events: [], text: '', cut: () => req.destroy() };
      s.ended = new Promise((done) => { res.on('end', done); res.on('close', done); });
      res.setEncoding('utf8');
      const read = sseReader((ev) => {
        if (ev.data) ev.msg = JSON.parse(ev.data);
        s.events.push(ev);
      });
      res.on('data', (chunk) => {
        s.text += chunk;
        read(chunk);
      });
      res.on('error', () => {});
      resolve(s);
    });
    req.on('error', (e) => { if (e.code !== 'ECONNRESET') reject(e); });
    if (body !== undefined) req.write(JSON.stringify(body));
    req.end();
  });
}

async function session(d, capabilities = {}) {
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } } };
  const r = await d.request('POST', '/mcp', { body: JSON.stringify(init), headers: ACCEPT });
  assert.equal(r.status, 200, r.body);
  const h = { 'mcp-session-id': r.headers['mcp-session-id'], 'mcp-protocol-version': '2025-11-25' };
  const n = await d.request('POST', '/mcp', { body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers: { ...ACCEPT, ...h } });
  assert.equal(n.status, 202);
  return h;
}

const progressCall = (id, token, steps, ms) => ({ jsonrpc: '2.0', id, method: 'tools/call',
  params: { name: 'progress', arguments: { steps, ms }, _meta: { progressToken: token } } });
const progressIn = (events) => events.filter((e) => e.msg?.method === 'notifications/progress').map((e) => e.msg.params.progress);
const progressOf = (s) => progressIn(s.events);
// The events a client had received when it last saw `id`.
const upTo = (s, id) => s.events.slice(0, s.events.findIndex((e) => e.id === id) + 1);
const resultOf = (s) => s.events.find((e) => e.msg && 'result' in e.msg);
const streamOf = (id) => id.split('.')[0];

test('a broken POST stream resumes with GET + Last-Event-ID: the rest, the response, then the end', async (t) => {
  const log = path.join(tmpdir(), 'methods.log');
  const d = await start(`version: 1\nservers:\n  fx:\n    command: ${FIXTURE}\n    args: ['--log', '${log}']\n`, { waitReady: true });
  t.after(() => stopClean(d));
  const h = await session(d);

  const post = await sse(d, 'POST', h, progressCall(7, 'tok-a', 6, 250 * slow));
  assert.equal(post.status, 200);
  assert.equal(post.headers['content-type'], 'text/event-stream');
  await waitFor(() => progressOf(post).length >= 2, 10000 * slow);
  const [priming] = post.events;
  assert.equal(priming.data, '', 'a priming event opens the stream');
  assert.match(priming.id, /^[1-9]\d*\.0$/);
  assert.equal(priming.retry, '1000', 'the priming event says when to reconnect');
  const seen = post.events.at(-1).id;
  assert.equal(streamOf(seen), streamOf(priming.id), 'every id names the stream');
  post.cut();
  await d.waitLog(/msg="mcp stream connection lost/);
  await sleep(400 * slow); // at least one progress event while nobody listens

  const resumed = await sse(d, 'GET', { ...h, 'last-event-id': seen });
  assert.equal(resumed.status, 200);
  assert.equal(resumed.headers['content-type'], 'text/event-stream');
  await resumed.ended;
  const all = [...progressIn(upTo(post, seen)), ...progressOf(resumed)];
  assert.deepEqual(all, [1, 2, 3, 4, 5, 6], `nothing lost, nothing twice: ${resumed.text}`);
  const result = resultOf(resumed);
  assert.ok(result, resumed.text);
  assert.equal(result.msg.id, 7);
  assert.equal(result.msg.result.content[0].text, 'progress done: 6 steps');
  assert.equal(resumed.events.at(-1), result, 'the response is the last event; then the stream ends');
  for (const e of resumed.events) assert.equal(streamOf(e.id), streamOf(seen));
  const seqs = resumed.events.map((e) => Number(e.id.split('.')[1]));
  assert.ok(seqs.every((q, i) => q > Number(seen.split('.')[1]) && (i === 0 || q > seqs[i - 1])), seqs.join());

  // Delivered: the stream is gone, and the call was never cancelled upstream.
  const again = await d.get('/mcp', { headers: { ...h, accept: 'text/event-stream', 'last-event-id': seen } });
  assert.equal(again.status, 400, again.body);
  assert.match(again.json.error.message, /no stream this session keeps/);
  assert.doesNotMatch(fs.readFileSync(log, 'utf8'), /notifications\/cancelled/);
});

test('resumption replays only the named stream; other ids get nothing of it', async (t) => {
  const d = await start(`version: 1\nservers:\n  fx:\n    command: ${FIXTURE}\n    truely-stateless: true\n`, { waitReady: true });
  t.after(() => stopClean(d));
  const h = await session(d);
  const a = await sse(d, 'POST', h, progressCall('a', 'tok-a', 3, 300 * slow));
  const b = await sse(d, 'POST', h, progressCall('b', 'tok-b', 3, 300 * slow));
  await waitFor(() => progressOf(a).length >= 1 && progressOf(b).length >= 1, 10000 * slow);
  const idA = a.events.at(-1).id;
  const idB = b.events.at(-1).id;
  assert.notEqual(streamOf(idA), streamOf(idB), 'two POSTs, two streams');
  const ended = /msg="mcp stream ended while disconnected/g;
  const before = (d.stderr.match(ended) || []).length;
  a.cut();
  b.cut();
  // Both calls end while their streams are broken.
  await waitFor(() => (d.stderr.match(ended) || []).length >= before + 2, 20000 * slow);

  // The session's GET stream (stream 0) carries none of their messages:
  // what it replays comes first, so once a later message has arrived on it
  // (the list_changed of a reload that adds a server), nothing else may
  // have come before.
  const get = await sse(d, 'GET', { ...h, 'last-event-id': '0.0' });
  assert.equal(get.status, 200);
  fs.writeFileSync(d.configPath, `${fs.readFileSync(d.configPath, 'utf8')}  more:\n    command: ${FIXTURE}\n    transform: [{prefix: more_}]\n`);
  assert.equal((await d.post('/v1/reload', {})).status, 200);
  await waitFor(() => get.events.some((e) => e.msg), 10000 * slow);
  assert.deepEqual(get.events.filter((e) => e.msg).map((e) => e.msg.method), ['notifications/tools/list_changed'], get.text);
  get.cut();

  const ra = await sse(d, 'GET', { ...h, 'last-event-id': idA });
  await ra.ended;
  assert.equal(resultOf(ra)?.msg.id, 'a', ra.text);
  assert.ok(ra.events.every((e) => streamOf(e.id) === streamOf(idA)));
  assert.ok(ra.events.filter((e) => e.msg?.params).every((e) => e.msg.params.progressToken === 'tok-a'), ra.text);
  assert.ok(!ra.text.includes('tok-b') && !ra.text.includes('"id":"b"'));

  const rb = await sse(d, 'GET', { ...h, 'last-event-id': idB });
  await rb.ended;
  assert.equal(resultOf(rb)?.msg.id, 'b', rb.text);
  assert.ok(!rb.text.includes('tok-a'));

  for (const bad of ['99.1', `${streamOf(idA)}.99999`]) {
    const r = await d.get('/mcp', { headers: { ...h, accept: 'text/event-stream', 'last-event-id': bad } });
    assert.equal(r.status, 400, `${bad}: ${r.body}`);
    assert.equal(r.json.error.code, -32000);
  }
  // Another session cannot name this one's streams.
  const other = await session(d);
  const foreign = await d.get('/mcp', { headers: { ...other, accept: 'text/event-stream', 'last-event-id': idA } });
  assert.equal(foreign.status, 400);
});

test('a resumed stream that breaks again resumes again; the newest connection wins', async (t) => {
  const d = await start(`version: 1\nservers:\n  fx:\n    command: ${FIXTURE}\n`, { waitReady: true });
  t.after(() => stopClean(d));
  const h = await session(d);
  const post = await sse(d, 'POST', h, progressCall(3, 't', 8, 200 * slow));
  await waitFor(() => progressOf(post).length >= 1, 10000 * slow);
  post.cut();
  const r1 = await sse(d, 'GET', { ...h, 'last-event-id': post.events.at(-1).id });
  await waitFor(() => progressOf(r1).length >= 2, 10000 * slow);
  // A second GET with an id from r1 takes the stream over; r1 is ended.
  const id1 = r1.events.at(-1).id;
  const r2 = await sse(d, 'GET', { ...h, 'last-event-id': id1 });
  await r1.ended;
  await waitFor(() => r2.events.length >= 1, 10000 * slow); // a replayed or priming event
  const id2 = r2.events.at(-1).id;
  const lost = /msg="mcp stream connection lost/g;
  const before = (d.stderr.match(lost) || []).length;
  r2.cut();
  await waitFor(() => (d.stderr.match(lost) || []).length > before, 10000 * slow);
  const r3 = await sse(d, 'GET', { ...h, 'last-event-id': id2 });
  await r3.ended;
  const got = [...progressOf(post), ...progressIn(upTo(r1, id1)), ...progressIn(upTo(r2, id2)),
    ...progressOf(r3)];
  assert.deepEqual(got, [1, 2, 3, 4, 5, 6, 7, 8], [post.text, r1.text, r2.text, r3.text].join('\n---\n'));
  assert.equal(resultOf(r3)?.msg.id, 3);
});

test('a broken stream keeps its newest 64 events: a resume from before them gets those, response last', async (t) => {
  const d = await start(`version: 1\nservers:\n  fx:\n    command: ${FIXTURE}\n`, { waitReady: true });
  t.after(() => stopClean(d));
  const h = await session(d);
  const post = await sse(d, 'POST', h, progressCall(9, 'many', 100, 5));
  await waitFor(() => post.events.length >= 1, 10000 * slow);
  const priming = post.events[0].id;
  post.cut();
  await d.waitLog(/msg="mcp stream ended while disconnected/, 20000 * slow);
  const r = await sse(d, 'GET', { ...h, 'last-event-id': priming });
  await r.ended;
  assert.equal(r.events.length, 64, r.text.slice(0, 500));
  const progress = progressOf(r);
  assert.deepEqual(progress, Array.from({ length: 63 }, (_, i) => 38 + i), 'the oldest progress went first');
  assert.equal(r.events.at(-1).msg.id, 9);
  await d.waitLog(/msg="mcp stream resumed from before its oldest kept event/);
});

test('a sampling request relayed on a broken stream is replayed on resumption and its answer still counts', async (t) => {
  const d = await start(`version: 1\nservers:\n  fx:\n    command: ${FIXTURE}\n    args: ['--sampling-on-call']\n`, { waitReady: true });
  t.after(() => stopClean(d));
  const h = await session(d, { sampling: {} });
  const post = await sse(d, 'POST', h, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } });
  await waitFor(() => post.events.length >= 1, 10000 * slow);
  const priming = post.events[0];
  assert.equal(priming.data, '');
  post.cut(); // before the client could answer: the upstream keeps waiting
  await d.waitLog(/msg="mcp stream connection lost/);
  const resumed = await sse(d, 'GET', { ...h, 'last-event-id': priming.id });
  await waitFor(() => resumed.events.some((e) => e.msg?.method === 'sampling/createMessage'), 10000 * slow);
  const ask = resumed.events.find((e) => e.msg?.method === 'sampling/createMessage').msg;
  const answer = { jsonrpc: '2.0', id: ask.id, result: { role: 'assistant', content: { type: 'text', text: 'hi after resuming' }, model: 'm' } };
  const r = await d.request('POST', '/mcp', { body: JSON.stringify(answer), headers: { ...ACCEPT, ...h } });
  assert.equal(r.status, 202);
  await resumed.ended;
  const result = resultOf(resumed);
  assert.equal(result?.msg.id, 5, resumed.text);
  assert.match(result.msg.result.content.map((c) => c.text).join('\n'), /sampling answer:.*hi after resuming/s);
});

test('the SDK client resumes a broken call stream by itself and gets every progress and the result', async (t) => {
  const d = await start(`version: 1\nservers:\n  fx:\n    command: ${FIXTURE}\n`, { waitReady: true });
  t.after(() => stopClean(d));
  // A fetch that breaks the first tools/call answer after its second
  // progress event, as a network drop would.
  let broken = false;
  const dropping = async (url, init) => {
    const res = await fetch(url, init);
    if (broken || init?.method !== 'POST' || !String(init.body).includes('"tools/call"')) return res;
    broken = true;
    const reader = res.body.getReader();
    let text = '';
    const body = new ReadableStream({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) { controller.close(); return; }
        text += Buffer.from(value).toString('utf8');
        controller.enqueue(value);
        if (text.includes('"progress":2')) {
          await reader.cancel();
          controller.error(new TypeError('terminated: simulated network drop'));
        }
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${d.port}/mcp`), { fetch: dropping });
  const client = new Client({ name: 'resume-test', version: '1.0.0' });
  await client.connect(transport);
  t.after(() => client.close());
  const seen = [];
  const r = await client.callTool({ name: 'progress', arguments: { steps: 5, ms: 300 * slow } }, undefined,
    { onprogress: (p) => seen.push(p.progress), timeout: 30000 * slow });
  assert.ok(broken, 'the answer was cut');
  assert.equal(r.content[0].text, 'progress done: 5 steps');
  assert.deepEqual(seen, [1, 2, 3, 4, 5]);
  await d.waitLog(/msg="mcp stream resumed" .*replayed=/);
});
