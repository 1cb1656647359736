// A stdio MCP server (one tool, `noop`) that leaves a grandchild outside its
// session: sh, made a session leader by `detached` (setsid), ignoring
// SIGTERM and SIGHUP, then exec'd into `sleep 617` so the test can find it.
// Only a cgroup (or a kill of every descendant) stops it with the instance.
'use strict';
const { spawn } = require('child_process');
const readline = require('readline');

spawn('sh', ['-c', 'trap "" TERM HUP; exec sleep 617'], { detached: true, stdio: 'ignore' }).unref();

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
      serverInfo: { name: 'setsid-server', version: '1' } } });
  } else if (m.method === 'tools/list') {
    send({ result: { tools: [{ name: 'noop', inputSchema: { type: 'object' } }] } });
  } else {
    send({ error: { code: -32601, message: 'method not found' } });
  }
});
