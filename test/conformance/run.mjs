#!/usr/bin/env node
// Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
// against mcpgw (docs/conformance.md). Builds nothing: it uses build/mcpgw
// (`make all`) and the packages `npm ci` put in test/conformance/node_modules;
// `make conformance` does both. Six runs, each judged against its own
// committed test/conformance/expected-failures.<run>.yaml:
//
//   2025-11-25-stdio   `conformance server --requirements 2025-11-25` on /mcp,
//                      backend.mjs behind mcpgw over stdio
//   2026-07-28-stdio   `conformance server --requirements 2026-07-28` on /mcp,
//                      the same upstreams
//   2026-07-28-http    the same, backend.mjs behind mcpgw over streamable HTTP
//   2026-07-28-stdio-leased, 2026-07-28-http-leased
//                      the same two with `conf` leased (no truely-stateless):
//                      the plain /mcp URL, a request naming no dialog, as a
//                      client that knows nothing of dialogs sends it
//   client-2026-07-28  `conformance client` scenarios that concern an upstream
//                      connection, mcpgw as the client (client.mjs)
//
//   node run.mjs [--run NAME[,NAME…]]… [conformance options, e.g. --scenario ping]
//
// With --scenario the run is not judged against its list (and prints the
// tool's whole output). MCPGW_BIN overrides the daemon. Results go to
// build/conformance/<run>/ (summary.md, cli.log, mcpgw.log, results/). The
// output ends in one line per run; the exit status is 0 only if every run's
// tool exited 0 and this script's own count of the scored scenarios agrees:
// no unexpected failure (a scenario without a result included), no listed
// failure that now passes.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AUTH_SCENARIOS, AUTH_SCENARIOS_2025, AUTH_SCENARIOS_2026, AUTH_SCENARIOS_EXTENSION, CLIENT_SCENARIOS } from './client.mjs';
import { backend, cli, here, mcpgwBin, node, q, root, startGateway, startHttpBackend } from './lib.mjs';

const RUNS = [
  { name: '2025-11-25-stdio', requirements: '2025-11-25', upstream: 'stdio' },
  { name: '2026-07-28-stdio', requirements: '2026-07-28', upstream: 'stdio' },
  { name: '2026-07-28-http', requirements: '2026-07-28', upstream: 'http' },
  { name: '2026-07-28-stdio-leased', requirements: '2026-07-28', upstream: 'stdio', leased: true },
  { name: '2026-07-28-http-leased', requirements: '2026-07-28', upstream: 'http', leased: true },
  { name: 'client-2026-07-28', requirements: '2026-07-28', client: true },
  // The scored authorization scenarios: mcpgw as the OAuth client, client.mjs
  // as the browser (see client.mjs).
  { name: 'client-auth-2026-07-28', requirements: '2026-07-28', client: true, scenarios: AUTH_SCENARIOS_2026 },
  { name: 'client-auth-2025-11-25', requirements: '2025-11-25', client: true, scenarios: AUTH_SCENARIOS_2025 },
  // Extension scenarios are on no spec timeline: run without --spec-version.
  { name: 'client-auth-extension', client: true, scenarios: AUTH_SCENARIOS_EXTENSION },
];
const outRoot = path.join(root, 'build/conformance');
const rel = (p) => path.relative(root, p);

for (const [what, p] of [['mcpgw', mcpgwBin()], ['node 22', node], ['conformance CLI', cli]]) {
  if (!fs.existsSync(p)) {
    console.error(`run.mjs: ${what} not found at ${p}; run \`make conformance\` (it builds mcpgw and runs npm ci in test/conformance)`);
    process.exit(2);
  }
}

// --run selects runs; everything else goes to the conformance CLI.
const argv = process.argv.slice(2);
const picked = [];
const extra = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--run') picked.push(...(argv[++i] ?? '').split(',').filter(Boolean));
  else extra.push(argv[i]);
}
for (const n of picked) {
  if (!RUNS.some((r) => r.name === n)) {
    console.error(`run.mjs: unknown run ${q(n)}; runs: ${RUNS.map((r) => r.name).join(', ')}`);
    process.exit(2);
  }
}
const scenarioArg = extra.includes('--scenario') ? extra[extra.indexOf('--scenario') + 1] : null;
// One scenario: only the runs of its kind (client or server).
const runs = RUNS.filter((r) => (picked.length ? picked.includes(r.name) : true)
  && (!scenarioArg || Boolean(r.client) === [...CLIENT_SCENARIOS, ...AUTH_SCENARIOS].includes(scenarioArg)));
