// echo_node: the Node SDK stdio MCP server used as the "real" backend of the
// benchmarks (for comparability with the numbers of issue 8). One tool,
// `echo` {text}. Uses @modelcontextprotocol/sdk from test/node_modules (the
// version pinned in test/package.json), not whatever the peers pulled in.
import { McpServer } from '../node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.js';
import { StdioServerTransport } from '../node_modules/@modelcontextprotocol/sdk/dist/esm/server/stdio.js';
import { z } from '../node_modules/zod/index.js';

const server = new McpServer({ name: 'bench-echo-node', version: '1.0.0' });
server.registerTool('echo', { description: 'Echoes the text back', inputSchema: { text: z.string() } },
  async ({ text }) => ({ content: [{ type: 'text', text }] }));
await server.connect(new StdioServerTransport());
