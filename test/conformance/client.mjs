#!/usr/bin/env node
// mcpgw as the client under test of `conformance client`: the suite starts
// its test server for a scenario and runs
//
//   node client.mjs <test server URL>
//
// with MCP_CONFORMANCE_SCENARIO (and, for some scenarios,
// MCP_CONFORMANCE_CONTEXT) in the environment. This writes a gateway
// configuration with that server as a streamable_http upstream, starts
// build/mcpgw (or $MCPGW_BIN) on a loopback port, lets it connect and list,
// then drives what the scenario asks a client to do through mcpgw's REST API
// (`POST /v1/tools/{name}/call`; resources and prompts through /mcp, which
// has them), and stops it. What the upstream side sent is what the test
// server judges. run.mjs runs it for CLIENT_SCENARIOS (run
// client-2026-07-28); one scenario by hand:
//
//   node run.mjs --run client-2026-07-28 --scenario tools_call
//
// The daemon's log goes to $MCPGW_CONFORMANCE_OUT/mcpgw-<scenario>.log
// (run.mjs sets it to build/conformance/client-2026-07-28), else to a
// temporary directory. Each step is reported on stderr, which the suite saves.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { q, request, startGateway } from './lib.mjs';

// The client scenarios of the 2026-07-28 requirement set that concern a
// gateway's upstream connection (no auth), and the 2020-12 schema one that
// was added after that set was frozen.
export const CLIENT_SCENARIOS = [
  'tools_call',
  'request-metadata',
  'http-standard-headers',
  'http-custom-headers',
  'http-invalid-tool-headers',
  'json-schema-ref-no-deref',
  'sep-2322-client-request-state',
  'json-schema-2020-12-preservation',
];

// The authorization scenarios (the suite's test server answers 401 and runs
// its own authorization server): mcpgw is the OAuth client, this driver
// plays the browser (authorize), then the scenario runs as tools_call does.
export const AUTH_SCENARIOS_2025 = [
  'auth/metadata-default', 'auth/metadata-var1', 'auth/metadata-var2', 'auth/metadata-var3',
  'auth/basic-cimd', 'auth/scope-from-www-authenticate', 'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined', 'auth/scope-step-up', 'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic', 'auth/token-endpoint-auth-post', 'auth/token-endpoint-auth-none',
  'auth/pre-registration',
];
export const AUTH_SCENARIOS_2026 = [
  ...AUTH_SCENARIOS_2025,
  'auth/resource-mismatch', 'auth/offline-access-scope', 'auth/offline-access-not-supported',
  'auth/authorization-server-migration', 'auth/iss-supported', 'auth/iss-not-advertised',
  'auth/iss-supported-missing', 'auth/iss-wrong-issuer', 'auth/iss-unexpected',
  'auth/iss-normalized', 'auth/metadata-issuer-mismatch',
];
// grant: client_credentials (no browser), with client_secret_basic and with
// private_key_jwt (the suite hands over an ES256 key in PEM).
export const AUTH_SCENARIOS_EXTENSION = ['auth/client-credentials-basic', 'auth/client-credentials-jwt'];
export const AUTH_SCENARIOS = [...AUTH_SCENARIOS_2026, ...AUTH_SCENARIOS_EXTENSION];

// The browser: mcpgw's authorize link, then every redirect (the test
// authorization server approves at once) until mcpgw's own page.
async function browse(url) {
  for (let i = 0; i < 8; i++) {
    const r = await fetch(url, { redirect: 'manual' });
    const text = await r.text();
    say(`browser GET ${url.replace(/([?&](code|state)=)[^&]*/g, '$1…')}: ${r.status}`);
    if (r.status < 300 || r.status >= 400) return { status: r.status, text };
    url = new URL(r.headers.get('location'), url).toString();
  }
  return { status: 0, text: 'too many redirects' };
}