const version = JSON.parse(fs.readFileSync(path.join(here, 'node_modules/@modelcontextprotocol/conformance/package.json'))).version;
console.log(`mcpgw ${mcpgwBin()}; @modelcontextprotocol/conformance ${version}, node ${process.versions.node}`);

// The expected-failure list's entries (`- scenario  # reason`) of a section.
function listed(file, section) {
  const out = [];
  let inSection = false;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (/^\S/.test(line)) inSection = line.startsWith(`${section}:`);
    const m = inSection && /^\s+-\s+([^\s#]+)/.exec(line);
    if (m) out.push(m[1]);
  }
  return out;
}

// The scenarios a requirement set scores (the rest are run but not scored).
function scored(requirements, kind) {
  return new Promise((resolve, reject) => {
    const p = spawn(node, [cli, 'list', `--${kind}`, '--requirements', requirements], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (b) => { out += b; });
    p.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`conformance list exited ${code}`));
      const head = kind === 'server' ? 'Server scenarios' : 'Client scenarios';
      const block = out.split('\n\n').find((b) => b.trimStart().startsWith(head)) ?? '';
      resolve(block.split('\n').map((l) => /^\s+-\s+(\S+)/.exec(l)?.[1]).filter(Boolean));
    });
  });
}

// Runs the conformance CLI; its output goes to logPath, and to the terminal
// too when `echo`. Resolves with its exit status and output.
function conformance(args, logPath, echo) {
  return new Promise((resolve) => {
    const p = spawn(node, [cli, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const log = fs.openSync(logPath, 'a');
    const take = (b) => { out += b; fs.writeSync(log, b); if (echo) process.stdout.write(b); };
    p.stdout.on('data', take);
    p.stderr.on('data', take);
    p.on('exit', (code, signal) => { fs.closeSync(log); resolve({ status: code ?? (signal ? 128 : 1), out }); });
  });
}

// Per scenario: FAIL when a check failed or warned (what the baseline counts
// as failing), with the checks' messages.
function collect(resultsDir, prefix = '', rows = new Map()) {
  for (const d of fs.existsSync(resultsDir) ? fs.readdirSync(resultsDir).sort() : []) {
    const m = /^(?:server-)?(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(d);
    const file = path.join(resultsDir, d, 'checks.json');
    // A scenario named "auth/x" leaves its results under auth/.
    if (!m && d === 'auth') collect(path.join(resultsDir, d), 'auth/', rows);
    if (!m || !fs.existsSync(file)) continue;
    const checks = JSON.parse(fs.readFileSync(file, 'utf8'));
    const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
    rows.set(prefix + m[1], {
      failed: bad.length > 0,
      passed: checks.filter((c) => c.status === 'SUCCESS').length,
      failures: checks.filter((c) => c.status === 'FAILURE').length,
      warnings: checks.filter((c) => c.status === 'WARNING').length,
      note: bad.map((c) => `${c.id}: ${c.errorMessage ?? c.status}`).join('; '),
    });
  }
  return rows;
}

// mcpgw's configuration for the server runs. The relay tools send requests
// back to the client (sampling, elicitation). mcpgw relays such a request to
// the session whose call caused it; on a leased instance that is always the
// session's own call, on a shared one only when no other session has a call
// in flight there. So they live on a leased server (one instance per MCP
// session), everything else on a shared one. The backend serves both
// revisions, and mcpgw's `protocol: auto` would speak 2026-07-28 to it; but
// the relay tools are 2025-era ones (a server request mid-call has no place
// in 2026-07-28), so `relay` is spoken to in 2025-11-25. The 2025-11-25 run
// keeps `conf` on 2025-11-25 too, so that it checks the path from a 2025
// session to a 2025 server end to end; the 2026-07-28 runs check 2026-07-28
// on both sides. The leased runs make `conf` leased as well, as every
// server is by default: the suite names no dialog, so its 2026-07-28
// requests reach the dialog of their client (gateway.mcp_default_dialog).
const relayTools = ['test_sampling', 'test_elicitation', 'test_elicitation_sep1034_defaults', 'test_elicitation_sep1330_enums'];
function gatewayConfig(dir, upstreamUrl, confProtocol, leased) {
  const upstream = upstreamUrl
    ? `transport: streamable_http\n    url: ${q(upstreamUrl)}`
    : `command: ${q(node)}\n    args: [${q(backend)}]`;
  const conf = leased
    ? `  # Leased (the default): the instance of the request's dialog serves
  # tools, resources, prompts, completions.
  conf:`
    : `  # Shared: one instance serves every session (no dialog needed): tools,
  # resources, prompts, completions.
  conf:
    truely-stateless: true`;
  return `# written by test/conformance/run.mjs
version: 1
gateway:
  artifacts_dir: ${q(path.join(dir, 'artifacts'))}
  warm_spares: 1
servers:
${conf}
    required: true
    protocol: ${confProtocol}
    ${upstream}
    tools:
      blacklist: [${relayTools.map(q).join(', ')}]
  # Leased: each MCP session (= dialog) gets its own instance, so a sampling
  # or elicitation request can only belong to that session's call.
  relay:
    required: true
    protocol: legacy
    ${upstream}
    load_prompts: false
    load_resources: false
    tools:
      whitelist: [${relayTools.map(q).join(', ')}]
`;
}

async function serverRun(run, out, expectedFile) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpgw-conformance-'));
  let be = null;
  let gw = null;
  try {
    if (run.upstream === 'http') be = await startHttpBackend({ cwd: dir, logPath: path.join(out, 'backend.log') });
    const configPath = path.join(dir, 'mcp.yaml');
    fs.writeFileSync(configPath, gatewayConfig(dir, be?.url, run.requirements === '2025-11-25' ? 'legacy' : 'auto', run.leased));
    fs.copyFileSync(configPath, path.join(out, 'mcp.yaml'));
    gw = await startGateway(configPath, { cwd: dir, logPath: path.join(out, 'mcpgw.log') });
    const args = ['server', '--url', `http://127.0.0.1:${gw.port}/mcp`, '-o', path.join(out, 'results')];
    if (!scenarioArg) args.push('--requirements', run.requirements, '--expected-failures', expectedFile);
    else if (!extra.includes('--spec-version')) args.push('--spec-version', run.requirements);
    args.push(...extra);
    console.log(`$ node ${args.map((a) => (path.isAbsolute(a) && !rel(a).startsWith('..') ? rel(a) : a)).join(' ')}`);
    const r = await conformance(args, path.join(out, 'cli.log'), Boolean(scenarioArg));
    const g = await gw.stop();
    gw = null;
    if (g.code !== 0) {
      console.error(`run.mjs: mcpgw did not stop cleanly: ${q(g)}`);
      if (r.status === 0) r.status = 1;
    }
    return r;
  } finally {
    await gw?.stop();
    await be?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// One `conformance client` per scenario: each starts the suite's test server
// and client.mjs, which puts mcpgw in front of it.
async function clientRun(run, out, expectedFile) {
  const scenarios = scenarioArg ? [scenarioArg] : run.scenarios ?? CLIENT_SCENARIOS;
  process.env.MCPGW_CONFORMANCE_OUT = out;
  let status = 0;
  let text = '';
  for (const s of scenarios) {
    const args = ['client', '--command', `${node} ${path.join(here, 'client.mjs')}`, '--scenario', s,
      ...(run.requirements ? ['--spec-version', run.requirements] : []), '-o', path.join(out, 'results')];
    if (!scenarioArg) args.push('--expected-failures', expectedFile);
    args.push(...extra.filter((a, i) => a !== '--scenario' && extra[i - 1] !== '--scenario'));
    const r = await conformance(args, path.join(out, 'cli.log'), Boolean(scenarioArg));
    text += r.out;
    if (r.status !== 0) status = r.status;
  }
  // client.mjs reports an unclean mcpgw stop (a crash, a sanitizer report)
  // on its stderr, which the suite saves but does not judge.
  const results = path.join(out, 'results');
  for (const d of fs.readdirSync(results)) {
    const f = path.join(results, d, 'stderr.txt');
    if (fs.existsSync(f) && fs.readFileSync(f, 'utf8').includes('mcpgw did not stop cleanly')) {
      console.error(`run.mjs: ${d}: mcpgw did not stop cleanly (see ${rel(f)})`);
      if (status === 0) status = 1;
    }
  }
  return { status, out: text };
}

const lines = [];
let worst = 0;
for (const run of runs) {
  const out = path.join(outRoot, run.name);
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(path.join(out, 'results'), { recursive: true });
  const expectedFile = path.join(here, `expected-failures.${run.name}.yaml`);
  const section = run.client ? 'client' : 'server';
  console.log(`\n=== ${run.name} ===`);
  const t0 = Date.now();
  let r;
  try {
    r = run.client ? await clientRun(run, out, expectedFile) : await serverRun(run, out, expectedFile);
  } catch (e) {
    console.error(`run.mjs: ${run.name}: ${e.message}`);
    r = { status: 2, out: '' };
  }
  const secs = Math.round((Date.now() - t0) / 1000);

  const rows = collect(path.join(out, 'results'));
  const want = scenarioArg ? [scenarioArg]
    : run.client ? run.scenarios ?? CLIENT_SCENARIOS : await scored(run.requirements, section);
  const expected = new Set(listed(expectedFile, section));
  const table = ['| scenario | result | checks passed | failed | warnings | expected to fail | failures and warnings |', '| --- | --- | --- | --- | --- | --- | --- |'];
  let pass = 0;
  let fail = 0;
  let unexpected = 0;
  let stale = 0;
  const perScenario = [];
  for (const s of want) {
    const row = rows.get(s);
    const failed = !row || row.failed;
    if (failed) fail++; else pass++;
    if (failed && !expected.has(s)) unexpected++;
    if (!failed && expected.has(s)) stale++;
    const note = row ? row.note : 'no result';
    perScenario.push(`${failed ? '✗' : '✓'} ${s}: ${row?.passed ?? 0} passed, ${row?.failures ?? 0} failed, ${row?.warnings ?? 0} warnings`
      + `${expected.has(s) ? (failed ? ' (expected)' : ' (listed as failing: remove it)') : failed ? ' (UNEXPECTED)' : ''}`);
    table.push(`| ${s} | ${failed ? 'FAIL' : 'pass'} | ${row?.passed ?? 0} | ${row?.failures ?? 0} | ${row?.warnings ?? 0} | ${expected.has(s) ? 'yes' : ''} | ${note.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`);
  }
  fs.writeFileSync(path.join(out, 'summary.md'), table.join('\n') + '\n');
  if (!scenarioArg) {
    // The tool's own verdict: its summary and the baseline comparison (the
    // client run calls it once per scenario, so one line each from here).
    const i = r.out.lastIndexOf('=== SUMMARY ===');
    const tail = run.client ? perScenario.join('\n')
      : i >= 0 ? r.out.slice(i) : r.out.split('\n').slice(-30).join('\n');
    console.log(tail.trimEnd());
  }
  console.log(`(per scenario: ${rel(path.join(out, 'summary.md'))}; tool output: ${rel(path.join(out, 'cli.log'))})`);
  // The tool judges only what it ran and saw; a scored scenario that left no
  // result, or a count that disagrees with the list, fails the run here.
  const why = [];
  if (r.status !== 0) why.push(`exit ${r.status}`);
  if (!scenarioArg && unexpected) why.push(`${unexpected} unexpected`);
  if (!scenarioArg && stale) why.push(`${stale} listed but passing`);
  if (why.length) worst = worst || r.status || 1;
  const verdict = why.length ? `FAILED (${why.join(', ')})` : 'ok';
  lines.push(`conformance ${run.name}: ${want.length} scenarios, ${pass} pass, ${fail} fail `
    + `(${fail - unexpected} expected, ${unexpected} unexpected), ${stale} listed but passing, ${secs} s: ${verdict}`);
}
console.log(`\n${lines.join('\n')}`);
process.exit(worst);
