// Input rounds on REST: a legacy upstream that asks its caller for input
// (elicitation, sampling, roots) during POST /v1/tools/{name}/call makes the
// call answer 409 input_required; the caller's retry with inputResponses and
// the requestState continues the SAME upstream call, to 200 or another
// round. The upstream is the C fixture in --ask-on-call mode, which puts
// every answer it got into the tool's result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { start, waitFor, fixtures, nodeModules } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const EVERYTHING = path.join(nodeModules, '.bin/mcp-server-everything');

async function stopClean(d) {
  const r = await d.stop();
  assert.doesNotMatch(d.stderr, /AddressSanitizer|LeakSanitizer|runtime error/);
  assert.equal(r.code, 0, d.stderr.slice(-2000));
}

const config = (rounds, extra = '') =>
  `version: 1\nservers:\n  fx:\n    command: ${FIXTURE}\n    args: ['--ask-on-call', '${rounds}'${extra}]\n`;

const accept = (name) => ({ action: 'accept', content: { name } });
const sampled = { role: 'assistant', content: { type: 'text', text: 'hi from REST' }, model: 'rest-model' };

const call = (d, body, headers) => d.post('/v1/tools/echo/call', body, { headers });
const textOf = (r) => r.json.contentItems.map((c) => c.text).join('\n');

test('one elicitation: 409, then the retry reaches the same upstream call and ends 200', async (t) => {
  const d = await start(config('elicitation/create'), { waitReady: true });
  t.after(() => stopClean(d));
  const body = { dialog: 'd1', arguments: { text: 'hello' } };

  const r1 = await call(d, body);
  assert.equal(r1.status, 409, r1.body);
  assert.equal(r1.json.error.code, 'input_required');
  assert.match(r1.json.error.message, /inputResponses/);
  const keys = Object.keys(r1.json.inputRequests);
  assert.equal(keys.length, 1);
  const asked = r1.json.inputRequests[keys[0]];
  assert.equal(asked.method, 'elicitation/create');
  assert.equal(asked.params.message, 'Your name?');
  assert.match(r1.json.requestState, /^[A-Za-z0-9_-]{76}$/);

  const r2 = await call(d, { ...body, inputResponses: { [keys[0]]: accept('Ann') }, requestState: r1.json.requestState });
  assert.equal(r2.status, 200, r2.body);
  const text = textOf(r2);
  assert.match(text, /^hello$/m, 'the tool ran with the first request\'s arguments');
  assert.match(text, /answer elicitation\/create: \{"action":"accept","content":\{"name":"Ann"\}\}/, text);
  // One upstream call: the lease the call made is the one it ends on.
  assert.equal(r2.json.lease.serverId, 'fx');

  const m = (await d.get('/metrics')).body;
  assert.match(m, /^mcpgw_input_rounds_total\{outcome="asked"\} 1$/m, m);
  assert.match(m, /^mcpgw_input_rounds_total\{outcome="resumed"\} 1$/m);
  assert.match(m, /^mcpgw_tool_calls_total\{front="rest",server="",tool="echo",status="input_required"\} 1$/m);
});