// As a person would: authorize whenever the server asks again (a new
// authorization server, a grant that stopped working), three times at most.
async function authorize(port) {
  for (let round = 0; round < 3; round++) {
    const servers = await request(port, 'GET', '/v1/servers');
    const up = servers.body?.servers?.find((s) => s.id === 'up');
    if (up?.state !== 'needs_authorization') return;
    const page = await browse(up.authorize);
    say(`authorization page: ${page.status} ${short(page.text.replace(/<[^>]*>/g, ' '))}`);
    for (let i = 0; i < 100; i++) {
      const r = await request(port, 'GET', '/v1/servers');
      const s = r.body?.servers?.find((x) => x.id === 'up');
      if (s?.state === 'ready' || s?.state === 'failed' || (s?.state === 'needs_authorization' && i > 20)) {
        say(`upstream state after authorizing: ${s.state}${s.lastError ? `, ${short(s.lastError)}` : ''}`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

// How long one scenario may take here, below the suite's 30 s per scenario.
const DEADLINE_MS = 25000;
const say = (msg) => process.stderr.write(`client.mjs: ${msg}\n`);
const short = (v) => { const s = typeof v === 'string' ? v : JSON.stringify(v); return s.length > 600 ? `${s.slice(0, 600)}…` : s; };

// Drives one scenario against a gateway on `port` whose only server is `up`.
async function drive(scenario, context, port) {
  if (scenario.startsWith('auth/')) await authorize(port);
  const listing = await request(port, 'GET', '/v1/tools');
  const tools = listing.status === 200 ? listing.body.tools.filter((t) => t.server === 'up') : [];
  say(`GET /v1/tools: ${listing.status}, upstream tools: ${q(tools.map((t) => t.originalName))}`);
  const byOriginal = new Map(tools.map((t) => [t.originalName, t]));

  // A 409 input_required is answered as a person would through REST (an
  // elicitation accepted with what its schema asks, as true), and the call
  // repeated with the round's requestState: mcpgw then retries upstream.
  async function call(original, args = {}) {
    const t = byOriginal.get(original);
    if (!t) { say(`tool ${q(original)} not in mcpgw's catalog; not called`); return null; }
    let body = { arguments: args };
    for (let round = 0; round < 5; round++) {
      const r = await request(port, 'POST', `/v1/tools/${encodeURIComponent(t.name)}/call`, body, 10000)
        .catch((e) => ({ status: 0, body: e.message }));
      say(`POST /v1/tools/${t.name}/call ${short(body)}: ${r.status} ${short(r.body)}`);
      if (r.status !== 409 || r.body?.error?.code !== 'input_required') return r;
      const inputResponses = {};
      for (const [key, req] of Object.entries(r.body.inputRequests ?? {})) {
        const props = Object.keys(req.params?.requestedSchema?.properties ?? {});
        inputResponses[key] = req.method === 'elicitation/create'
          ? { action: 'accept', content: Object.fromEntries(props.map((p) => [p, true])) }
          : {};
      }
      body = { arguments: args, inputResponses, requestState: r.body.requestState };
    }
    return null;
  }

  switch (scenario) {
    case 'tools_call':
      await call('add_numbers', { a: 5, b: 3 });
      break;
    case 'request-metadata':
    case 'json-schema-ref-no-deref':
      // Connecting and listing (done at start) is what these judge.
      break;
    case 'http-standard-headers':
      if (tools[0]) await call(tools[0].originalName, {});
      await viaMcp(port);
      break;
    case 'http-custom-headers':
      for (const c of context.toolCalls ?? []) await call(c.name, c.arguments ?? {});
      break;
    case 'http-invalid-tool-headers':
      // Only the tools mcpgw kept: a client must drop those whose
      // x-mcp-header annotations are invalid.
      for (const t of tools) await call(t.originalName, { region: 'us-west1' });
      break;
    case 'sep-2322-client-request-state':
      for (const name of ['test_mrtr_echo_state', 'test_mrtr_no_state', 'test_mrtr_unrelated', 'test_mrtr_no_result_type']) await call(name, {});
      break;
    case 'json-schema-2020-12-preservation': {
      const focal = tools.find((t) => t.originalName !== 'json_schema_echo');
      if (focal) await call('json_schema_echo', { schema: focal.inputSchema });
      break;
    }
    default:
      if (scenario.startsWith('auth/')) {
        if (!tools[0]) break;
        const r = await call(tools[0].originalName, {});
        // A call refused for want of scopes (403 insufficient_scope) puts
        // the server back in needs_authorization: authorize, call again.
        if (r?.status !== 200) {
          await authorize(port);
          await call(tools[0].originalName, {});
        }
        break;
      }
      say(`no steps for scenario ${q(scenario)}: started and listed only`);
  }
}

// resources/list + read and prompts/list + get of the first of each, through
// mcpgw's /mcp (2025-11-25 on that side), which relays them upstream.
async function viaMcp(port) {
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  const client = new Client({ name: 'mcpgw-conformance-driver', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
  try {
    await client.connect(transport);
    const { resources = [] } = await client.listResources().catch((e) => { say(`/mcp resources/list: ${e.message}`); return {}; });
    say(`/mcp resources/list: ${q(resources.map((r) => r.uri))}`);
    if (resources[0]) {
      const r = await client.readResource({ uri: resources[0].uri }).catch((e) => e.message);
      say(`/mcp resources/read ${resources[0].uri}: ${short(r)}`);
    }
    const { prompts = [] } = await client.listPrompts().catch((e) => { say(`/mcp prompts/list: ${e.message}`); return {}; });
    say(`/mcp prompts/list: ${q(prompts.map((p) => p.name))}`);
    if (prompts[0]) {
      const r = await client.getPrompt({ name: prompts[0].name, arguments: {} }).catch((e) => e.message);
      say(`/mcp prompts/get ${prompts[0].name}: ${short(r)}`);
    }
  } catch (e) {
    say(`/mcp: ${e.message}`);
  } finally {
    await client.close().catch(() => {});
  }
}

async function main(url) {
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpgw-conformance-client-'));
  const logDir = process.env.MCPGW_CONFORMANCE_OUT || dir;
  const logPath = path.join(logDir, `mcpgw-${scenario.replace(/[^A-Za-z0-9_.-]/g, '_')}.log`);
  const configPath = path.join(dir, 'mcp.yaml');
  // The key goes in a file of its own, as an operator would keep it; the
  // method is left to mcpgw, which picks private_key_jwt from the metadata.
  const keyPath = path.join(dir, 'client-key.pem');
  if (context.private_key_pem) fs.writeFileSync(keyPath, context.private_key_pem, { mode: 0o600 });
  fs.writeFileSync(configPath, `# written by test/conformance/client.mjs for ${scenario}
version: 1
gateway:
  artifacts_dir: ${q(path.join(dir, 'artifacts'))}
  state_dir: ${q(path.join(dir, 'state'))}
  oauth:
    # The suite's authorization servers expect this client_id where they
    # support Client ID Metadata Documents (auth/basic-cimd).
    client_metadata_url: https://conformance-test.local/client-metadata.json
servers:
  up:
    truely-stateless: true
    transport: streamable_http
    url: ${q(url)}
${context.client_id ? `    oauth:\n      client_id: ${q(context.client_id)}\n${context.client_secret ? `      client_secret: ${q(context.client_secret)}\n` : ''}${context.private_key_pem ? `      private_key: {file: ${q(keyPath)}}\n` : ''}${scenario.startsWith('auth/client-credentials') ? '      grant: client_credentials\n' : ''}` : ''}`);
  say(`scenario ${q(scenario)}, test server ${url}, mcpgw log ${logPath}`);
  let gw = null;
  // The suite kills the shell it started this from after its own timeout
  // (30 s by default), which would leave this process and mcpgw behind: give
  // up first, and take mcpgw down by pid.
  setTimeout(() => {
    say(`no end within ${DEADLINE_MS / 1000} s; stopping`);
    if (gw && !gw.exited) gw.proc.kill('SIGKILL');
    process.exit(1);
  }, DEADLINE_MS).unref();
  try {
    // /readyz is 200 once the server's first start attempt ended, whether
    // it connected or not: a server the gateway cannot connect to is a
    // result to report, not a reason to stop.
    gw = await startGateway(configPath, { cwd: dir, logPath });
    const r = await request(gw.port, 'GET', '/v1/servers');
    const up = r.body?.servers?.find((s) => s.id === 'up');
    say(`upstream state: ${up?.state ?? 'unknown'}${up?.lastError ? `, last error: ${short(up.lastError)}` : ''}`);
    await drive(scenario, context, gw.port);
  } catch (e) {
    say(e.message);
    process.exitCode = 1;
  } finally {
    const r = await gw?.stop();
    if (r && r.code !== 0) say(`mcpgw did not stop cleanly: ${q(r)}`);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!process.argv[2]) {
    console.error('usage: client.mjs <MCP server URL>  (run by `conformance client`; see run.mjs)');
    process.exit(2);
  }
  await main(process.argv[2]);
}
