#!/usr/bin/env node
// The stdio MCP server that mcpgw fronts during `make conformance`.
//
// It offers exactly what the server scenarios of @modelcontextprotocol/conformance
// (version pinned in package.json) call, with the behaviour each one checks.
// It follows the package's reference server (examples/servers/typescript/
// everything-server.ts in the conformance repository, tag v0.1.16), which is
// HTTP-only and not shipped on npm; this one speaks stdio so that mcpgw can
// spawn it. Tools, resources, prompts and completions are plain JSON here (no
// zod), so that the schemas the gateway relays are the ones written below.
//
// mcpgw runs two copies (see run.mjs): `conf`, shared by every session, serves
// everything but the tools that send requests back to the client; `relay`, one
// leased instance per MCP session, serves those (test_sampling,
// test_elicitation*). The tool set can be narrowed with mcpgw's whitelist, so
// this file does not need to know which copy it is.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ErrorCode,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

// 1x1 red PNG and a minimal WAV, as in the reference server.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (t) => ({ type: 'text', text: t });
const noArgs = { type: 'object', properties: {} };

const server = new Server(
  { name: 'mcpgw-conformance-backend', version: '1.0.0' },
  {
    capabilities: {
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      logging: {},
      completions: {},
    },
  },
);

// ---------------------------------------------------------------- tools

// Sends a server->client request on behalf of the call `extra` belongs to.
function ask(extra, method, params, schema) {
  return extra.sendRequest({ method, params }, schema);
}

const tools = [
  {
    name: 'test_simple_text',
    description: 'Tests simple text content response',
    inputSchema: noArgs,
    run: async () => ({ content: [text('This is a simple text response for testing.')] }),
  },
  {
    name: 'test_image_content',
    description: 'Tests image content response',
    inputSchema: noArgs,
    run: async () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }),
  },
  {
    name: 'test_audio_content',
    description: 'Tests audio content response',
    inputSchema: noArgs,
    run: async () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }),
  },
  {
    name: 'test_embedded_resource',
    description: 'Tests embedded resource content response',
    inputSchema: noArgs,
    run: async () => ({
      content: [{
        type: 'resource',
        resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
      }],
    }),
  },
  {
    name: 'test_multiple_content_types',
    description: 'Tests response with multiple content types (text, image, resource)',
    inputSchema: noArgs,
    run: async () => ({
      content: [
        text('Multiple content types test:'),
        { type: 'image', data: PNG, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) },
        },
      ],
    }),
  },
  {
    name: 'test_tool_with_logging',
    description: 'Tests tool that emits log messages during execution',
    inputSchema: noArgs,
    run: async (_args, extra) => {
      const log = (data) => extra.sendNotification({
        method: 'notifications/message',
        params: { level: 'info', logger: 'conformance-backend', data },
      });
      await log('Tool execution started');
      await sleep(50);
      await log('Tool processing data');
      await sleep(50);
      await log('Tool execution completed');
      return { content: [text('Tool with logging executed successfully')] };
    },
  },
  {
    name: 'test_tool_with_progress',
    description: 'Tests tool that reports progress notifications',
    inputSchema: noArgs,
    run: async (_args, extra) => {
      const token = extra._meta?.progressToken;
      for (const progress of [0, 50, 100]) {
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress, total: 100, message: `Completed step ${progress} of 100` },
          });
        }
        if (progress < 100) await sleep(50);
      }
      return { content: [text(String(token ?? 'no progress token'))] };
    },
  },
  {
    name: 'test_error_handling',
    description: 'Tests error response handling',
    inputSchema: noArgs,
    run: async () => ({ isError: true, content: [text('This tool intentionally returns an error for testing')] }),
  },
  {
    // The reference server closes the POST's SSE stream mid-call (SEP-1699).
    // Behind a gateway the backend cannot reach the client's stream, so this
    // only answers after a pause; whether the stream is closed and resumed is
    // the gateway's business.
    name: 'test_reconnection',
    description: 'Tests SSE stream disconnection and client reconnection (SEP-1699)',
    inputSchema: noArgs,
    run: async () => {
      await sleep(100);
      return { content: [text('Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.')] };
    },
  },
  {
    name: 'test_sampling',
    description: 'Tests server-initiated sampling (LLM completion request)',
    inputSchema: {
      type: 'object',
      properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } },
      required: ['prompt'],
    },
    run: async (args, extra) => {
      try {
        const r = await ask(extra, 'sampling/createMessage', {
          messages: [{ role: 'user', content: text(String(args.prompt ?? '')) }],
          maxTokens: 100,
        }, CreateMessageResultSchema);
        return { content: [text(`LLM response: ${r.content?.text ?? 'No response'}`)] };
      } catch (e) {
        return { isError: true, content: [text(`Sampling not supported or error: ${e.message}`)] };
      }
    },
  },
  {
    name: 'test_elicitation',
    description: 'Tests server-initiated elicitation (user input request)',
    inputSchema: {
      type: 'object',
      properties: { message: { type: 'string', description: 'The message to show the user' } },
      required: ['message'],
    },
    run: async (args, extra) => elicit(extra, 'User response', {
      message: String(args.message ?? ''),
      requestedSchema: {
        type: 'object',
        properties: {
          username: { type: 'string', description: "User's response" },
          email: { type: 'string', description: "User's email address" },
        },
        required: ['username', 'email'],
      },
    }),
  },
  {
    name: 'test_elicitation_sep1034_defaults',
    description: 'Tests elicitation with default values per SEP-1034',
    inputSchema: noArgs,
    run: async (_args, extra) => elicit(extra, 'Elicitation completed', {
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
    }),
  },
  {
    name: 'test_elicitation_sep1330_enums',
    description: 'Tests elicitation with enum schema improvements per SEP-1330',
    inputSchema: noArgs,
    run: async (_args, extra) => elicit(extra, 'Elicitation completed', {
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
    }),
  },
  {
    // SEP-1613: the listing must carry these JSON Schema 2020-12 keywords unchanged.
    name: 'json_schema_2020_12_tool',
    description: 'Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } },
      },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    },
    run: async (args) => ({ content: [text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`)] }),
  },
];

async function elicit(extra, label, params) {
  try {
    const r = await ask(extra, 'elicitation/create', params, ElicitResultSchema);
    return { content: [text(`${label}: action=${r.action}, content=${JSON.stringify(r.content || {})}`)] };
  } catch (e) {
    return { isError: true, content: [text(`Elicitation not supported or error: ${e.message}`)] };
  }
}

const toolByName = new Map(tools.map((t) => [t.name, t]));

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
}));

server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
  const tool = toolByName.get(req.params.name);
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`);
  return tool.run(req.params.arguments ?? {}, extra);
});

