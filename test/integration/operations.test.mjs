// Operations (issue "Operations"): sd_notify, /metrics, access and journald
// logs, and several gateways behind HAProxy keeping each dialog on one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { start, waitFor, sleep, fixtures, tmpdir, request, slow, track } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const have = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

test('sd_notify: READY after the first load, RELOADING/READY around a reload, STOPPING', async (t) => {
  const dir = tmpdir();
  const sock = path.join(dir, 'notify.sock');
  const listener = track(spawn(path.join(fixtures, 'notify_listen'), [sock]));
  t.after(() => listener.kill('SIGKILL'));
  let got = '';
  listener.stdout.on('data', (b) => { got += b; });
  await waitFor(() => got.includes('listening'));
  const d = await start(`version: 1\nservers:\n  s:\n    truely-stateless: true\n    command: ${FIXTURE}\n`,
    { env: { NOTIFY_SOCKET: sock } });
  t.after(() => d.stop());
  await waitFor(() => /READY=1/.test(got));
  assert.match(got, /STATUS=/);
  const before = got.length;
  d.child.kill('SIGHUP');
  await waitFor(() => /RELOADING=1\|MONOTONIC_USEC=\d+/.test(got.slice(before)) && /READY=1/.test(got.slice(before)));
  const r = await d.stop('SIGTERM');
  assert.equal(r.code, 0);
  await waitFor(() => /STOPPING=1/.test(got));
  // The child never sees NOTIFY_SOCKET.
  assert.ok(!d.stderr.includes('NOTIFY_SOCKET='));
});

// libcurl (and libcrypto with it) is loaded at its first use: a daemon
// with stdio servers only and no tracing never pays for it, its shutdown
// included (the trace exporter's close once loaded it to free nothing).
test('stdio servers only: libcurl is never loaded, from the start to the stop', async (t) => {
  const d = await start(`version: 1\nservers:\n  s:\n    command: ${FIXTURE}\n`, { waitReady: true, args: ['--log-level', 'info'] });
  t.after(() => d.stop());
  const tool = (await d.get('/v1/tools')).json.tools.find((x) => x.toolset === 's');
  assert.equal((await d.post(`/v1/tools/${tool.name}/call`, { dialog: 'a', arguments: {} })).status, 200);
  const r = await d.stop('SIGTERM');
  assert.equal(r.code, 0);
  assert.match(d.stderr, /msg=stopped/);
  assert.doesNotMatch(d.stderr, /libcurl loaded/);
});

test('/metrics is valid Prometheus text with the documented series', async (t) => {
  const d = await start(`version: 1\nservers:\n  s:\n    command: ${FIXTURE}\n`, { waitReady: true });
  t.after(() => d.stop());
  await d.post('/v1/tools/echo/call', { dialog: 'm1', arguments: { text: 'x' } });
  await d.post('/v1/tools/nope/call', { dialog: 'm1' });
  const r = await d.get('/metrics');
  assert.equal(r.status, 200);
  assert.match(r.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  for (const name of ['mcpgw_tool_calls_total', 'mcpgw_tool_call_duration_seconds_bucket', 'mcpgw_tool_calls_in_flight',
    'mcpgw_leases_active', 'mcpgw_instances', 'mcpgw_instance_restarts_total', 'mcpgw_reloads_total',
    'mcpgw_catalog_version', 'mcpgw_problems', 'mcpgw_http_requests_total', 'process_resident_memory_bytes',
    'process_open_fds', 'mcpgw_uptime_seconds']) {
    assert.match(r.body, new RegExp(`^# TYPE ${name.replace(/_bucket$/, '')} `, 'm'), name);
  }
  assert.match(r.body, /^mcpgw_tool_calls_total\{front="rest",server="s",tool="echo",status="ok"\} 1$/m);
  assert.match(r.body, /^mcpgw_leases_active\{server="s"\} 1$/m);
  assert.match(r.body, /^mcpgw_http_requests_total\{route="\/v1\/tools\/\*\/call",code="404"\} 1$/m);
  if (!have('promtool')) {
    t.diagnostic('promtool not installed: skipping promtool check metrics (make deps installs it)');
    return;
  }
  const check = spawnSync('promtool', ['check', 'metrics'], { input: r.body });
  assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);
});

