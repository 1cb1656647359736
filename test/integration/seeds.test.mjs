// Seed fidelity: what each seed system's own configs mean, checked end to
// end against real servers (server-everything from npm).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { start, run, waitFor, nodeModules, tmpdir, slow, track } from './lib/harness.mjs';

const EVERYTHING = path.join(nodeModules, '.bin/mcp-server-everything');

function freePort() {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function everythingHttp() {
  const port = await freePort();
  const child = track(spawn(EVERYTHING, ['streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'ignore'] }));
  await waitFor(() => new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => { s.destroy(); resolve(true); });
    s.on('error', () => resolve(false));
  }), 20000 * slow, 100);
  return { port, stop: () => { try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ } } };
}

const chatagent = (port, prompts) => `toolbox:
  max_concurrent: 4
  mcps:
    - name: everything
      url: http://127.0.0.1:${port}/mcp
      transport: streamable_http
      mode: dynamic
      default_tool_config: {max_instances: 2, timeout: P0DT0H0M30S}
${prompts === undefined ? '' : `      prompts: ${prompts}\n`}`;

async function imported(yaml) {
  const dir = tmpdir();
  const src = path.join(dir, 'toolbox.yaml');
  fs.writeFileSync(src, yaml);
  const r = await run(['import', src]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

const promptNames = async (d) => (await d.get('/v1/prompts')).json.prompts.map((p) => p.originalName).sort();

test("chatagent's per-MCP prompts list becomes the server's prompt filter (seed 004)", async (t) => {
  const up = await everythingHttp();
  t.after(() => up.stop());

  // The list names prompts: only those are served, the others warn.
  const d = await start(await imported(chatagent(up.port, '[simple-prompt, "args-*"]')), { waitReady: true });
  t.after(() => d.stop());
  await waitFor(async () => (await promptNames(d)).length > 0, 20000 * slow);
  assert.deepEqual(await promptNames(d), ['args-prompt', 'simple-prompt']);
  const problems = (await d.get('/v1/problems')).json.problems;
  assert.ok(problems.some((p) => /Prompt 'resource-prompt' .* 'prompts' list/.test(p.message)), JSON.stringify(problems));

  // chatagent's default, an empty list, takes no prompt: none served, no warning.
  fs.writeFileSync(d.configPath, await imported(chatagent(up.port, '[]')));
  await d.post('/v1/reload', {});
  await waitFor(async () => (await promptNames(d)).length === 0, 20000 * slow);
  const after = (await d.get('/v1/problems')).json.problems;
  assert.ok(!after.some((p) => /Prompt /.test(p.message)), JSON.stringify(after));
  const shown = (await d.get('/v1/servers')).json.servers.find((s) => s.id === 'everything');
  assert.deepEqual(shown.config.prompts, []);
  assert.equal(shown.config.load_prompts, false);
});

test('an mcp without prompts imports as none, as chatagent reads it', async () => {
  const out = await imported(chatagent(1, undefined));
  assert.match(out, /prompts: \[\]/);
});

test('--check-config on a missing file passes: the configuration is empty', async () => {
  const file = path.join(tmpdir(), 'absent.yaml');
  const r = await run(['--check-config', '-c', file]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /no such file: the configuration is empty/);
  assert.match(r.stderr, /test is successful \(0 errors, 0 servers\)/);
});

test('${VAR} in args, cwd and config reaches the server, and shows as *** (seed 002)', async (t) => {
  const { fixtures } = await import('./lib/harness.mjs');
  const fixture = path.join(fixtures, 'mcp_fixture');
  const logdir = tmpdir();
  const d = await start(`version: 1
servers:
  fx:
    truely-stateless: true
    command: ${fixture}
    args: [--log, '\${GWT_LOGDIR}/methods.log']
    cwd: '\${GWT_LOGDIR}'
    config: {token: '\${GWT_SEED_SECRET}'}
  bad:
    command: ${fixture}
    args: ['\${GWT_NOT_SET_ANYWHERE}', '--x=\${GWT_NOT_SET_ANYWHERE}']
`, { env: { GWT_LOGDIR: logdir, GWT_SEED_SECRET: 'seed-secret-4711' }, waitReady: true });
  t.after(() => d.stop());
  // The fixture wrote its log where the variable pointed.
  await waitFor(() => fs.existsSync(path.join(logdir, 'methods.log')), 10000 * slow);
  assert.match(fs.readFileSync(path.join(logdir, 'methods.log'), 'utf8'), /initialize/);
  const servers = await d.get('/v1/servers');
  const fx = servers.json.servers.find((s) => s.id === 'fx');
  assert.deepEqual(fx.config.args, ['--log', '***/methods.log']);
  assert.equal(fx.config.cwd, '***');
  for (const route of ['/v1/servers', '/v1/problems', '/metrics']) {
    const body = (await d.get(route)).body;
    assert.ok(!body.includes(logdir) && !body.includes('seed-secret-4711'), `${route} shows a value`);
  }
  // A missing variable fails only its server, named once.
  const named = (await d.get('/v1/problems')).json.problems.filter((p) => /GWT_NOT_SET_ANYWHERE/.test(p.message));
  assert.equal(named.length, 1, JSON.stringify(named));
  assert.equal(named[0].server, 'bad');
  assert.equal(servers.json.servers.find((s) => s.id === 'bad').state, 'failed');
});
