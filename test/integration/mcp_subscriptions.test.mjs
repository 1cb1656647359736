// Resource subscriptions through /mcp (docs/api.md, /mcp): resources/subscribe
// and resources/unsubscribe routed like resources/read, updates relayed to
// the subscribed sessions only, the upstream told when nobody holds a URI.
// The upstream is the C fixture with --resources/--subscribe: its tool
// `touch {uri}` sends notifications/resources/updated when it holds a
// subscription to uri, and --log records every method it receives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { start, waitFor, fixtures, tmpdir, slow } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
// A notification that must not come is not waited for: the client is sent
// a later one it must hear (a marker on the same stream, from the same
// upstream), and once that has come the unwanted one would have come first.

async function stopClean(d) {
  const r = await d.stop();
  assert.doesNotMatch(d.stderr, /AddressSanitizer|LeakSanitizer|runtime error/);
  assert.equal(r.code, 0, d.stderr.slice(-2000));
}

// An SDK client whose resources/updated notifications are collected in
// `client.updates` (URIs, in arrival order).
async function connect(d) {
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${d.port}/mcp`));
  const client = new Client({ name: 'mcpgw-subs', version: '1.0.0' });
  client.updates = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { client.updates.push(n.params.uri); });
  await client.connect(transport);
  return client;
}

const count = (list, uri) => list.filter((u) => u === uri).length;
const unsubscribesSent = (log) =>
  (fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '').split('\n').filter((m) => m === 'resources/unsubscribe').length;

const resourcesListed = (d, ...uris) => waitFor(async () => {
  const r = (await d.get('/v1/resources')).json;
  return uris.every((u) => r.resources.some((x) => x.uri === u));
}, 20000 * slow);

test('subscriptions on a shared instance: only subscribers hear updates; the upstream is told when the last one lets go', async (t) => {
  const log = path.join(tmpdir(), 'fx.log');
  const d = await start(`version: 1
servers:
  fx:
    truely-stateless: true
    command: ${FIXTURE}
    args: ['--resources', 'fx', '--subscribe', '--log', '${log}']
  nosub:
    truely-stateless: true
    command: ${FIXTURE}
    args: ['--resources', 'ns']
    transform: [{prefix: 'ns_'}]
`, { waitReady: true });
  t.after(() => stopClean(d));
  await resourcesListed(d, 'fx://a', 'ns://a');
  const touch = async (uri) => (await d.post('/v1/tools/touch/call', { arguments: { uri } })).json.contentItems[0].text;

  const a = await connect(d);
  const b = await connect(d);
  t.after(() => Promise.all([a.close(), b.close()]));
  assert.equal(a.getServerCapabilities().resources.subscribe, true);

  // Both subscribe to fx://b; touching it until both heard also shows that
  // both GET streams are open, so the silences below mean something.
  assert.deepEqual(await a.subscribeResource({ uri: 'fx://b' }), {});
  assert.deepEqual(await b.subscribeResource({ uri: 'fx://b' }), {});
  await waitFor(async () => {
    assert.equal(await touch('fx://b'), 'touched fx://b: notified');
    return a.updates.includes('fx://b') && b.updates.includes('fx://b');
  });

  // Only A subscribes to fx://a: only A hears it. B's marker: fx://b,
  // touched after.
  await a.subscribeResource({ uri: 'fx://a' });
  assert.equal(await touch('fx://a'), 'touched fx://a: notified');
  await waitFor(() => a.updates.includes('fx://a'));
  const bMarks = count(b.updates, 'fx://b');
  assert.equal(await touch('fx://b'), 'touched fx://b: notified');
  await waitFor(() => count(b.updates, 'fx://b') > bMarks);
  assert.equal(count(b.updates, 'fx://a'), 0, 'B did not subscribe to fx://a');

  // A template URI routes like resources/read.
  assert.deepEqual(await a.subscribeResource({ uri: 'fx://item/7' }), {});
  await assert.rejects(a.subscribeResource({ uri: 'nowhere://x' }), /Resource not found/);
  await assert.rejects(a.subscribeResource({ uri: 'ns://a' }),
    (e) => e.code === -32602 && /does not support resource subscriptions/.test(e.message));

  // A lets go of fx://b; B still holds it, so the upstream is not told and
  // keeps sending, but A hears no more of it.
  // A's marker: fx://a, touched after.
  assert.deepEqual(await a.unsubscribeResource({ uri: 'fx://b' }), {});
  const aHeard = count(a.updates, 'fx://b'), bHeard = count(b.updates, 'fx://b');
  const aMarks = count(a.updates, 'fx://a');
  assert.equal(await touch('fx://b'), 'touched fx://b: notified');
  await waitFor(() => count(b.updates, 'fx://b') > bHeard);
  assert.equal(await touch('fx://a'), 'touched fx://a: notified');
  await waitFor(() => count(a.updates, 'fx://a') > aMarks);
  assert.equal(count(a.updates, 'fx://b'), aHeard, 'A unsubscribed from fx://b');
  assert.equal(unsubscribesSent(log), 0, 'B still holds fx://b upstream');

  // The last holder lets go: the upstream is told.
  await b.unsubscribeResource({ uri: 'fx://b' });
  await waitFor(() => unsubscribesSent(log) === 1);
  assert.equal(await touch('fx://b'), 'touched fx://b: not subscribed');

  // A's session ends (DELETE): its subscriptions on the shared instance
  // (fx://a, fx://item/7) are ended upstream.
  await a.transport.terminateSession();
  await waitFor(() => unsubscribesSent(log) === 3);
  assert.equal(await touch('fx://a'), 'touched fx://a: not subscribed');
});

test('subscriptions on leased instances go through the session\'s own instance', async (t) => {
  const d = await start(`version: 1
servers:
  fx:
    command: ${FIXTURE}
    args: ['--resources', 'fx', '--subscribe']
`, { waitReady: true });
  t.after(() => stopClean(d));
  await resourcesListed(d, 'fx://a');
  const touch = async (c, uri) => (await c.callTool({ name: 'touch', arguments: { uri } })).content[0].text;

  const a = await connect(d);
  const b = await connect(d);
  t.after(() => Promise.all([a.close(), b.close()]));
  await a.subscribeResource({ uri: 'fx://a' });
  // A's touch runs on A's instance, which holds the subscription.
  await waitFor(async () => {
    assert.equal(await touch(a, 'fx://a'), 'touched fx://a: notified');
    return a.updates.includes('fx://a');
  });
  // B's instance is another one: nothing subscribed there. B's marker:
  // fx://b, subscribed on its own instance and touched after.
  assert.equal(await touch(b, 'fx://a'), 'touched fx://a: not subscribed');
  await b.subscribeResource({ uri: 'fx://b' });
  assert.equal(await touch(b, 'fx://b'), 'touched fx://b: notified');
  await waitFor(() => b.updates.includes('fx://b'));
  assert.deepEqual(b.updates, ['fx://b'], 'B heard nothing of fx://a');

  // Releasing the lease ends the subscription with the instance; A's next
  // call gets a fresh instance that holds none.
  await a.callTool({ name: 'mcp_release', arguments: { serverId: 'fx' } });
  assert.equal(await touch(a, 'fx://a'), 'touched fx://a: not subscribed');
  // Unsubscribing what was dropped is not an error.
  assert.deepEqual(await a.unsubscribeResource({ uri: 'fx://a' }), {});
});

test('resource_namespace: URIs served as mcpgw:<id>/<uri> round-trip through read, complete and subscribe', async (t) => {
  const server = (id, ns, args) => `  ${id}:
    truely-stateless: true
    command: ${FIXTURE}
    args: [${args}]
    resource_namespace: ${ns}
    transform: [{prefix: '${id}_'}]
`;
  // Three servers offering the same URIs: two namespaced, one plain.
  const d = await start(`version: 1\nservers:\n${server('one', true, "'--resources', 'fx', '--subscribe'")}`
    + `${server('two', true, "'--resources', 'fx'")}${server('plain', false, "'--resources', 'fx'")}`, { waitReady: true });
  t.after(() => stopClean(d));
  await resourcesListed(d, 'mcpgw:one/fx://a', 'mcpgw:two/fx://a', 'fx://a');

  const rest = (await d.get('/v1/resources')).json;
  const oneA = rest.resources.find((r) => r.uri === 'mcpgw:one/fx://a');
  assert.equal(oneA.server, 'one');
  assert.equal(oneA.originalUri, 'fx://a');
  assert.ok(rest.resourceTemplates.some((x) => x.uriTemplate === 'mcpgw:two/fx://item/{id}' && x.originalUriTemplate === 'fx://item/{id}'));
  assert.deepEqual((await d.get('/v1/problems')).json.problems.filter((p) => /collision/.test(p.id)), [], 'no collisions');

  const c = await connect(d);
  t.after(() => c.close());
  const listed = (await c.listResources()).resources.map((r) => r.uri).sort();
  assert.deepEqual(listed, ['fx://a', 'fx://b', 'mcpgw:one/fx://a', 'mcpgw:one/fx://b', 'mcpgw:two/fx://a', 'mcpgw:two/fx://b']);
  const templates = (await c.listResourceTemplates()).resourceTemplates.map((x) => x.uriTemplate).sort();
  assert.deepEqual(templates, ['fx://item/{id}', 'mcpgw:one/fx://item/{id}', 'mcpgw:two/fx://item/{id}']);

  // The server is sent its own URI; the contents come back namespaced.
  const read = await c.readResource({ uri: 'mcpgw:one/fx://a' });
  assert.equal(read.contents[0].uri, 'mcpgw:one/fx://a');
  assert.equal(read.contents[0].text, 'contents of fx://a');
  const item = await c.readResource({ uri: 'mcpgw:two/fx://item/9' });
  assert.equal(item.contents[0].uri, 'mcpgw:two/fx://item/9');
  assert.equal(item.contents[0].text, 'contents of fx://item/9');
  const plain = await c.readResource({ uri: 'fx://a' });
  assert.equal(plain.contents[0].uri, 'fx://a', 'a plain server\'s URIs pass unchanged');
  await assert.rejects(c.readResource({ uri: 'mcpgw:nobody/fx://a' }), /Resource not found/);
  const comp = await c.complete({ ref: { type: 'ref/resource', uri: 'mcpgw:one/fx://item/{id}' }, argument: { name: 'id', value: '' } });
  assert.deepEqual(comp.completion.values, ['fx://item/{id}'], 'completion names the server\'s own template');

  // Subscriptions take and give the namespaced form.
  const touch = async (uri) => (await d.post('/v1/tools/one_touch/call', { arguments: { uri } })).json.contentItems[0].text;
  await c.subscribeResource({ uri: 'mcpgw:one/fx://a' });
  await waitFor(async () => {
    assert.equal(await touch('fx://a'), 'touched fx://a: notified');
    return c.updates.includes('mcpgw:one/fx://a');
  });
  assert.ok(c.updates.every((u) => u === 'mcpgw:one/fx://a'), c.updates.join());
  await assert.rejects(c.subscribeResource({ uri: 'mcpgw:two/fx://a' }), /does not support resource subscriptions/);
  assert.deepEqual(await c.unsubscribeResource({ uri: 'mcpgw:one/fx://a' }), {});
  assert.equal(await touch('fx://a'), 'touched fx://a: not subscribed', 'the upstream was told');
});