test('two requests in one round, a missing response asked again, then a second round', async (t) => {
  const d = await start(config('elicitation/create,sampling/createMessage;roots/list'), { waitReady: true });
  t.after(() => stopClean(d));
  const body = { dialog: 'd2', arguments: { text: 'two' } };

  const r1 = await call(d, body);
  assert.equal(r1.status, 409, r1.body);
  const reqs = r1.json.inputRequests;
  assert.equal(Object.keys(reqs).length, 2, JSON.stringify(reqs));
  const byMethod = Object.fromEntries(Object.entries(reqs).map(([k, v]) => [v.method, k]));
  assert.ok(byMethod['elicitation/create'] && byMethod['sampling/createMessage'], JSON.stringify(reqs));

  // Only the elicitation answered (plus a key never asked, ignored): the
  // sampling request is asked again, alone, under a new state.
  const r2 = await call(d, { ...body, requestState: r1.json.requestState,
    inputResponses: { [byMethod['elicitation/create']]: accept('Bo'), unknown_key: { action: 'accept' } } });
  assert.equal(r2.status, 409, r2.body);
  assert.deepEqual(Object.keys(r2.json.inputRequests), [byMethod['sampling/createMessage']]);
  assert.notEqual(r2.json.requestState, r1.json.requestState);

  // The first state served its one retry.
  const replay = await call(d, { ...body, requestState: r1.json.requestState, inputResponses: {} });
  assert.equal(replay.status, 400, replay.body);
  assert.equal(replay.json.error.code, 'bad_request_state');

  // Second round: the upstream asks for roots once the first is answered.
  const r3 = await call(d, { ...body, requestState: r2.json.requestState,
    inputResponses: { [byMethod['sampling/createMessage']]: sampled } });
  assert.equal(r3.status, 409, r3.body);
  const [rootsKey] = Object.keys(r3.json.inputRequests);
  assert.equal(r3.json.inputRequests[rootsKey].method, 'roots/list');

  const r4 = await call(d, { ...body, requestState: r3.json.requestState,
    inputResponses: { [rootsKey]: { roots: [{ uri: 'file:///work', name: 'work' }] } } });
  assert.equal(r4.status, 200, r4.body);
  const text = textOf(r4);
  assert.match(text, /answer elicitation\/create: \{"action":"accept","content":\{"name":"Bo"\}\}/, text);
  assert.match(text, /answer sampling\/createMessage: .*hi from REST/, text);
  assert.match(text, /answer roots\/list: \{"roots":\[\{"uri":"file:\/\/\/work","name":"work"\}\]\}/, text);
});

test('a tampered state, another dialog, other arguments and bad responses are refused; the round stays open', async (t) => {
  const d = await start(config('elicitation/create'), { waitReady: true });
  t.after(() => stopClean(d));
  const body = { dialog: 'owner', arguments: { text: 'mine' } };
  const r1 = await call(d, body);
  assert.equal(r1.status, 409, r1.body);
  const [key] = Object.keys(r1.json.inputRequests);
  const state = r1.json.requestState;
  const answer = { [key]: accept('Eve') };

  const flip = state.slice(0, 10) + (state[10] === 'A' ? 'B' : 'A') + state.slice(11);
  for (const [label, b, headers] of [
    ['a flipped character', { ...body, requestState: flip, inputResponses: answer }],
    ['a suffix', { ...body, requestState: `${state}-TAMPERED`, inputResponses: answer }],
    ['another dialog', { ...body, dialog: 'thief', requestState: state, inputResponses: answer }],
    ['another dialog by header', { arguments: body.arguments, requestState: state, inputResponses: answer }, { 'x-mcpgw-dialog': 'thief' }],
    ['other arguments', { ...body, arguments: { text: 'other' }, requestState: state, inputResponses: answer }],
  ]) {
    const r = await call(d, b, headers);
    assert.equal(r.status, 400, `${label}: ${r.body}`);
    assert.equal(r.json.error.code, 'bad_request_state', label);
    assert.match(r.json.error.message, /not one this gateway handed out/, label);
  }
  const wrongShape = await call(d, { ...body, requestState: state, inputResponses: { [key]: 12345 } });
  assert.equal(wrongShape.status, 400, wrongShape.body);
  assert.equal(wrongShape.json.error.code, 'bad_input_responses');
  const nullResponses = await call(d, { ...body, requestState: state, inputResponses: null });
  assert.equal(nullResponses.status, 400, nullResponses.body);
  const notString = await call(d, { ...body, requestState: 42 });
  assert.equal(notString.status, 400, notString.body);
  assert.equal(notString.json.error.code, 'bad_request_state');

  // None of that touched the round: the owner's retry still works.
  const ok = await call(d, { ...body, requestState: state, inputResponses: answer });
  assert.equal(ok.status, 200, ok.body);
  assert.match(textOf(ok), /"name":"Eve"/);
  const m = (await d.get('/metrics')).body;
  assert.match(m, /^mcpgw_input_rounds_total\{outcome="rejected"\} 7$/m, m);
});

