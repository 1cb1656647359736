// Upstreams of either revision (`protocol: auto | legacy | modern`): a server
// that serves 2026-07-28 only (test/conformance/backend.mjs --modern-only, on
// the SDK v2, as Go and C# servers are) behind mcpgw over stdio and over
// streamable HTTP, called through REST, a 2025-11-25 session and a 2026-07-28
// client; its input_required results reach each of them in their own form.
// And the probe of `auto` against 2025-era servers: one that refuses
// server/discover, one that exits on it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { start, fixtures, sdk2, tmpdir, waitFor, httpBackend, backendJs, node22 } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const MODERN = '2026-07-28';
const ASK = 'test_input_required_result_elicitation';
const SIMPLE = 'This is a simple text response for testing.';
const PROMPT = 'test_input_required_result_prompt';
const WATCHED = 'test://watched-resource';

async function stopClean(d) {
  const r = await d.stop();
  assert.equal(r.code, 0, d.stderr.slice(-3000));
}

const url = (d, p) => `http://127.0.0.1:${d.port}${p}`;
const textOf = (r) => r.content.map((c) => c.text).join('\n');
const rest = (d, tool, dialog, body = { arguments: {} }) =>
  d.post(`/v1/tools/${tool}/call`, body, { headers: { 'X-Mcpgw-Dialog': dialog } });
// The REST retry of an ASK round, answering its user_name as Ada.
const answerAda = (d, dialog, requestState) => rest(d, ASK, dialog, {
  arguments: {},
  inputResponses: { user_name: { action: 'accept', content: { name: 'Ada' } } },
  requestState,
});
const serverOf = async (d, id) => (await d.get('/v1/servers')).json.servers.find((s) => s.id === id);

// What every front sees of the same 2026-07-28-only server.
async function callFromEveryFront(d) {
  // REST: a plain call, then an input round in REST's form (409, then the
  // retry with inputResponses under the server's own key).
  const simple = await rest(d, 'test_simple_text', 'rest');
  assert.equal(simple.status, 200, simple.body);
  assert.equal(simple.json.contentItems[0].text, SIMPLE);
  const asked = await rest(d, ASK, 'rest');
  assert.equal(asked.status, 409, asked.body);
  assert.equal(asked.json.error.code, 'input_required');
  assert.equal(asked.json.inputRequests.user_name.method, 'elicitation/create', asked.body);
  const done = await answerAda(d, 'rest', asked.json.requestState);
  assert.equal(done.status, 200, done.body);
  assert.equal(done.json.contentItems[0].text, 'Hello, Ada!');

  // A 2025-11-25 session: the round becomes an elicitation/create request.
  const legacy = await sdk2(url(d, '/mcp/d/legacy'), { mode: 'legacy', elicit: { name: 'Bo', context: 'Bo' } });
  try {
    assert.equal(legacy.version, '2025-11-25');
    const r = await legacy.call({ op: 'callTool', name: ASK, arguments: {} });
    assert.equal(textOf(r.result ?? {}), 'Hello, Bo!', JSON.stringify(r));
    const s = await legacy.call({ op: 'callTool', name: 'test_simple_text', arguments: {} });
    assert.equal(textOf(s.result), SIMPLE);
    // the session's log level (info until it sets one) goes upstream as
    // the request's logLevel, so the server's request-scoped log comes back
    // (it sends none to a request without one)
    await legacy.call({ op: 'callTool', name: 'test_logging_tool', arguments: {} });
    await waitFor(() => legacy.notifications.some((n) => n.method === 'notifications/message' &&
      JSON.stringify(n.params.data).includes('test_logging_tool ran')));
    // prompts/get asks too, and is answered the same way
    const p = await legacy.call({ op: 'getPrompt', name: PROMPT });
    assert.equal(p.result?.messages?.[0]?.content?.text, 'Use the following context: Bo', JSON.stringify(p));
    // resources/subscribe: the upstream's listen takes the URI, and its
    // resources/updated reaches the session
    const sub = await legacy.call({ op: 'subscribeResource', uri: WATCHED });
    assert.ok(sub.result, JSON.stringify(sub));
    await legacy.call({ op: 'callTool', name: 'test_touch_resource', arguments: { uri: WATCHED } });
    await waitFor(() => legacy.notifications.some((n) => n.method === 'notifications/resources/updated' &&
      n.params.uri === WATCHED));
  } finally {
    await legacy.close();
  }

  // A 2026-07-28 client: input rounds it answers itself.
  const modern = await sdk2(url(d, '/mcp/d/modern'), { mode: 'modern', elicit: { name: 'Cy', context: 'Cy' } });
  try {
    assert.equal(modern.version, MODERN);
    const r = await modern.call({ op: 'callTool', name: ASK, arguments: {} });
    assert.equal(textOf(r.result ?? {}), 'Hello, Cy!', JSON.stringify(r));
    const p = await modern.call({ op: 'getPrompt', name: PROMPT });
    assert.equal(p.result?.messages?.[0]?.content?.text, 'Use the following context: Cy', JSON.stringify(p));
    // subscriptions/listen with resourceSubscriptions, on both hops
    const l = await modern.call({ op: 'listen', filter: { resourceSubscriptions: [WATCHED] } });
    assert.deepEqual(l.result?.honoredFilter?.resourceSubscriptions, [WATCHED], JSON.stringify(l));
    await modern.call({ op: 'callTool', name: 'test_touch_resource', arguments: { uri: WATCHED } });
    await waitFor(() => modern.notifications.some((n) => n.method === 'notifications/resources/updated' &&
      n.params.uri === WATCHED));
  } finally {
    await modern.close();
  }
}

