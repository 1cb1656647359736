// Input rounds against the concurrency limits (docs/api.md, Call policy and
// Input rounds): a call whose round is parked, waiting for its caller's
// retry, holds no max_concurrent slot, so parked rounds with long timeouts
// do not starve other servers and dialogs; and the round caps refuse the
// round beyond them at once (429 limit_reached naming the rounds), where it
// used to wait in the queue for a slot until its timeout. The daemon runs
// with a low gateway.max_concurrent so that a few parked rounds fill it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { start, fixtures, tmpdir, waitFor } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
// Long enough that a call left in the queue behind parked rounds fails the
// test with 429 instead of hanging it; far longer than any answer here.
const LONG_MS = 30000;
const PER_DIALOG = 64; // GW_ROUNDS_PER_DIALOG

async function stopClean(d) {
  const r = await d.stop();
  assert.doesNotMatch(d.stderr, /AddressSanitizer|LeakSanitizer|runtime error/);
  assert.equal(r.code, 0, d.stderr.slice(-2000));
}

const config = (maxConcurrent, log) => `version: 1
gateway:
  max_concurrent: ${maxConcurrent}
servers:
  fx:
    command: ${FIXTURE}
    args: ['--ask-on-call', 'elicitation/create', '--log', '${log}']
  plain:
    truely-stateless: true
    command: ${FIXTURE}
    transform: [{prefix: 'plain_'}]
`;

const accept = { action: 'accept', content: { name: 'Ann' } };

// A call of fx's echo that parks a round: its 409.
async function park(d, dialog, text) {
  const r = await d.post('/v1/tools/echo/call', { dialog, arguments: { text }, timeout_ms: LONG_MS },
    { timeoutMs: 2 * LONG_MS });
  assert.equal(r.status, 409, r.body);
  assert.equal(r.json.error.code, 'input_required');
  return { dialog, text, r };
}

async function resume(d, { dialog, text, r }) {
  const key = Object.keys(r.json.inputRequests)[0];
  const done = await d.post('/v1/tools/echo/call', {
    dialog, arguments: { text }, requestState: r.json.requestState, inputResponses: { [key]: accept },
  });
  assert.equal(done.status, 200, done.body);
  assert.match(done.json.contentItems.map((c) => c.text).join('\n'), new RegExp(`^${text}$`, 'm'));
}

const inFlight = async (d) => Number(/^mcpgw_tool_calls_in_flight (\d+)$/m.exec((await d.get('/metrics')).body)[1]);

test('parked rounds hold no concurrency slot: other servers and dialogs go on, and the retries take theirs back', async (t) => {
  const log = path.join(tmpdir(), 'fx.log');
  const d = await start(config(2, log), { waitReady: true });
  t.after(() => stopClean(d));

  // Three rounds parked with long timeouts, over max_concurrent: 2, in
  // two dialogs.
  const parked = [await park(d, 'p', 'one'), await park(d, 'p', 'two'), await park(d, 'q', 'three')];
  assert.equal(await inFlight(d), 0, 'a parked call is not in flight');

  // Another server's call and another call of the parked dialog run at once.
  const other = await d.post('/v1/tools/plain_echo/call', { arguments: { text: 'free' }, timeout_ms: LONG_MS });
  assert.equal(other.status, 200, other.body);
  assert.equal(other.json.contentItems[0].text, 'free');
  const same = await d.post('/v1/tools/plain_add/call', { dialog: 'p', arguments: { a: 1, b: 2 }, timeout_ms: LONG_MS });
  assert.equal(same.status, 200, same.body);

  // Each retry takes its slot back (three at once, over the limit, is
  // allowed: they were admitted) and ends 200.
  await Promise.all(parked.map((p) => resume(d, p)));
  assert.equal(await inFlight(d), 0);
  assert.equal(fs.readFileSync(log, 'utf8').split('\n').filter((m) => m === 'tools/call').length, 3);
});

test('the round beyond a dialog\'s 64 is refused at once with 429 naming the rounds; others still park', async (t) => {
  const log = path.join(tmpdir(), 'fx.log');
  const d = await start(config(4, log), { waitReady: true });
  t.after(() => stopClean(d));

  const parked = [];
  for (let i = 0; i < PER_DIALOG; i++) parked.push(await park(d, 'busy', `n${i}`));

  // The 65th: its server's request is refused and the call cancelled
  // upstream; the caller hears at once (not after its timeout).
  const over = await d.post('/v1/tools/echo/call', { dialog: 'busy', arguments: { text: 'over' }, timeout_ms: LONG_MS });
  assert.equal(over.status, 429, over.body);
  assert.equal(over.json.error.code, 'limit_reached');
  assert.match(over.json.error.message, /input rounds/);
  assert.equal(over.headers['retry-after'], '1');
  await waitFor(() => fs.readFileSync(log, 'utf8').includes('notifications/cancelled'));
  // The log line and the answer travel on different pipes: wait for it.
  await waitFor(() => /msg="tool call" .*tool=echo .*status=rounds_full/.test(d.stderr));

  // Another dialog still parks a round, the dialog's other calls run, and
  // a parked round of the full dialog still completes.
  const calm = await park(d, 'calm', 'calm');
  const plain = await d.post('/v1/tools/plain_echo/call', { dialog: 'busy', arguments: { text: 'x' }, timeout_ms: LONG_MS });
  assert.equal(plain.status, 200, plain.body);
  await resume(d, calm);
  await resume(d, parked[0]);
  // Its place is free again: the dialog parks one more.
  await park(d, 'busy', 'again');
});

// A raw 2026-07-28 tools/call of fx's echo on /mcp/d/<dialog>, able to
// answer elicitations; `extra` joins its params (a retry's).
async function modernEcho(d, dialog, text, extra = {}) {
  const body = {
    jsonrpc: '2.0', id: 1, method: 'tools/call',
    params: {
      name: 'echo', arguments: { text }, ...extra,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
        'io.modelcontextprotocol/clientInfo': { name: 'limits', version: '1' },
      },
    },
  };
  const r = await d.request('POST', `/mcp/d/${dialog}`, {
    body: JSON.stringify(body),
    headers: {
      'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo',
    },
    timeoutMs: 2 * LONG_MS,
  });
  assert.equal(r.status, 200, r.body);
  return r.json.result;
}

test('on /mcp (2026-07-28) too, parked rounds leave the slots to other calls', async (t) => {
  const log = path.join(tmpdir(), 'fx.log');
  const d = await start(config(2, log), { waitReady: true });
  t.after(() => stopClean(d));

  const parked = [];
  for (const text of ['m1', 'm2', 'm3']) {
    const r = await modernEcho(d, 'm', text);
    assert.equal(r.resultType, 'input_required', JSON.stringify(r));
    parked.push({ text, r });
  }
  const other = await d.post('/v1/tools/plain_echo/call', { arguments: { text: 'free' }, timeout_ms: LONG_MS });
  assert.equal(other.status, 200, other.body);
  for (const { text, r } of parked) {
    const [key] = Object.keys(r.inputRequests);
    const done = await modernEcho(d, 'm', text, { inputResponses: { [key]: accept }, requestState: r.requestState });
    assert.equal(done.resultType, 'complete', JSON.stringify(done));
    assert.match(done.content.map((c) => c.text).join('\n'), new RegExp(`^${text}$`, 'm'));
  }
});