test('an expired round is cancelled upstream and its state refused', async (t) => {
  const dir = fs.mkdtempSync('/tmp/mcpgw-rounds-');
  const log = path.join(dir, 'upstream.log');
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const d = await start(config('elicitation/create', `, '--log', '${log}'`), {
    waitReady: true, env: { MCPGW_INPUT_ROUND_EXPIRY_MS: '300' } });
  t.after(() => stopClean(d));
  const body = { dialog: 'late', arguments: { text: 'slow' } };

  const r1 = await call(d, body);
  assert.equal(r1.status, 409, r1.body);
  await d.waitLog(/msg="input round expired" dialog=late/);
  await waitFor(() => fs.readFileSync(log, 'utf8').includes('notifications/cancelled'));
  const [key] = Object.keys(r1.json.inputRequests);
  const r2 = await call(d, { ...body, requestState: r1.json.requestState, inputResponses: { [key]: accept('Zed') } });
  assert.equal(r2.status, 400, r2.body);
  assert.equal(r2.json.error.code, 'bad_request_state');
  assert.match(r2.json.error.message, /expired/);
  const m = (await d.get('/metrics')).body;
  assert.match(m, /^mcpgw_input_rounds_total\{outcome="expired"\} 1$/m, m);

  // The dialog's instance is not stuck: a new call gets its own round.
  const again = await call(d, body);
  assert.equal(again.status, 409, again.body);
});

test('a retry without requestState is a new call; a parked round ends when the daemon stops', async (t) => {
  const d = await start(config('elicitation/create'), { waitReady: true });
  t.after(() => d.stop());
  const body = { dialog: 'd5', arguments: { text: 'x' } };
  const r1 = await call(d, { ...body, inputResponses: { r1: accept('ignored') } });
  assert.equal(r1.status, 409, r1.body);
  const r2 = await call(d, { ...body, inputResponses: { r1: accept('ignored') } });
  assert.equal(r2.status, 409, r2.body);
  assert.notEqual(r2.json.requestState, r1.json.requestState);
  // Two rounds parked: SIGTERM cancels them instead of draining for the
  // whole shutdown_grace, and nothing leaks.
  await stopClean(d);
});

test('a call that times out while parked gets its 504 on the retry', async (t) => {
  const d = await start(config('elicitation/create'), { waitReady: true });
  t.after(() => stopClean(d));
  const body = { dialog: 'd6', arguments: { text: 'x' }, timeout_ms: 300 };
  const r1 = await call(d, body);
  assert.equal(r1.status, 409, r1.body);
  // The call's own timeout passes while its round waits for the caller.
  await new Promise((r) => setTimeout(r, 600));
  const [key] = Object.keys(r1.json.inputRequests);
  const r2 = await call(d, { ...body, requestState: r1.json.requestState, inputResponses: { [key]: accept('late') } });
  assert.equal(r2.status, 504, r2.body);
  assert.equal(r2.json.error.code, 'call_timeout');
});

test('server-everything (legacy, stdio) asks for elicitation during a REST call', async (t) => {
  const d = await start(`version: 1\nservers:\n  ev:\n    command: ${EVERYTHING}\n    args: [stdio]\n`, { waitReady: true });
  t.after(() => stopClean(d));
  const tools = (await d.get('/v1/tools')).json.tools.map((x) => x.name);
  assert.ok(tools.includes('trigger-elicitation-request'), 'listed because the gateway declares elicitation');
  const body = { dialog: 'ev1', arguments: {} };
  const r1 = await d.post('/v1/tools/trigger-elicitation-request/call', body);
  assert.equal(r1.status, 409, r1.body);
  const [key] = Object.keys(r1.json.inputRequests);
  assert.equal(r1.json.inputRequests[key].method, 'elicitation/create');
  assert.ok(r1.json.inputRequests[key].params.requestedSchema.properties.name);
  const r2 = await d.post('/v1/tools/trigger-elicitation-request/call', { ...body, requestState: r1.json.requestState,
    inputResponses: { [key]: { action: 'accept', content: { name: 'Ann Example', check: true } } } });
  assert.equal(r2.status, 200, r2.body);
  assert.match(textOf(r2), /Ann Example/, textOf(r2));
});