test('a 2026-07-28-only server over stdio: learnt by the probe, leased per dialog, reached from REST, 2025 and 2026 clients', async (t) => {
  const d = await start(`version: 1
servers:
  up:
    command: ${node22}
    args: [${JSON.stringify(backendJs)}, '--modern-only']
`, { waitReady: true });
  t.after(() => stopClean(d));
  const up = await serverOf(d, 'up');
  assert.equal(up.state, 'ready', JSON.stringify(up));
  assert.equal(up.protocol, 'auto');
  assert.equal(up.protocolVersion, MODERN);
  assert.equal(up.sharedUpstream, false);
  assert.ok(up.instances.every((i) => i.protocolVersion === MODERN), JSON.stringify(up.instances));
  await callFromEveryFront(d);
  // Each dialog had its own process: the server's state stays per dialog.
  const dialogs = (await d.get('/v1/dialogs')).json.dialogs.map((x) => x.dialog).sort();
  assert.deepEqual(dialogs, ['legacy', 'modern', 'rest']);
  const leased = (await serverOf(d, 'up')).instances.filter((i) => i.role === 'leased');
  assert.equal(new Set(leased.map((i) => i.pid)).size, 3, JSON.stringify(leased));
});

test('a 2026-07-28-only server over HTTP: headers it checks, shared state said so, every front served', async (t) => {
  const be = await httpBackend(['--modern-only']);
  t.after(() => be.stop());
  const d = await start(`version: 1
servers:
  up:
    transport: streamable_http
    url: ${be.url}
    protocol: modern
`, { waitReady: true });
  t.after(() => stopClean(d));
  const up = await serverOf(d, 'up');
  assert.equal(up.state, 'ready', JSON.stringify(up));
  assert.equal(up.protocol, 'modern');
  assert.equal(up.protocolVersion, MODERN);
  assert.equal(up.sharedUpstream, true, 'no session over HTTP: every dialog reaches one state');
  // The backend refuses a request whose Mcp-Method/Mcp-Name headers are
  // missing or differ from the body (-32020): these calls prove them.
  await callFromEveryFront(d);
});