test('/mcp tool calls are counted once, with front="mcp", and /mcp requests under their route', async (t) => {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const d = await start(`version: 1\nservers:\n  s:\n    truely-stateless: true\n    command: ${FIXTURE}\n`, { waitReady: true });
  t.after(() => d.stop());
  const client = new Client({ name: 'metrics-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${d.port}/mcp`)));
  t.after(() => client.close());
  await client.callTool({ name: 'echo', arguments: { text: 'a' } });
  await client.callTool({ name: 'echo', arguments: { text: 'b' } });
  await d.post('/v1/tools/echo/call', { arguments: { text: 'c' } });
  const r = await d.get('/metrics');
  assert.match(r.body, /^mcpgw_tool_calls_total\{front="mcp",server="s",tool="echo",status="ok"\} 2$/m);
  assert.match(r.body, /^mcpgw_tool_calls_total\{front="rest",server="s",tool="echo",status="ok"\} 1$/m);
  assert.match(r.body, /^mcpgw_tool_call_duration_seconds_count\{front="mcp",server="s"\} 2$/m);
  assert.match(r.body, /^mcpgw_http_requests_total\{route="\/mcp",code="200"\} \d+$/m);
  assert.doesNotMatch(r.body, /route="other"/);
  if (have('promtool')) {
    const check = spawnSync('promtool', ['check', 'metrics'], { input: r.body });
    assert.equal(check.status, 0, `${check.stdout}${check.stderr}`);
  }
});

test('logs: an access line per request; journald priorities under JOURNAL_STREAM', async (t) => {
  const d = await start('version: 1\n', { env: { JOURNAL_STREAM: '8:1234' } });
  t.after(() => d.stop());
  await d.get('/healthz');
  await d.get('/nope');
  await d.waitLog(/msg=http method=GET path=\/nope status=404 duration_ms=\d+ peer=127\.0\.0\.1:\d+/);
  for (const line of d.stderr.trim().split('\n')) assert.match(line, /^<[3-7]>ts=/, line);
});

test('two gateways behind HAProxy: a dialog\'s REST calls, 2025 sessions and 2026-07-28 requests stay on one gateway, by header or URL', async (t) => {
  if (!have('haproxy')) {
    t.skip('haproxy not installed (make deps installs it)');
    return;
  }
  const cfg = `version: 1\nservers:\n  s:\n    command: ${FIXTURE}\n`;
  const g1 = await start(cfg, { waitReady: true });
  t.after(() => g1.stop());
  const g2 = await start(cfg, { waitReady: true });
  t.after(() => g2.stop());
  const port = await new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => { const p = srv.address().port; srv.close(() => resolve(p)); });
  });
  const dir = tmpdir();
  const hcfg = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(hcfg, `global
  maxconn 256
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
frontend gw
  bind 127.0.0.1:${port}
  default_backend gateways
backend gateways
  http-request set-var(txn.dialog) req.hdr(X-Mcpgw-Dialog)
  http-request set-var(txn.dialog) path,regsub(^/mcp/d/,) if !{ var(txn.dialog) -m found } { path_beg /mcp/d/ }
  balance hash var(txn.dialog)
  hash-type consistent
  server g1 127.0.0.1:${g1.port}
  server g2 127.0.0.1:${g2.port}
`);
  const hp = track(spawn('haproxy', ['-db', '-f', hcfg], { stdio: ['ignore', 'ignore', 'pipe'] }));
  let hpErr = '';
  hp.stderr.on('data', (b) => { hpErr += b; });
  t.after(() => { try { process.kill(hp.pid, 'SIGKILL'); } catch { /* gone */ } });
  await waitFor(() => new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => { s.destroy(); resolve(true); });
    s.on('error', () => resolve(false));
  }), 10000 * slow, 100).catch((e) => { throw new Error(`${e.message}\n${hpErr}`); });
  const dialogs = Array.from({ length: 12 }, (_, i) => `hp${i}`);
  for (let round = 0; round < 4; round++) {
    for (const dialog of dialogs) {
      const r = await request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/tools/echo/call',
        headers: { 'content-type': 'application/json', 'x-mcpgw-dialog': dialog },
        body: JSON.stringify({ arguments: { text: dialog } }) });
      assert.equal(r.status, 200, r.body);
      assert.equal(r.json.contentItems[0].text, dialog);
      assert.equal(Boolean(r.json.lease.reminder), round === 0, 'the reminder comes only with the first lease');
    }
  }
  // MCP sessions opened on /mcp/d/{dialog} land where the dialog's REST
  // calls did, and share their instance.
  for (const dialog of dialogs.slice(0, 6)) {
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp/d/${dialog}`));
    const client = new Client({ name: 'hp', version: '1' });
    await client.connect(transport);
    const r = await client.callTool({ name: 'echo', arguments: { text: `mcp ${dialog}` } });
    assert.equal(r.content[0].text, `mcp ${dialog}`);
    await client.close();
  }
  // 2026-07-28 requests carry the dialog the same ways (no session at all):
  // the header for half of the rest, the URL for the others.
  for (const [i, dialog] of dialogs.slice(6).entries()) {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    const r = await request({ host: '127.0.0.1', port, method: 'POST', path: i % 2 ? `/mcp/d/${dialog}` : '/mcp',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call', 'mcp-name': 'echo', ...(i % 2 ? {} : { 'x-mcpgw-dialog': dialog }) },
      body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { text: `modern ${dialog}` }, _meta: meta } }) });
    assert.equal(r.status, 200, r.body);
    assert.equal(r.json.result.content[0].text, `modern ${dialog}`);
  }
  const d1 = (await g1.get('/v1/dialogs')).json.dialogs, d2 = (await g2.get('/v1/dialogs')).json.dialogs;
  const on1 = new Set(d1.map((x) => x.dialog)), on2 = new Set(d2.map((x) => x.dialog));
  for (const dialog of dialogs) {
    assert.ok(on1.has(dialog) !== on2.has(dialog), `${dialog} lives on exactly one gateway`);
    assert.equal([...d1, ...d2].find((x) => x.dialog === dialog).leases.length, 1, `${dialog}: one lease for REST and MCP`);
  }
  assert.ok(on1.size > 0 && on2.size > 0, `both gateways serve dialogs (${on1.size}/${on2.size})`);
});
