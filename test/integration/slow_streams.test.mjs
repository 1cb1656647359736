// Streams whose client stops reading while a server floods them with
// notifications/resources/updated (docs/hardening.md): a 2026-07-28
// subscriptions/listen stream and a 2025 session's GET stream, both never
// read, under 100,000 updates of the URI they hold. Each is ended as too
// slow, from inside the loop that delivers the update to every holder of
// the URI (that loop once went on through the freed listener: ASan
// use-after-free, SIGSEGV in the optimised build); the other holders keep
// hearing updates and the daemon stops cleanly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { start, waitFor, fixtures, track, slow } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const MODERN = '2026-07-28';
const URI = 'fx://a';
const OTHER = 'fx://b'; // held by the reader only
const FLOOD = 100000;

async function stopClean(d) {
  const r = await d.stop();
  assert.doesNotMatch(d.stderr, /AddressSanitizer|LeakSanitizer|runtime error/);
  assert.equal(r.code, 0, d.stderr.slice(-2000));
}

// One raw HTTP request on its own socket; `until(text)` says when enough of
// the answer came. Resolves the socket (still open) and what it read.
function rawStream(d, head, body, until) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: d.host, port: d.port });
    let text = '';
    const onData = (b) => {
      text += b.toString('utf8');
      if (until(text)) {
        sock.off('data', onData);
        resolve({ sock, text });
      }
    };
    sock.on('data', onData);
    sock.on('error', reject);
    sock.on('connect', () => sock.write(`${head}\r\n${body ? `content-length: ${Buffer.byteLength(body)}\r\n` : ''}\r\n${body ?? ''}`));
  });
}

// A subscriptions/listen stream holding `uris`: the socket once the
// acknowledgement came.
async function listen(d, uris, id) {
  const body = JSON.stringify({
    jsonrpc: '2.0', id, method: 'subscriptions/listen',
    params: {
      notifications: { resourceSubscriptions: uris },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'slow', version: '1' },
      },
    },
  });
  const head = ['POST /mcp HTTP/1.1', `host: 127.0.0.1:${d.port}`, 'content-type: application/json',
    'accept: application/json, text/event-stream', `mcp-protocol-version: ${MODERN}`,
    'mcp-method: subscriptions/listen'].join('\r\n');
  const { sock, text } = await rawStream(d, head, body, (t) => t.includes('notifications/subscriptions/acknowledged'));
  assert.match(text, /^HTTP\/1\.1 200 /);
  assert.ok(text.includes(`"resourceSubscriptions":${JSON.stringify(uris)}`), text);
  return sock;
}

// A 2025-11-25 session subscribed to `uri`, its GET stream open: the
// socket once the stream began.
async function session(d, uri) {
  const post = (msg, headers = {}) => d.post('/mcp', msg, {
    headers: { accept: 'application/json, text/event-stream', ...headers },
  });
  const init = await post({
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'slow25', version: '1' } },
  });
  const sid = init.headers['mcp-session-id'];
  assert.ok(sid, init.body);
  const h = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
  assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, h)).status, 202);
  const sub = await post({ jsonrpc: '2.0', id: 2, method: 'resources/subscribe', params: { uri } }, h);
  assert.match(sub.body, /"result":\{\}/, sub.body);
  const head = ['GET /mcp HTTP/1.1', `host: 127.0.0.1:${d.port}`, 'accept: text/event-stream',
    `mcp-session-id: ${sid}`, 'mcp-protocol-version: 2025-11-25'].join('\r\n');
  const { sock, text } = await rawStream(d, head, null, (t) => t.includes('\r\n\r\n'));
  assert.match(text, /^HTTP\/1\.1 200 /);
  return sock;
}