test('auto against 2025-era servers: a refused probe and an exiting one both end in initialize, once per server; legacy never probes; modern fails clearly', async (t) => {
  const dir = tmpdir();
  const logs = { exits: path.join(dir, 'exits.log'), legacy: path.join(dir, 'legacy.log') };
  const d = await start(`version: 1
servers:
  exits:
    command: ${FIXTURE}
    args: ['--exit-before-init', '--log', ${JSON.stringify(logs.exits)}]
  old:
    command: ${FIXTURE}
    protocol: legacy
    args: ['--log', ${JSON.stringify(logs.legacy)}]
  strict:
    command: ${FIXTURE}
    protocol: modern
`, { waitReady: true });
  t.after(() => d.stop());
  const exits = await serverOf(d, 'exits');
  assert.equal(exits.state, 'ready', JSON.stringify(exits));
  assert.equal(exits.protocolVersion, '2025-era');
  assert.match(d.stderr, /upstream exited on server\/discover; starting it again for initialize/);
  // Two dialogs' instances later, the probe was still sent once: the
  // verdict is the server's.
  for (const dialog of ['one', 'two']) {
    const r = await rest(d, 'echo', dialog, { arguments: { text: dialog } });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.json.contentItems[0].text, dialog);
  }
  const methods = fs.readFileSync(logs.exits, 'utf8').trim().split('\n');
  assert.equal(methods.filter((m) => m === 'server/discover').length, 1, methods.join());
  assert.deepEqual(methods.slice(0, 3), ['server/discover', 'initialize', 'notifications/initialized']);
  assert.ok(!(await d.get('/v1/problems')).json.problems.some((p) => p.server === 'exits'));

  const old = fs.readFileSync(logs.legacy, 'utf8').trim().split('\n');
  assert.equal(old[0], 'initialize');
  assert.ok(!old.includes('server/discover'));
  assert.equal((await serverOf(d, 'old')).protocol, 'legacy');

  const strict = await waitFor(async () => {
    const s = await serverOf(d, 'strict');
    return s.state === 'failed' && s;
  });
  assert.match(strict.lastError, /server\/discover failed: .*-32601/, strict.lastError);
});

test('overlaps: reloads land while a server probes and starts again after exiting on the probe, and while a round waits for input', async (t) => {
  const dir = tmpdir();
  const yaml = (protocol, delay) => `version: 1
gateway:
  reload: {debounce_ms: 20, poll_interval_ms: 100}
servers:
  exits:
    command: ${FIXTURE}
    protocol: ${protocol}
    args: ['--exit-before-init', '--init-delay-ms', '${delay}']
  up:
    command: ${node22}
    args: [${JSON.stringify(backendJs)}, '--modern-only']
`;
  const d = await start(yaml('auto', 300), {});
  t.after(() => stopClean(d));
  // The first reload lands while `exits` probes or starts again after its
  // exit (its initialize answers 300 ms late), the second while the first's
  // replacement does: each replaces the server (protocol is in the spawn
  // hash), and the last one stands.
  const rewrite = (text) => {
    const tmp = path.join(dir, 'next.yaml');
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, d.configPath);
  };
  rewrite(yaml('legacy', 200));
  await new Promise((r) => setTimeout(r, 150));
  rewrite(yaml('auto', 0));
  await waitFor(async () => (await serverOf(d, 'exits'))?.protocolVersion === '2025-era' &&
    (await serverOf(d, 'exits')).protocol === 'auto', 20000);

  // A round parked on the 2026-07-28 server while a reload replaces it:
  // the old instance drains (the parked call is a call in flight), so the
  // retry still reaches it and the call ends once, with its answer.
  await waitFor(async () => (await serverOf(d, 'up'))?.state === 'ready', 20000);
  const asked = await rest(d, ASK, 'overlap');
  assert.equal(asked.status, 409, asked.body);
  rewrite(yaml('auto', 0).replace("'--modern-only']", "'--modern-only']\n    request_timeout: 20s"));
  await waitFor(async () => (await serverOf(d, 'up')).config.request_timeout_ms === 20000, 20000);
  const retry = await answerAda(d, 'overlap', asked.json.requestState);
  assert.equal(retry.status, 200, retry.body);
  assert.equal(retry.json.contentItems[0].text, 'Hello, Ada!');
  const same = await answerAda(d, 'overlap', asked.json.requestState);
  assert.equal(same.status, 400, same.body);
  assert.equal(same.json.error.code, 'bad_request_state');
  // The server serves on after it.
  const again = await rest(d, 'test_simple_text', 'after');
  assert.equal(again.status, 200, again.body);
});
