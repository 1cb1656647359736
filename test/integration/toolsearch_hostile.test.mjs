// Tool search against hostile catalogs (issue 34): a server that re-lists
// with fresh words while someone searches does not grow the index or the
// daemon; a catalog of 5,000 tools, huge descriptions, hundreds of
// thousands of distinct words, deep schemas and control characters is
// indexed in steps while /healthz keeps answering, within the per-tool
// bounds (what passes the catalog's own); a listing that is not UTF-8 is refused without harm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { start, waitFor, fixtures, tmpdir, slow } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const echo = { name: 'echo', description: 'Echoes', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } };

// A random word of letters only (the tokenizer splits at digits).
const word = () => Array.from({ length: 9 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');
const words = (n) => Array.from({ length: n }, word);

const q = (text) => `/v1/tools?q=${encodeURIComponent(text)}&limit=3`;
const names = (r) => r.json.tools.map((t) => t.name);

async function metric(d, name) {
  const r = await d.get('/metrics');
  const m = r.body.match(new RegExp(`^${name} (\\d+)$`, 'm'));
  assert.ok(m, `${name} in /metrics`);
  return Number(m[1]);
}

// VmRSS in bytes, or null under a sanitizer or valgrind, whose own
// bookkeeping (ASan keeps freed memory in quarantine) is not the daemon's.
function rss(pid) {
  const maps = fs.readFileSync(`/proc/${pid}/maps`, 'utf8');
  if (/libasan|vgpreload|valgrind/.test(maps)) return null;
  const kb = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
  return Number(kb[1]) * 1024;
}

test('a server that re-lists with fresh words 10 times, searched meanwhile, grows neither the index nor RSS', async (t) => {
  const dir = tmpdir();
  const file = path.join(dir, 'tools.json');
  const TOOLS = 3000;
  const listing = () => {
    const tools = [echo];
    for (let i = 0; i < TOOLS; i++) tools.push({ name: `tool_${i}`, description: words(50).join(' '), inputSchema: { type: 'object' } });
    fs.writeFileSync(file, JSON.stringify(tools));
    return tools;
  };
  let tools = listing();
  const d = await start(`version: 1
servers:
  churn:
    command: ${FIXTURE}
    args: ['--tools-file', '${file}', '--relist-on-call', 'echo']
    truely-stateless: true
`, { waitReady: true });
  t.after(() => d.stop());

  const probe = (ts) => ts[TOOLS].description.split(' ')[7]; // a word of the last tool
  await waitFor(async () => names(await d.get(q(probe(tools))))[0] === `tool_${TOOLS - 1}`);
  const one = await metric(d, 'mcpgw_search_index_bytes');
  const rss1 = rss(d.pid);
  assert.ok(one > 0);
  for (let round = 1; round <= 10; round++) {
    const old = probe(tools);
    tools = listing();
    const v = (await d.get('/v1/tools')).json.version;
    const call = await d.post('/v1/tools/echo/call', { dialog: 'd1', arguments: { text: 'again' } });
    assert.equal(call.status, 200, call.body);
    // searching while the daemon takes the new listing in
    await waitFor(async () => {
      const r = await d.get(q(probe(tools)));
      return r.json.version > v && names(r)[0] === `tool_${TOOLS - 1}`;
    }, 60000 * slow);
    assert.deepEqual(names(await d.get(q(old))), [], `round ${round}: the old words are gone`);
  }
  const ten = await metric(d, 'mcpgw_search_index_bytes');
  // Between two listings both are held for a moment (the old one is served
  // while the new one is built), so up to twice one listing; the index
  // grew by one listing per round before.
  assert.ok(ten <= 2 * one, `index ${ten} bytes after 10 listings, ${one} after one`);
  const rss10 = rss(d.pid);
  if (rss1 !== null) assert.ok(rss10 - rss1 < 64 << 20, `RSS ${rss1} → ${rss10}`);
});

test('a hostile catalog: 5,000 tools, huge descriptions, deep schemas, control characters; /healthz answers while it is indexed', async (t) => {
  const dir = tmpdir();
  const TOOLS = 5000;
  const big = [echo];
  for (let i = 0; i < TOOLS; i++) big.push({ name: `bulk_${i}`, description: words(100).join(' '), inputSchema: { type: 'object', properties: { [word()]: { type: 'string', description: words(20).join(' ') } } } });
  // Three descriptions at the catalog's 8 KiB bound, of 800 distinct
  // words: the index keeps 512 words of a tool.
  const huge = words(800);
  for (let i = 0; i < 3; i++) big.push({ name: `huge_${i}`, description: huge.join(' ').slice(0, 8000), inputSchema: { type: 'object' } });
  // Past the catalog's bounds: 1 MiB of description (cut to 8 KiB there),
  // a schema nested 200 levels deep (refused there).
  const tooLong = words(110000);
  big.push({ name: 'too_long', description: tooLong.join(' '), inputSchema: { type: 'object' } });
  let deep = { type: 'string' };
  for (let i = 0; i < 200; i++) deep = { type: 'object', properties: { inner: deep } };
  big.push({ name: 'too_deep', description: 'nested deeply', inputSchema: { type: 'object', properties: { root: deep } } });
  // Within them: nested 12 levels, and 1,000 parameters (64 are indexed).
  deep = { type: 'string' };
  for (let i = 0; i < 12; i++) deep = { type: 'object', properties: { inner: deep } };
  const pnames = Array.from({ length: 1000 }, word);
  big.push({ name: 'deep_schema', description: 'nested deeply', inputSchema: { type: 'object', properties: { root: deep, ...Object.fromEntries(pnames.map((p) => [p, { type: 'string' }])) } } });
  // Control characters inside words and around them.
  big.push({ name: 'ctl_tool', description: 'bell\u0007ringer \u001bescape\u007f tab\there', inputSchema: { type: 'object' } });
  const bigFile = path.join(dir, 'big.json');
  fs.writeFileSync(bigFile, JSON.stringify(big));
  // A server whose listing is not UTF-8 (raw bytes 0xff 0xfe in a name).
  const badJs = path.join(dir, 'bad.mjs');
  fs.writeFileSync(badJs, `
import readline from 'node:readline';
const rl = readline.createInterface({ input: process.stdin });
const out = (b) => process.stdout.write(Buffer.concat([b, Buffer.from('\\n')]));
rl.on('line', (l) => {
  const m = JSON.parse(l);
  if (m.method === 'initialize') out(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'bad', version: '1' } } })));
  else if (m.method === 'tools/list') out(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":' + JSON.stringify(m.id) + ',"result":{"tools":[{"name":"bad_'), Buffer.from([0xff, 0xfe]), Buffer.from('","description":"x","inputSchema":{"type":"object"}}]}}')]));
  else if (m.id !== undefined) out(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} })));
});
`);
  const d = await start(`version: 1
servers:
  small:
    command: ${FIXTURE}
  big:
    command: ${FIXTURE}
    args: ['--tools-json', '${bigFile}']
  bad:
    command: ${process.execPath}
    args: ['${badJs}']
`);
  t.after(() => d.stop());

  // A search from the start makes the index follow each listing as it comes.
  await waitFor(async () => (await d.get(q('echo'))).status === 200);
  const last = big[TOOLS].description.split(' ')[42];
  let healthy = 0;
  await waitFor(async () => {
    const h = await d.get('/healthz');
    assert.equal(h.status, 200);
    healthy++;
    const r = await d.get(q(last));
    return r.status === 200 && names(r)[0] === `bulk_${TOOLS - 1}`;
  }, 240000 * slow, 20);
  assert.ok(healthy > 0);

  // The per-tool bounds: the first 512 words of a tool are indexed.
  assert.deepEqual(names(await d.get(q(huge[3]))), ['huge_0', 'huge_1', 'huge_2']);
  assert.deepEqual(names(await d.get(q(huge[600]))), []);
  assert.equal(names(await d.get(q('nested deeply')))[0], 'deep_schema');
  assert.equal(names(await d.get(q(pnames[10])))[0], 'deep_schema');
  assert.deepEqual(names(await d.get(q(pnames[900]))), []);
  assert.equal(names(await d.get(q('escape')))[0], 'ctl_tool');
  // the catalog takes hidden characters out of text: bell\u0007ringer is one word
  assert.equal(names(await d.get(q('bellringer')))[0], 'ctl_tool');
  const all = (await d.get('/v1/tools')).json.tools.map((x) => x.name);
  assert.ok(!all.includes('too_deep'));
  assert.equal(names(await d.get(q(tooLong[5])))[0], 'too_long');
  assert.deepEqual(names(await d.get(q(tooLong[100000]))), []);
  // bounded: 5,000 tools of ~120 words, each word under 200 bytes with its postings
  const bytes = await metric(d, 'mcpgw_search_index_bytes');
  assert.ok(bytes < 200 * 130 * TOOLS, `index ${bytes} bytes`);
  // the server that is not UTF-8 is refused; the daemon carries on
  assert.deepEqual(names(await d.get(q('bad'))).filter((n) => n.startsWith('bad')), []);
  assert.equal((await d.get('/healthz')).status, 200);
});
