// A stdio MCP server (one tool, `peek`) that says what it can read: for each
// path in `paths` (a file, or a directory to list), "<path>: readable" or
// "<path>: <error code>"; with `connect` ("host:port"), it also asks the
// sandbox's proxy (HTTPS_PROXY) for a CONNECT there and a GET through the
// tunnel, and says "connect: <status line of the answer>" or the error. Run
// under the shipped unit with the sandbox on, it shows what an instance can
// see and reach.
'use strict';
const fs = require('fs');
const net = require('net');
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
  } else if (m.method === 'tools/call' && m.params.arguments.connect) {
    tunnel(m.params.arguments.connect, (line) => send({ result: { content: [{ type: 'text', text: `connect: ${line}` }] } }));
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

// CONNECT through the proxy, then a plain GET inside the tunnel: calls back
// once with the GET's status line, or what went wrong (bounded by 10 s).
function tunnel(dest, done) {
  const proxy = new URL(process.env.HTTPS_PROXY || 'http://0.0.0.0:0');
  const sock = net.connect(Number(proxy.port), proxy.hostname);
  let got = '', tunnelled = false, ended = false;
  const finish = (line) => { if (!ended) { ended = true; sock.destroy(); done(line); } };
  sock.setTimeout(10000, () => finish('timeout'));
  sock.on('error', (e) => finish(e.code || String(e)));
  sock.on('connect', () => sock.write(`CONNECT ${dest} HTTP/1.1\r\nHost: ${dest}\r\n\r\n`));
  sock.on('data', (b) => {
    got += b.toString('latin1');
    const end = got.indexOf('\r\n\r\n');
    if (end < 0) return;
    const status = got.slice(0, got.indexOf('\r\n'));
    if (tunnelled) return finish(status);
    if (!/^HTTP\/1\.[01] 200/.test(status)) return finish(`refused: ${status}`);
    tunnelled = true;
    got = got.slice(end + 4);
    sock.write(`GET / HTTP/1.0\r\nHost: ${dest}\r\n\r\n`);
  });
  sock.on('end', () => finish(tunnelled ? `closed: ${got.slice(0, 200)}` : 'closed before the answer'));
}
