// Tool search (issue 29): GET /v1/tools?q= ranks the live catalog, the
// index follows reloads, format=anthropic&defer_loading marks tools for the
// Messages API's tool-search tool; /mcp's find_tools/forget_tools when
// gateway.tool_search is enabled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { start, fixtures, tmpdir } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const schema = (props) => ({ type: 'object', properties: props });

// Tool definitions as real servers list them (GitHub's and Playwright's MCP servers).
const githubTools = [
  { name: 'create_issue', description: 'Create a new issue in a GitHub repository', inputSchema: schema({ owner: { type: 'string' }, repo: { type: 'string' }, title: { type: 'string' } }) },
  { name: 'list_pull_requests', description: 'List and filter repository pull requests', inputSchema: schema({ owner: { type: 'string' }, state: { type: 'string', description: 'open, closed or all' } }) },
  { name: 'search_code', description: 'Search for code across GitHub repositories', inputSchema: schema({ q: { type: 'string' } }) },
];
const browserTools = [
  { name: 'browser_navigate', description: 'Navigate to a URL', inputSchema: schema({ url: { type: 'string', description: 'The URL to navigate to' } }) },
  { name: 'browser_take_screenshot', description: 'Take a screenshot of the current page', inputSchema: schema({ filename: { type: 'string' } }) },
  { name: 'browser_click', description: 'Perform click on a web page', inputSchema: schema({ element: { type: 'string', description: 'Human-readable element description' } }) },
];

function config(dir, { browserExtra = '', gateway = '' } = {}) {
  const gh = path.join(dir, 'github.json');
  const web = path.join(dir, 'browser.json');
  fs.writeFileSync(gh, JSON.stringify(githubTools));
  fs.writeFileSync(web, JSON.stringify(browserTools));
  return `version: 1
gateway:
  tool_search:
    always_loaded: ['browser_navigate']
${gateway}servers:
  github:
    command: ${FIXTURE}
    args: ['--tools-json', '${gh}']
  playwright:
    command: ${FIXTURE}
    args: ['--tools-json', '${web}']
${browserExtra}`;
}

const q = (text, extra = '') => `/v1/tools?q=${encodeURIComponent(text)}${extra}`;
const names = (r) => r.json.tools.map((t) => t.name);

test('GET /v1/tools?q= ranks the catalog, follows reloads and refuses bad queries', async (t) => {
  const dir = tmpdir();
  const d = await start(config(dir), { waitReady: true });
  t.after(() => d.stop());

  const shot = await d.get(q('take a screenshot of the page'));
  assert.equal(shot.status, 200, shot.body);
  assert.equal(shot.json.query, 'take a screenshot of the page');
  assert.equal(typeof shot.json.version, 'number');
  assert.equal(shot.json.tools[0].name, 'browser_take_screenshot');
  assert.equal(shot.json.tools[0].toolset, 'playwright');
  assert.equal(shot.json.tools[0].originalName, 'browser_take_screenshot');
  assert.ok(shot.json.tools[0].inputSchema);
  assert.equal(typeof shot.json.tools[0].score, 'number');
  assert.ok(shot.json.tools.every((x, i, a) => i === 0 || a[i - 1].score >= x.score), 'best first');
  assert.equal(shot.headers.etag, `"${shot.json.version}"`);

  // The server id is a field: "github issues" finds the GitHub server's issue tool.
  assert.equal(names(await d.get(q('github issues')))[0], 'create_issue');
  // User words reach tool words through synonyms: "open a bug" is create_issue.
  assert.equal(names(await d.get(q('open a bug about the crash')))[0], 'create_issue');
  // A name prefix ranks first; + is a space.
  assert.equal(names(await d.get('/v1/tools?q=browser_cl'))[0], 'browser_click');
  assert.equal(names(await d.get('/v1/tools?q=show+the+open+pull+requests'))[0], 'list_pull_requests');

  assert.equal((await d.get(q('page', '&limit=1'))).json.tools.length, 1);
  const only = await d.get(q('search', '&toolset=github'));
  assert.ok(only.json.tools.length > 0 && only.json.tools.every((x) => x.toolset === 'github'), only.body);
  const oa = await d.get(q('take a screenshot', '&format=openai'));
  assert.equal(oa.json.tools[0].type, 'function');
  assert.equal(oa.json.tools[0].function.name, 'browser_take_screenshot');
  assert.equal(typeof oa.json.tools[0].score, 'number');
  assert.deepEqual((await d.get(q('zzzqqq'))).json.tools, []);

  for (const [url, re] of [
    ['/v1/tools?q=', /at least one word/],
    ['/v1/tools?q=%20%20', /at least one word/],
    [q('x'.repeat(513)), /longer than 512 bytes/],
    [q('page', '&limit=0'), /limit must be an integer from 1 to 100/],
    [q('page', '&limit=101'), /limit must be an integer from 1 to 100/],
    ['/v1/tools?limit=3', /give q too/],
    ['/v1/tools?q=%FF', /UTF-8/],
  ]) {
    const r = await d.get(url);
    assert.equal(r.status, 400, url);
    assert.equal(r.json.error.code, 'bad_query');
    assert.match(r.json.error.message, re, url);
  }
  assert.equal((await d.get(q('x'.repeat(512)))).status, 200);

  // A reload that takes browser_click away: the index follows the catalog.
  const before = shot.json.version;
  fs.writeFileSync(d.configPath, config(dir, { browserExtra: "    tools: {blacklist: ['browser_click']}\n" }));
  assert.equal((await d.post('/v1/reload', {})).status, 200);
  let after;
  for (;;) {
    after = await d.get('/v1/tools?q=browser_cl');
    if (after.json.version > before) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(!names(after).includes('browser_click'), after.body);
  assert.equal(names(await d.get(q('take a screenshot')))[0], 'browser_take_screenshot');
});

test('format=anthropic&defer_loading marks tools for the tool-search tool, never the always-loaded ones', async (t) => {
  const dir = tmpdir();
  const d = await start(config(dir), { waitReady: true });
  t.after(() => d.stop());

  const all = await d.get('/v1/tools?format=anthropic&defer_loading=all');
  assert.equal(all.status, 200, all.body);
  const byName = Object.fromEntries(all.json.tools.map((x) => [x.name, x]));
  assert.equal(byName.browser_navigate.defer_loading, undefined, 'always_loaded');
  for (const n of ['create_issue', 'browser_click', 'browser_take_screenshot', 'mcp_release'])
    assert.equal(byName[n].defer_loading, true, n);
  assert.ok(byName.create_issue.input_schema);

  const globs = await d.get(`/v1/tools?format=anthropic&defer_loading=${encodeURIComponent('browser_*,search_*')}`);
  const deferred = globs.json.tools.filter((x) => x.defer_loading).map((x) => x.name).sort();
  assert.deepEqual(deferred, ['browser_click', 'browser_take_screenshot', 'search_code']);

  const searched = await d.get(q('take a screenshot', '&format=anthropic&defer_loading=all'));
  assert.equal(searched.json.tools[0].name, 'browser_take_screenshot');
  assert.equal(searched.json.tools[0].defer_loading, true);

  // The plain listing is unchanged.
  assert.ok((await d.get('/v1/tools?format=anthropic')).json.tools.every((x) => x.defer_loading === undefined));
  for (const url of ['/v1/tools?defer_loading=all', '/v1/tools?format=openai&defer_loading=all', '/v1/tools?format=anthropic&defer_loading=']) {
    const r = await d.get(url);
    assert.equal(r.status, 400, url);
    assert.match(r.json.error.message, /defer_loading/);
  }
});
