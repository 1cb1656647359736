// A server's JSON-RPC error that quotes one of its secrets (security.md P6):
// a stdio server quoting its API key from env, an HTTP server quoting the
// Authorization header value it was sent, in the error's message and in
// its data (strings, nested strings and a member name). The secret shows
// as *** in the REST answer, the /mcp answers (a 2025-11-25 session's
// tools/call and resources/read, a 2026-07-28 tools/call), the log,
// /v1/servers, /v1/problems, /v1/events and the audit log; the error's
// code and shape are the server's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { start, waitFor, fixtures, sseReader } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const MODERN = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};
const JSON_ACCEPT = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

// Every piece of `secret` of 8 bytes or more: a surface that shows part of
// it shows one of these.
const pieces = (text, secret) => {
  const found = [];
  for (let i = 0; i + 8 <= secret.length; i++) {
    if (text.includes(secret.slice(i, i + 8))) found.push(secret.slice(i, i + 8));
  }
  return found;
};

// An HTTP MCP server (2025-11-25, JSON answers) whose one tool answers a
// JSON-RPC error quoting the Authorization header its request carried.
function echoingServer() {
  return http.createServer((req, res) => {
    let body = '';
    req.on('data', (b) => { body += b; });
    req.on('end', () => {
      let m;
      try { m = JSON.parse(body); } catch { res.writeHead(400).end(); return; }
      if (m.id === undefined) { res.writeHead(202).end(); return; }
      const send = (payload) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, ...payload }));
      };
      const auth = req.headers.authorization ?? '';
      if (m.method === 'initialize') {
        send({ result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'echoing', version: '1' } } });
      } else if (m.method === 'tools/list') {
        send({ result: { tools: [{ name: 'whoami', inputSchema: { type: 'object' } }] } });
      } else if (m.method === 'tools/call') {
        send({ error: { code: -32004, message: `token rejected: ${auth}`,
          data: { seen: auth, token: auth.split(' ')[1], nested: [[{ again: `header was "${auth}"` }]] } } });
      } else {
        send({ error: { code: -32601, message: 'Method not found' } });
      }
    });
  });
}

test('a JSON-RPC error quoting an env or header secret shows *** on every surface', async (t) => {
  const envSecret = 'sk-live-7f6e5d4c3b2a1908';
  const headerSecret = 'hdr-9a8b7c6d5e4f3a2b1c0d';
  const upstream = echoingServer();
  await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
  t.after(() => upstream.close());
  const dir = fs.mkdtempSync('/tmp/mcpgw-rpcmask-');
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const audit = path.join(dir, 'audit.jsonl');
  const yaml = `version: 1
gateway:
  audit:
    path: ${audit}
    arguments: full
servers:
  keyed:
    command: ${FIXTURE}
    args: [--call-error-env, API_KEY, --resources, rs]
    env: {API_KEY: {env: RPC_SECRET}}
    truely-stateless: true
  web:
    transport: streamable_http
    url: http://127.0.0.1:${upstream.address().port}/mcp
    headers: {Authorization: 'Bearer \${HDR_SECRET}'}
`;
  const d = await start(yaml, { env: { RPC_SECRET: envSecret, HDR_SECRET: headerSecret }, args: ['--log-level', 'debug'], waitReady: true });
  t.after(() => d.stop());
  let events = '';
  const req = http.get({ host: d.host, port: d.port, path: '/v1/events' }, (res) => {
    res.setEncoding('utf8');
    res.on('data', sseReader((ev) => { events += JSON.stringify(ev) + '\n'; }));
  });
  req.on('error', () => {});
  t.after(() => req.destroy());
  await waitFor(async () => {
    const names = (await d.get('/v1/tools')).json.tools.map((x) => x.name);
    return names.includes('echo') && names.includes('whoami');
  });

  // REST
  const restKeyed = await d.post('/v1/tools/echo/call', { dialog: 'd1', arguments: { text: 'x' } });
  const restWeb = await d.post('/v1/tools/whoami/call', { dialog: 'd1', arguments: {} });
  assert.match(restKeyed.body, /invalid key: API_KEY=\*\*\*/, restKeyed.body);
  assert.match(restWeb.body, /token rejected: (Bearer )?\*\*\*/, restWeb.body);

  // /mcp, a 2025-11-25 session: tools/call (the tool's failure) and a
  // routed resources/read (the server's error passed on, code and data).
  const init = await d.request('POST', '/mcp', { headers: JSON_ACCEPT, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) });
  assert.equal(init.status, 200, init.body);
  const h = { ...JSON_ACCEPT, 'mcp-session-id': init.headers['mcp-session-id'], 'mcp-protocol-version': '2025-11-25' };
  const post = (body) => d.request('POST', '/mcp', { headers: h, body: JSON.stringify(body) });
  assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
  const mcpKeyed = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } });
  const mcpWeb = await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'whoami', arguments: {} } });
  const mcpRead = await post({ jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri: 'rs://a' } });
  assert.match(mcpKeyed.body, /API_KEY=\*\*\*/, mcpKeyed.body);
  assert.match(mcpWeb.body, /token rejected: (Bearer )?\*\*\*/, mcpWeb.body);
  const readErr = JSON.parse(mcpRead.body).error;
  assert.equal(readErr.code, -32003, mcpRead.body);
  assert.equal(readErr.message, 'invalid key: API_KEY=***');
  assert.deepEqual(readErr.data, { sent: '***', tries: [{ header: 'Bearer ***' }], '***': true });

  // /mcp, a 2026-07-28 request
  const modern = (name, id) => d.request('POST', '/mcp', {
    headers: { ...JSON_ACCEPT, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: name === 'echo' ? { text: 'x' } : {}, _meta: META } }),
  });
  const modernKeyed = await modern('echo', 5);
  const modernWeb = await modern('whoami', 6);
  assert.match(modernKeyed.body, /API_KEY=\*\*\*/, modernKeyed.body);
  assert.match(modernWeb.body, /token rejected: (Bearer )?\*\*\*/, modernWeb.body);

  await waitFor(() => fs.existsSync(audit) && fs.readFileSync(audit, 'utf8').split('\n').filter(Boolean).length >= 6);
  const surfaces = {
    restKeyed: restKeyed.body,
    restWeb: restWeb.body,
    mcpKeyed: mcpKeyed.body,
    mcpWeb: mcpWeb.body,
    mcpRead: mcpRead.body,
    modernKeyed: modernKeyed.body,
    modernWeb: modernWeb.body,
    servers: JSON.stringify((await d.get('/v1/servers')).json),
    problems: JSON.stringify((await d.get('/v1/problems')).json),
    events,
    audit: fs.readFileSync(audit, 'utf8'),
    log: d.stderr,
  };
  for (const [name, text] of Object.entries(surfaces)) {
    for (const s of [envSecret, headerSecret]) assert.deepEqual(pieces(text, s), [], `${name} shows pieces of ${s}`);
  }
});
