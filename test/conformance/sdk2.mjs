// The official 2026-07-28 client (@modelcontextprotocol/client 2.4.0) as a
// process the integration tests drive: it needs Node >= 20, and the suite
// runs on the machine's node (18 on Debian 12), so the tests start this file
// with test/conformance's Node 22 and talk to it in JSON lines.
//
//   node sdk2.mjs <url> '<options json>'
//
// options: mode ('modern' pins 2026-07-28, 'auto', 'legacy'), headers (sent
// on every request), capabilities (declared by the client), elicit (the
// content an elicitation/create is accepted with; with it the client
// declares elicitation and answers input rounds itself; each request it
// answers is printed as {"elicited":{params}}).
//
// stdout: {"ready":true,"era":…,"version":…} once connected, then one line
// per command read on stdin ({"id":n,"op":…}): {"id":n,"result":…} or
// {"id":n,"error":{"code","message"}}. Notifications the client hears are
// printed as {"notification":{method,params}}. stdin closing ends it.
import readline from 'node:readline';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, optionsJson = '{}'] = process.argv.slice(2);
const opts = JSON.parse(optionsJson);
const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);

const capabilities = { ...(opts.capabilities || {}) };
if (opts.elicit) capabilities.elicitation = {};
const mode = opts.mode === 'modern' ? { pin: '2026-07-28' } : (opts.mode || 'legacy');
const client = new Client({ name: 'mcpgw-sdk2-test', version: '1.0.0' },
  { capabilities, versionNegotiation: { mode } });
if (opts.elicit) {
  client.setRequestHandler('elicitation/create', async (req) => {
    out({ elicited: { params: req.params } });
    return { action: 'accept', content: opts.elicit };
  });
}
for (const method of ['notifications/tools/list_changed', 'notifications/prompts/list_changed',
  'notifications/resources/list_changed', 'notifications/resources/updated', 'notifications/message']) {
  client.setNotificationHandler(method, (n) => out({ notification: { method: n.method, params: n.params } }));
}

const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: opts.headers || {} } });
const subscriptions = new Map();
const inFlight = new Map();

async function run(cmd) {
  switch (cmd.op) {
    case 'discover': return client.getDiscoverResult() ?? null;
    case 'listTools': return client.listTools({}, { cache: 'bypass' });
    case 'listPrompts': return client.listPrompts({}, { cache: 'bypass' });
    case 'getPrompt': return client.getPrompt({ name: cmd.name, arguments: cmd.arguments ?? {} });
    case 'callTool': {
      const progress = [];
      const abort = new AbortController();
      inFlight.set(cmd.id, abort);
      const options = { signal: abort.signal, timeout: cmd.timeoutMs || 20000 };
      if (cmd.progress) options.onprogress = (p) => { progress.push(p); out({ progress: { id: cmd.id, ...p } }); };
      try {
        const result = await client.callTool({ name: cmd.name, arguments: cmd.arguments || {} }, options);
        return cmd.progress ? { ...result, progressSeen: progress } : result;
      } finally {
        inFlight.delete(cmd.id);
      }
    }
    case 'subscribeResource': return client.subscribeResource({ uri: cmd.uri });
    case 'abort': inFlight.get(cmd.call)?.abort(); return { aborted: inFlight.has(cmd.call) };
    case 'listen': {
      const sub = await client.listen(cmd.filter);
      subscriptions.set(cmd.id, sub);
      return { honoredFilter: sub.honoredFilter };
    }
    default: throw new Error(`unknown op ${cmd.op}`);
  }
}

try {
  await client.connect(transport);
} catch (e) {
  out({ ready: false, error: { message: String(e?.message || e) } });
  process.exit(1);
}
out({ ready: true, era: client.getProtocolEra?.(), version: client.getNegotiatedProtocolVersion?.() });

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const cmd = JSON.parse(line);
  run(cmd).then((result) => out({ id: cmd.id, result }),
    (e) => out({ id: cmd.id, error: { code: e?.code, message: String(e?.message || e), data: e?.data } }));
});
rl.on('close', async () => {
  for (const sub of subscriptions.values()) await sub.close().catch(() => {});
  await client.close().catch(() => {});
  process.exit(0);
});
