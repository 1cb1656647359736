// A stdio MCP server (one tool, `peek`) that says what it can read: for each
// path in `paths` (a file, or a directory to list), "<path>: readable" or
// "<path>: <error code>". Run under
// the shipped unit with the sandbox on, it shows what an instance can see.
'use strict';
const fs = require('fs');
const readline = require('readline');

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m.id === undefined) return;
  const send = (o) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: m.id, ...o })}\n`);
  if (m.method === 'initialize') {
    send({ result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} },
      serverInfo: { name: 'sandbox-server', version: '1' } } });
  } else if (m.method === 'tools/list') {
    send({ result: { tools: [{ name: 'peek', inputSchema: { type: 'object',
      properties: { paths: { type: 'array', items: { type: 'string' } } } } }] } });
  } else if (m.method === 'tools/call') {
    const seen = (m.params.arguments.paths || []).map((p) => {
      try {
        if (fs.statSync(p).isDirectory()) fs.readdirSync(p);
        else fs.readFileSync(p);
        return `${p}: readable`;
      } catch (e) {
        return `${p}: ${e.code}`;
      }
    });
    send({ result: { content: [{ type: 'text', text: seen.join('\n') }] } });
  } else {
    send({ error: { code: -32601, message: 'method not found' } });
  }
});
