// Who owns a contested tool name (design §5): during the first load the
// server earlier in the file, whatever the start timing; after it the
// incumbent, across restarts and reloads; never a name the agent runtime
// reserved (gateway.reserved_tool_names, seed 000).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { start, waitFor, fixtures, tmpdir, slow } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const schema = { type: 'object', properties: { x: { type: 'string' } } };
const named = (...names) => names.map((name) => ({ name, description: `the ${name} tool`, inputSchema: schema }));

function toolsFile(dir, name, tools) {
  const file = path.join(dir, name);
  fs.writeFileSync(file, JSON.stringify(tools));
  return file;
}

// `slowStart` delays the server's start by that many seconds (a shell
// sleeping before it execs the fixture), so it lists after the other.
function server(id, file, { slowStart = 0, extra = [] } = {}) {
  const cmd = [FIXTURE, '--tools-json', file, ...extra].join(' ');
  const shared = '    truely-stateless: true\n';
  if (!slowStart) return `  ${id}:\n${shared}    command: ${FIXTURE}\n    args: ${JSON.stringify(['--tools-json', file, ...extra])}\n`;
  return `  ${id}:\n${shared}    command: /bin/sh\n    args: ${JSON.stringify(['-c', `sleep ${slowStart}; exec ${cmd}`])}\n`;
}

const owner = async (d, name) => (await d.get(`/v1/tools/${name}`)).json.server;
const problems = async (d) => (await d.get('/v1/problems')).json.problems;

test('the server earlier in the file owns a contested name, whichever lists first', async (t) => {
  const dir = tmpdir();
  const late = toolsFile(dir, 'late.json', named('good', 'crash', 'only_late'));
  const early = toolsFile(dir, 'early.json', named('good', 'only_early'));
  const config = (reserved, order) => `version: 1
gateway:
  reserved_tool_names: ${JSON.stringify(reserved)}
servers:
${order.map((id) => (id === 'first' ? server('first', late, { slowStart: 1.5, extra: ['--crash-on-call', 'crash'] }) : server('second', early))).join('')}`;
  const d = await start(config([], ['first', 'second']));
  t.after(() => d.stop());

  // `second` lists at once and holds `good` until `first` lists 1.5 s later.
  await waitFor(async () => (await d.get('/v1/tools/only_early')).status === 200, 20000 * slow);
  await waitFor(async () => (await d.get('/readyz')).status === 200, 30000 * slow);
  assert.equal(await owner(d, 'good'), 'first');
  const lost = (await problems(d)).find((p) => p.server === 'second' && p.tool === 'good');
  assert.ok(lost && /'first'/.test(lost.message) && /'second'/.test(lost.message), JSON.stringify(lost));

  // The incumbent keeps it across its own crash and restart ...
  const before = (await d.get('/v1/servers')).json.servers.find((s) => s.id === 'first').restarts;
  await d.post('/v1/tools/crash/call', { arguments: {} });
  await waitFor(async () => {
    const s = (await d.get('/v1/servers')).json.servers.find((x) => x.id === 'first');
    return s.restarts > before && s.state === 'ready';
  }, 20000 * slow);
  assert.equal(await owner(d, 'good'), 'first');

  // ... and across a reload that puts the other server first in the file.
  fs.writeFileSync(d.configPath, config([], ['second', 'first']));
  await d.post('/v1/reload', {});
  await waitFor(async () => (await d.get('/readyz')).status === 200, 30000 * slow);
  assert.equal(await owner(d, 'good'), 'first');

  // A name the agent runtime keeps for itself is served by no server.
  fs.writeFileSync(d.configPath, config(['goo*'], ['second', 'first']));
  await d.post('/v1/reload', {});
  await waitFor(async () => (await d.get('/v1/tools/good')).status === 404, 10000 * slow);
  const reserved = (await problems(d)).filter((p) => p.tool === 'good' && /reserved_tool_names/.test(p.message));
  assert.deepEqual(reserved.map((p) => p.server).sort(), ['first', 'second']);
  assert.equal((await d.post('/v1/tools/good/call', { arguments: {} })).status, 404);
  assert.equal((await d.get('/v1/tools/only_late')).status, 200, 'other tools stay');

  // Freed again, it goes to the earlier server in the file (now `second`),
  // and the Problems that said it was skipped are gone.
  fs.writeFileSync(d.configPath, config([], ['second', 'first']));
  await d.post('/v1/reload', {});
  await waitFor(async () => (await d.get('/v1/tools/good')).status === 200, 10000 * slow);
  assert.equal(await owner(d, 'good'), 'second');
  const left = (await problems(d)).filter((p) => p.tool === 'good');
  assert.deepEqual(left.map((p) => p.server), ['first'], JSON.stringify(left));
  assert.match(left[0].message, /already registered by MCP server 'second'/);
});
