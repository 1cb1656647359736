// Issue 7, items 3 and 4 and progress: prompts, resources, templates and
// completion aggregated through /mcp and REST; progress notifications and
// sampling requests relayed between an upstream and the /mcp session whose
// call caused them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { start, waitFor, fixtures, nodeModules, slow } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const EVERYTHING = path.join(nodeModules, '.bin/mcp-server-everything');

async function stopClean(d) {
  const r = await d.stop();
  assert.doesNotMatch(d.stderr, /AddressSanitizer|LeakSanitizer|runtime error/);
  assert.equal(r.code, 0, d.stderr.slice(-2000));
}

async function connect(d, capabilities = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${d.port}/mcp`));
  const client = new Client({ name: 'mcpgw-relays', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  return client;
}

const everything = (extra = '') =>
  `version: 1\nservers:\n  ev:\n    command: ${EVERYTHING}\n    args: [stdio]\n    transform: [{prefix: ev_}]\n${extra}`;

// Prompts and resources are listed right after the tools: wait for them.
const extrasReady = (d) => waitFor(async () => {
  const p = (await d.get('/v1/prompts')).json;
  const r = (await d.get('/v1/resources')).json;
  return p.prompts.length > 0 && r.resourceTemplates.length > 0;
}, 20000 * slow);

test('prompts, resources, templates and completion through /mcp and REST', async (t) => {
  const d = await start(everything(), { waitReady: true });
  t.after(() => stopClean(d));
  await extrasReady(d);

  const restPrompts = (await d.get('/v1/prompts')).json.prompts;
  const simple = restPrompts.find((p) => p.originalName === 'simple-prompt');
  assert.ok(simple, JSON.stringify(restPrompts));
  assert.equal(simple.name, 'ev_simple-prompt', 'prompt names get the server transforms');
  assert.equal(simple.server, 'ev');
  const restRes = (await d.get('/v1/resources')).json;
  assert.ok(restRes.resources.every((r) => r.server === 'ev' && r.uri.startsWith('demo://')));
  assert.ok(restRes.resourceTemplates.some((r) => r.uriTemplate === 'demo://resource/dynamic/text/{resourceId}'));

  const client = await connect(d);
  t.after(() => client.close());
  const caps = client.getServerCapabilities();
  assert.ok(caps.prompts && caps.resources && caps.completions, JSON.stringify(caps));

  const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
  assert.ok(prompts.includes('ev_simple-prompt') && prompts.includes('ev_completable-prompt'), prompts.join());
  const got = await client.getPrompt({ name: 'ev_simple-prompt' });
  assert.ok(got.messages.length > 0 && got.messages[0].content.type === 'text');
  const args = await client.getPrompt({ name: 'ev_completable-prompt', arguments: { department: 'Sales', name: 'Eve' } });
  assert.match(args.messages[0].content.text, /Eve.*Sales/);
  await assert.rejects(client.getPrompt({ name: 'simple-prompt' }), /Unknown prompt/, 'the original name is not served');

  const resources = (await client.listResources()).resources;
  assert.ok(resources.length > 0);
  const read = await client.readResource({ uri: resources[0].uri });
  assert.equal(read.contents[0].uri, resources[0].uri, 'a listed URI round-trips unchanged');
  const templates = (await client.listResourceTemplates()).resourceTemplates;
  assert.ok(templates.some((x) => x.uriTemplate === 'demo://resource/dynamic/text/{resourceId}'));
  const dyn = await client.readResource({ uri: 'demo://resource/dynamic/text/7' });
  assert.equal(dyn.contents[0].uri, 'demo://resource/dynamic/text/7', 'a template URI is routed to its owner');
  await assert.rejects(client.readResource({ uri: 'nowhere://x' }), /Resource not found/);

  const comp = await client.complete({ ref: { type: 'ref/prompt', name: 'ev_completable-prompt' },
    argument: { name: 'department', value: 'S' } });
  assert.deepEqual(comp.completion.values.sort(), ['Sales', 'Support']);
  const tcomp = await client.complete({ ref: { type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' },
    argument: { name: 'resourceId', value: '1' } });
  assert.ok(Array.isArray(tcomp.completion.values));
});

test('progress of a long call reaches the SDK client under its own token', async (t) => {
  const d = await start(everything(), { waitReady: true });
  t.after(() => stopClean(d));
  const client = await connect(d);
  t.after(() => client.close());
  const seen = [];
  const r = await client.callTool({ name: 'ev_trigger-long-running-operation', arguments: { duration: 1, steps: 3 } },
    undefined, { onprogress: (p) => seen.push(p) });
  assert.match(r.content[0].text, /completed/i);
  assert.deepEqual(seen.map((p) => p.progress), [1, 2, 3]);
  assert.equal(seen[0].total, 3);
  // A REST call never asks for progress.
  const rest = await d.post('/v1/tools/ev_trigger-long-running-operation/call',
    { dialog: 'rest1', arguments: { duration: 0.3, steps: 2 } });
  assert.equal(rest.status, 200, rest.body);
  const m = (await d.get('/metrics')).body;
  assert.match(m, /^mcpgw_progress_notifications_total\{outcome="relayed"\} 3$/m, 'the three the client saw');
});

test('sampling is relayed to a session that declared it, refused otherwise', async (t) => {
  const d = await start(`version: 1\nservers:\n  fx:\n    command: ${FIXTURE}\n    args: ['--sampling-on-call']\n`, { waitReady: true });
  t.after(() => stopClean(d));

  const sampler = await connect(d, { sampling: {} });
  t.after(() => sampler.close());
  let asked = null;
  sampler.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    asked = req.params;
    return { role: 'assistant', content: { type: 'text', text: 'hi from the client' }, model: 'test-model' };
  });
  const r = await sampler.callTool({ name: 'echo', arguments: { text: 'x' } });
  assert.equal(asked.messages[0].content.text, 'Say hi.');
  const note = r.content.map((c) => c.text).join('\n');
  assert.match(note, /sampling answer:.*hi from the client/s, note);

  const plain = await connect(d);
  t.after(() => plain.close());
  const r2 = await plain.callTool({ name: 'echo', arguments: { text: 'y' } });
  const note2 = r2.content.map((c) => c.text).join('\n');
  assert.match(note2, /sampling answer:.*did not declare the sampling capability/s, note2);

  // A REST caller is asked in an input round (docs/api.md); its answer
  // reaches the upstream's call.
  const body = { dialog: 'rest2', arguments: { text: 'z' }, timeout_ms: 5000 };
  const rest = await d.post('/v1/tools/echo/call', body);
  assert.equal(rest.status, 409, rest.body);
  const [key] = Object.keys(rest.json.inputRequests);
  assert.equal(rest.json.inputRequests[key].method, 'sampling/createMessage');
  const done = await d.post('/v1/tools/echo/call', { ...body, requestState: rest.json.requestState,
    inputResponses: { [key]: { role: 'assistant', content: { type: 'text', text: 'hi from REST' }, model: 'm' } } });
  assert.equal(done.status, 200, done.body);
  const texts = done.json.contentItems.map((c) => c.text).join('\n');
  assert.match(texts, /sampling answer:.*hi from REST/s, texts);
  const m = (await d.get('/metrics')).body;
  assert.match(m, /^mcpgw_server_requests_total\{outcome="relayed"\} 2$/m, m);
  assert.match(m, /^mcpgw_server_requests_total\{outcome="refused"\} 1$/m, 'the plain session');
});