test('listen and GET streams that stop reading under 100,000 resources/updated are ended; the other holders still hear', async (t) => {
  // The call answers after the whole flood, which takes minutes under valgrind.
  const d = await start(`version: 1
servers:
  fx:
    truely-stateless: true
    request_timeout: ${120 * slow}s
    command: ${FIXTURE}
    args: ['--resources', 'fx', '--subscribe']
`, { waitReady: true });
  t.after(() => stopClean(d));
  await waitFor(async () => (await d.get('/v1/resources')).json.resources.some((r) => r.uri === URI));

  // Two holders that never read again, and one that reads, in between
  // them in the URI's list of holders.
  const slowListen = await listen(d, [URI], 'slow');
  const reader = await listen(d, [URI, OTHER], 'reader');
  const slowGet = await session(d, URI);
  t.after(() => { slowListen.destroy(); reader.destroy(); slowGet.destroy(); });
  slowListen.pause();
  slowGet.pause();
  // The reader keeps only a count and the tail: it must keep up with the
  // flood, or it is rightly ended too.
  let got = 0, tail = '';
  reader.on('data', (b) => { got += b.length; tail = (tail + b.toString('utf8')).slice(-2048); });

  // The fixture writes every update before its answer: once the call is
  // answered, the gateway has delivered (or dropped) all of them.
  const touch = async (uri, times) => {
    const r = await d.post('/v1/tools/touch/call', { arguments: { uri, times } }, { timeoutMs: 120000 * slow });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.json.contentItems[0].text, `touched ${uri}: notified`);
  };
  await touch(URI, FLOOD);
  await d.waitLog(/msg="mcp listen stream too slow; ended"/);
  await d.waitLog(/msg="mcp stream client too slow; stream ended"/);

  // The reader kept up and still hears: an update of the other URI comes
  // after the whole flood.
  await touch(OTHER, 1);
  await waitFor(() => tail.includes(`"uri":"${OTHER}"`), 60000);
  const events = tail.split('\n\n').filter((e) => e.includes('data: '));
  const last = JSON.parse(events.at(-1).slice(events.at(-1).indexOf('data: ') + 6));
  assert.equal(last.method, 'notifications/resources/updated');
  assert.equal(last.params._meta['io.modelcontextprotocol/subscriptionId'], 'reader');
  assert.ok(got > FLOOD * 100, `the reader heard the flood (${got} bytes)`);
});

// A listen stream whose reader falls 1 MiB behind is ended (docs/api.md):
// behind is everything written and not read, the bytes in the gateway's
// socket buffer included, which the kernel grows to megabytes on its own.
// The reader's receive buffer is the smallest the kernel allows (counted on
// top: the gateway cannot see it); once the stream is ended it reads what
// was still on its way.
test('a listen stream 1 MiB behind is ended with no more than 1 MiB and one message on its way', async (t) => {
  const d = await start(`version: 1
servers:
  fx:
    truely-stateless: true
    command: ${FIXTURE}
    args: ['--resources', 'fx', '--subscribe']
`, { waitReady: true });
  t.after(() => stopClean(d));
  await waitFor(async () => (await d.get('/v1/resources')).json.resources.some((r) => r.uri === URI));
  const body = JSON.stringify({
    jsonrpc: '2.0', id: 'behind', method: 'subscriptions/listen',
    params: {
      notifications: { resourceSubscriptions: [URI] },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'behind', version: '1' },
      },
    },
  });
  const request = ['POST /mcp HTTP/1.1', `host: 127.0.0.1:${d.port}`, 'content-type: application/json',
    'accept: application/json, text/event-stream', `mcp-protocol-version: ${MODERN}`,
    'mcp-method: subscriptions/listen', `content-length: ${Buffer.byteLength(body)}`, '', body].join('\r\n');
  const file = path.join(d.dir, 'listen.http');
  fs.writeFileSync(file, request);
  const reader = track(spawn(path.join(fixtures, 'slow_reader'), [String(d.port), file, 'notifications/subscriptions/acknowledged'],
    { stdio: ['pipe', 'pipe', 'inherit'] }));
  t.after(() => { try { process.kill(reader.pid, 'SIGKILL'); } catch { /* gone */ } });
  let out = '';
  reader.stdout.on('data', (b) => { out += b; });
  const marked = await waitFor(() => /marked \d+ rcvbuf (\d+)/.exec(out));

  const r = await d.post('/v1/tools/touch/call', { arguments: { uri: URI, times: FLOOD } }, { timeoutMs: 120000 * slow });
  assert.equal(r.status, 200, r.body);
  await d.waitLog(/msg="mcp listen stream too slow; ended"/);
  reader.stdin.write('go\n');
  const eof = await waitFor(() => /eof (\d+)/.exec(out), 30000);
  const behind = Number(eof[1]);
  // The gateway sees what its side holds; the reader's own receive buffer
  // (a few KiB at the kernel's minimum) holds more.
  const message = 400; // one notifications/resources/updated event, with its chunk framing
  const allowed = (1 << 20) + message + Number(marked[1]);
  assert.ok(behind <= allowed, `${behind} bytes were on their way when the stream ended (at most ${allowed})`);
});
