// Captures the tools/list of real MCP servers for the tool-search benchmark.
//
//   mkdir /tmp/cap && cd /tmp/cap && npm init -y &&
//   PUPPETEER_SKIP_DOWNLOAD=1 npm install --ignore-scripts <the packages below>
//   node test/bench/toolsearch/capture.mjs /tmp/cap > test/bench/toolsearch/catalog.json
//
// Each server runs over stdio with placeholder credentials: the servers
// below list their tools without reaching their service. The output is
// {"servers":[{"id","package","version","tools":[…]}]}, each tool as the
// server listed it (name, title, description, inputSchema).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
const servers = [
  { id: 'everything', pkg: '@modelcontextprotocol/server-everything', bin: 'mcp-server-everything', args: ['stdio'] },
  { id: 'memory', pkg: '@modelcontextprotocol/server-memory', bin: 'mcp-server-memory' },
  { id: 'filesystem', pkg: '@modelcontextprotocol/server-filesystem', bin: 'mcp-server-filesystem', args: ['/tmp'] },
  { id: 'github', pkg: '@modelcontextprotocol/server-github', bin: 'mcp-server-github' },
  { id: 'gitlab', pkg: '@modelcontextprotocol/server-gitlab', bin: 'mcp-server-gitlab' },
  { id: 'puppeteer', pkg: '@modelcontextprotocol/server-puppeteer', bin: 'mcp-server-puppeteer' },
  { id: 'slack', pkg: '@modelcontextprotocol/server-slack', bin: 'mcp-server-slack' },
  { id: 'postgres', pkg: '@modelcontextprotocol/server-postgres', bin: 'mcp-server-postgres', args: ['postgresql://localhost/none'] },
  { id: 'brave', pkg: '@modelcontextprotocol/server-brave-search', bin: 'mcp-server-brave-search' },
  { id: 'maps', pkg: '@modelcontextprotocol/server-google-maps', bin: 'mcp-server-google-maps' },
  { id: 'thinking', pkg: '@modelcontextprotocol/server-sequential-thinking', bin: 'mcp-server-sequential-thinking' },
  { id: 'everart', pkg: '@modelcontextprotocol/server-everart', bin: 'mcp-server-everart' },
  { id: 'awskb', pkg: '@modelcontextprotocol/server-aws-kb-retrieval', bin: 'mcp-server-aws-kb-retrieval' },
  { id: 'playwright', pkg: '@playwright/mcp', bin: 'playwright-mcp' },
  { id: 'notion', pkg: '@notionhq/notion-mcp-server', bin: 'notion-mcp-server' },
  { id: 'desktop', pkg: '@wonderwhy-er/desktop-commander', bin: 'desktop-commander' },
  { id: 'kubernetes', pkg: 'mcp-server-kubernetes', bin: 'mcp-server-kubernetes' },
  { id: 'firecrawl', pkg: 'firecrawl-mcp', bin: 'firecrawl-mcp' },
  { id: 'context7', pkg: '@upstash/context7-mcp', bin: 'context7-mcp' },
  { id: 'devtools', pkg: 'chrome-devtools-mcp', bin: 'chrome-devtools-mcp' },
  { id: 'eaplaywright', pkg: '@executeautomation/playwright-mcp-server', bin: 'playwright-mcp-server' },
  { id: 'mongodb', pkg: 'mongodb-mcp-server', bin: 'mongodb-mcp-server' },
  { id: 'tavily', pkg: 'tavily-mcp', bin: 'tavily-mcp' },
  { id: 'exa', pkg: 'exa-mcp-server', bin: 'exa-mcp-server' },
  { id: 'circleci', pkg: '@circleci/mcp-server-circleci', bin: 'mcp-server-circleci' },
  { id: 'sentry', pkg: '@sentry/mcp-server', bin: 'sentry-mcp', args: ['--access-token=placeholder'] },
];
const env = {
  ...process.env,
  GITHUB_PERSONAL_ACCESS_TOKEN: 'placeholder', GITLAB_PERSONAL_ACCESS_TOKEN: 'placeholder',
  SLACK_BOT_TOKEN: 'placeholder', SLACK_TEAM_ID: 'T0', BRAVE_API_KEY: 'placeholder',
  GOOGLE_MAPS_API_KEY: 'placeholder', EVERART_API_KEY: 'placeholder', AWS_ACCESS_KEY_ID: 'placeholder',
  AWS_SECRET_ACCESS_KEY: 'placeholder', AWS_REGION: 'us-east-1', FIRECRAWL_API_KEY: 'fc-placeholder',
  NOTION_TOKEN: 'placeholder', OPENAPI_MCP_HEADERS: '{}', TAVILY_API_KEY: 'placeholder',
  EXA_API_KEY: 'placeholder', CIRCLECI_TOKEN: 'placeholder', SENTRY_ACCESS_TOKEN: 'placeholder',
};

function listTools(s) {
  return new Promise((resolve, reject) => {
    const p = spawn(join(dir, 'node_modules/.bin', s.bin), s.args ?? [], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    let buf = '';
    const tools = [];
    const timer = setTimeout(() => { p.kill(); reject(new Error(`${s.id}: timeout`)); }, 60000);
    const send = (m) => p.stdin.write(`${JSON.stringify(m)}\n`);
    const page = (cursor) => send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: cursor ? { cursor } : {} });
    p.stdout.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let m;
        try { m = JSON.parse(line); } catch { continue; }
        if (m.id === 1) { send({ jsonrpc: '2.0', method: 'notifications/initialized' }); page(); }
        if (m.id === 2) {
          if (m.error) { clearTimeout(timer); p.kill(); reject(new Error(`${s.id}: ${m.error.message}`)); return; }
          tools.push(...m.result.tools);
          if (m.result.nextCursor) page(m.result.nextCursor);
          else { clearTimeout(timer); p.kill(); resolve(tools); }
        }
      }
    });
    p.on('error', (e) => { clearTimeout(timer); reject(e); });
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'capture', version: '1' } } });
  });
}

const out = [];
for (const s of servers) {
  try {
    const tools = await listTools(s);
    const { version } = JSON.parse(readFileSync(join(dir, 'node_modules', s.pkg, 'package.json'), 'utf8'));
    out.push({
      id: s.id, package: s.pkg, version,
      tools: tools.map((t) => ({ name: t.name, ...(t.title ? { title: t.title } : {}), description: t.description ?? '', inputSchema: t.inputSchema })),
    });
    process.stderr.write(`${s.id} ${s.pkg}@${version}: ${tools.length} tools\n`);
  } catch (e) {
    process.stderr.write(`skipped ${e.message}\n`);
  }
}
process.stdout.write(`${JSON.stringify({ servers: out }, null, 1)}\n`);
