// Calls to a server that requires OAuth (docs/api.md, "OAuth", "Calls"):
// a server never authorized has no tools (a call is the usual 404); one
// whose grant stopped working keeps its tools, and a call answers REST
// 503 authorization_required with the authorize link, on /mcp a tool error
// with the link, a 2025-11-25 client that declared URL-mode elicitation
// -32042 (URLElicitationRequiredError), a 2026-07-28 request that declared
// it an input_required result with a URL elicitation. A step-up (403
// insufficient_scope) the authorization server never grants is asked for 3
// times at most: then the call names the scopes and no link is offered
// until a logout or a reload. Fixture: test/fixtures/oauth_server.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { start, waitFor, tmpdir, slow } from './lib/harness.mjs';
import { oauthServer, browse } from './lib/oauth.mjs';

const yaml = (url) => `version: 1\nservers:\n  secured:\n    transport: streamable_http\n    url: ${url}\n`;
const server = async (d) => (await d.get('/v1/servers')).json.servers.find((s) => s.id === 'secured');
const toolNames = async (d) => (await d.get('/v1/tools')).json.tools.map((t) => t.name);
const call = (d) => d.post('/v1/tools/whoami/call', { dialog: 'd1', arguments: {} });
const MODERN = '2026-07-28';
const ACCEPT = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

// A JSON-RPC answer, sent as JSON or as the last message of an SSE stream.
function answer(r) {
  if (r.json) return r.json;
  const data = r.body.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)));
  return data.find((m) => m.id !== undefined && (m.result || m.error));
}

// A 2025-11-25 session with these client capabilities; resolves a
// function that makes one tools/call of whoami and resolves its answer.
async function legacyClient(d, capabilities) {
  const post = (body, headers = {}) => d.request('POST', '/mcp', { body: JSON.stringify(body), headers: { ...ACCEPT, ...headers } });
  const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } } });
  assert.equal(init.status, 200, init.body);
  const h = { 'mcp-session-id': init.headers['mcp-session-id'], 'mcp-protocol-version': '2025-11-25' };
  assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, h)).status, 202);
  return async () => answer(await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } }, h));
}

// One 2026-07-28 tools/call of whoami with these client capabilities.
async function modernCall(d, capabilities) {
  const params = {
    name: 'whoami', arguments: {},
    _meta: {
      'io.modelcontextprotocol/protocolVersion': MODERN,
      'io.modelcontextprotocol/clientCapabilities': capabilities,
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
    },
  };
  const r = await d.request('POST', '/mcp', {
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params }),
    headers: { ...ACCEPT, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'whoami', 'x-mcpgw-dialog': 'm1' },
  });
  assert.equal(r.status, 200, r.body);
  return answer(r);
}