// ------------------------------------------------------------ resources

const resources = [
  {
    uri: 'test://static-text', name: 'static-text', title: 'Static Text Resource',
    description: 'A static text resource for testing', mimeType: 'text/plain',
    read: () => ({ text: 'This is the content of the static text resource.' }),
  },
  {
    uri: 'test://static-binary', name: 'static-binary', title: 'Static Binary Resource',
    description: 'A static binary resource (image) for testing', mimeType: 'image/png',
    read: () => ({ blob: PNG }),
  },
  {
    uri: 'test://watched-resource', name: 'watched-resource', title: 'Watched Resource',
    description: 'A resource that can be subscribed to', mimeType: 'text/plain',
    read: () => ({ text: 'Watched resource content' }),
  },
];
const TEMPLATE = /^test:\/\/template\/([^/]+)\/data$/;
const subscriptions = new Set();

server.setRequestHandler(ListResourcesRequestSchema, async () => ({
  resources: resources.map(({ read, ...r }) => r),
}));

server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
  resourceTemplates: [{
    uriTemplate: 'test://template/{id}/data', name: 'template', title: 'Resource Template',
    description: 'A resource template with parameter substitution', mimeType: 'application/json',
  }],
}));

server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
  const { uri } = req.params;
  const r = resources.find((x) => x.uri === uri);
  if (r) return { contents: [{ uri, mimeType: r.mimeType, ...r.read() }] };
  const m = TEMPLATE.exec(uri);
  if (m) {
    const id = decodeURIComponent(m[1]);
    return {
      contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
    };
  }
  throw new McpError(-32002, `Resource not found: ${uri}`, { uri });
});

server.setRequestHandler(SubscribeRequestSchema, async (req) => {
  subscriptions.add(req.params.uri);
  return {};
});

server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
  subscriptions.delete(req.params.uri);
  return {};
});

// -------------------------------------------------------------- prompts

const prompts = [
  {
    name: 'test_simple_prompt', title: 'Simple Test Prompt', description: 'A simple prompt without arguments',
    get: () => [{ role: 'user', content: text('This is a simple prompt for testing.') }],
  },
  {
    name: 'test_prompt_with_arguments', title: 'Prompt With Arguments', description: 'A prompt with required arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
    get: (a) => [{ role: 'user', content: text(`Prompt with arguments: arg1='${a.arg1}', arg2='${a.arg2}'`) }],
  },
  {
    name: 'test_prompt_with_embedded_resource', title: 'Prompt With Embedded Resource',
    description: 'A prompt that includes an embedded resource',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
    get: (a) => [
      { role: 'user', content: { type: 'resource', resource: { uri: a.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
      { role: 'user', content: text('Please process the embedded resource above.') },
    ],
  },
  {
    name: 'test_prompt_with_image', title: 'Prompt With Image', description: 'A prompt that includes image content',
    get: () => [
      { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
      { role: 'user', content: text('Please analyze the image above.') },
    ],
  },
];

server.setRequestHandler(ListPromptsRequestSchema, async () => ({
  prompts: prompts.map(({ get, ...p }) => p),
}));

server.setRequestHandler(GetPromptRequestSchema, async (req) => {
  const p = prompts.find((x) => x.name === req.params.name);
  if (!p) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${req.params.name}`);
  const args = req.params.arguments ?? {};
  for (const a of p.arguments ?? []) {
    if (a.required && typeof args[a.name] !== 'string') {
      throw new McpError(ErrorCode.InvalidParams, `Missing required argument: ${a.name}`);
    }
  }
  return { description: p.description, messages: p.get(args) };
});

// ---------------------------------------------------------- completions

// Minimal, as the scenario allows: a few values that start with what was typed.
const SUGGESTIONS = ['test', 'testValue1', 'testValue2', 'paris', 'park', 'party'];
server.setRequestHandler(CompleteRequestSchema, async (req) => {
  const typed = String(req.params.argument?.value ?? '');
  const values = SUGGESTIONS.filter((v) => v.startsWith(typed));
  return { completion: { values, total: values.length, hasMore: false } };
});

// ---------------------------------------------------------------- stdio

const transport = new StdioServerTransport();
await server.connect(transport);
// The gateway closes stdin to stop an instance: exit at once then.
process.stdin.on('end', () => process.exit(0));