test('a grant that stopped working keeps the tools: REST 503 with the link, /mcp tool error, -32042, 2026-07-28 URL input request', async (t) => {
  const as = await oauthServer();
  t.after(() => as.stop());
  const d = await start(yaml(as.url), { env: { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' } });
  t.after(() => d.stop());

  // Never authorized: no tools, a call is the usual 404.
  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  const never = await call(d);
  assert.equal(never.status, 404, never.body);
  assert.equal(never.json.error.code, 'unknown_tool');

  const link = `http://${d.addr}/v1/servers/secured/authorize`;
  assert.equal((await browse(link)).status, 200);
  await waitFor(async () => (await toolNames(d)).includes('whoami'));
  assert.equal((await call(d)).status, 200);

  // The grant is withdrawn: the server waits for a person, its tools stay.
  assert.equal((await d.request('DELETE', '/v1/servers/secured/authorize')).status, 200);
  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  assert.ok((await toolNames(d)).includes('whoami'), 'the tools of a lapsed grant stay listed');

  const message = `the server requires authorization: open ${link} in a browser`;
  const rest = await call(d);
  assert.equal(rest.status, 503, rest.body);
  assert.deepEqual(rest.json, { error: { code: 'authorization_required', message, authorize: link } });

  // /mcp, a client without URL-mode elicitation: a tool error with the link.
  const plain = await (await legacyClient(d, { elicitation: {} }))();
  assert.deepEqual(plain.result, { content: [{ type: 'text', text: message }], isError: true });

  // 2025-11-25 with elicitation.url: URLElicitationRequiredError.
  const urlMode = await (await legacyClient(d, { elicitation: { form: {}, url: {} } }))();
  assert.equal(urlMode.result, undefined);
  assert.equal(urlMode.error.code, -32042);
  assert.equal(urlMode.error.message, message);
  assert.equal(urlMode.error.data.elicitations.length, 1);
  const [el] = urlMode.error.data.elicitations;
  assert.equal(el.mode, 'url');
  assert.equal(el.url, link);
  assert.equal(el.message, message);
  assert.match(el.elicitationId, /^mcpgw-authorize-secured-\d+$/);

  // 2026-07-28: an input request of a URL elicitation, or the tool error
  // for a request that did not declare URL mode.
  const modern = await modernCall(d, { elicitation: { url: {} } });
  const { _meta, ...shown } = modern.result;
  assert.equal(_meta['io.modelcontextprotocol/serverInfo'].name, 'mcpgw');
  assert.deepEqual(shown, {
    resultType: 'input_required',
    inputRequests: { authorize: { method: 'elicitation/create', params: { mode: 'url', message, url: link } } },
  });
  const modernPlain = await modernCall(d, {});
  assert.equal(modernPlain.result.isError, true);
  assert.equal(modernPlain.result.content[0].text, message);

  // Authorized again, the same call goes through.
  assert.equal((await browse(link)).status, 200);
  await waitFor(async () => (await server(d)).state === 'ready', 20000 * slow);
  const again = await call(d);
  assert.equal(again.status, 200, again.body);
  assert.match(again.body, /called by client-1/);
});

test('a step-up the authorization server never grants: 3 authorization requests, then the scopes named and no link until a logout or a reload', async (t) => {
  const as = await oauthServer({ DEMAND: 'mcp:admin', WITHHOLD: '1' });
  t.after(() => as.stop());
  const d = await start(yaml(as.url), { env: { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  const link = `http://${d.addr}/v1/servers/secured/authorize`;
  const authorizations = () => as.events.filter((e) => e.event === 'authorize').length;

  // The start's authorization (mcp:tools): the tools appear.
  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  assert.equal((await browse(link)).status, 200);
  await waitFor(async () => (await server(d)).state === 'ready', 20000 * slow);

  // Each call meets 403 insufficient_scope: the call answers 503 with the
  // link, the person authorizes (asking for mcp:tools mcp:admin), the
  // server comes back without mcp:admin. Three times.
  for (let round = 1; round <= 3; round++) {
    const r = await call(d);
    assert.equal(r.status, 503, `round ${round}: ${r.body}`);
    assert.deepEqual(r.json.error, { code: 'authorization_required', message: `the server requires authorization: open ${link} in a browser`, authorize: link });
    await waitFor(async () => (await server(d)).state === 'needs_authorization');
    assert.equal((await server(d)).authorize, link);
    const page = await browse(link);
    assert.equal(page.status, 200, page.body);
    assert.equal(as.events.filter((e) => e.event === 'authorize').at(-1).query.scope, 'mcp:tools mcp:admin');
    await waitFor(async () => (await server(d)).state === 'ready', 20000 * slow);
  }
  assert.equal(authorizations(), 4);

  // The fourth 403: no more requests; the Problem and the call name the scopes.
  const given = `the server requires authorization, and 3 authorization requests did not get the scopes it asks for (mcp:tools mcp:admin): none is made until a reload or a logout (DELETE /v1/servers/secured/authorize)`;
  const last = await call(d);
  assert.equal(last.status, 503, last.body);
  assert.deepEqual(last.json, { error: { code: 'authorization_required', message: given } });
  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  const s = await server(d);
  assert.equal(s.authorize, undefined);
  assert.equal(s.lastError, given);
  assert.ok((await d.get('/v1/problems')).json.problems.some((p) => p.message === given), 'a Problem names the scopes');
  assert.deepEqual((await call(d)).json, { error: { code: 'authorization_required', message: given } });
  const refused = await d.get('/v1/servers/secured/authorize');
  assert.equal(refused.status, 409, refused.body);
  assert.equal(refused.json.error.code, 'authorization_limit');
  assert.match(refused.json.error.message, /3 authorization requests did not get the scopes mcp:tools mcp:admin/);
  const urlMode = await (await legacyClient(d, { elicitation: { url: {} } }))();
  assert.deepEqual(urlMode.result, { content: [{ type: 'text', text: given }], isError: true }, 'no URL elicitation without a link');
  assert.equal(authorizations(), 4);

  // A reload offers the link again.
  assert.equal((await d.post('/v1/reload', {})).status, 200);
  await waitFor(async () => (await server(d)).authorize === link);
  assert.equal((await call(d)).json.error.authorize, link);
  assert.equal((await d.get('/v1/servers/secured/authorize')).status, 302);

  // So does a logout, once the requests ran out again (the 302 above was
  // the first since the reload).
  assert.equal((await browse(link)).status, 200);
  await waitFor(async () => (await server(d)).state === 'ready', 20000 * slow);
  assert.equal((await call(d)).json.error.authorize, link);
  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  assert.equal((await browse(link)).status, 200);
  await waitFor(async () => (await server(d)).state === 'ready', 20000 * slow);
  assert.equal((await call(d)).json.error.authorize, undefined);
  await waitFor(async () => (await server(d)).state === 'needs_authorization');
  assert.equal((await d.request('DELETE', '/v1/servers/secured/authorize')).status, 200);
  await waitFor(async () => (await server(d)).authorize === link);
});
