// The status page at GET /, in a real browser: Debian's chromium driven by
// puppeteer-core (nothing is downloaded), with axe-core for accessibility.
// Screenshots of the main views go to build/ui-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { launchChromium } from './lib/chromium.mjs';
import { run, start, fixtures, nodeModules, root, waitFor, slow } from './lib/harness.mjs';

const require = createRequire(import.meta.url);
const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const shots = path.join(root, 'build');
const HOSTILE = '<img src=x onerror="window.__pwned=1">';
const everything = path.join(nodeModules, '.bin/mcp-server-everything');

function config({ broken = false, token } = {}) {
  return `version: 1
gateway:
  warm_spares: 0
  artifacts_dir: ./artifacts
  tool_search: {enabled: true}
${token ? `  auth_token: ${token}\n` : ''}servers:
  everything:
    truely-stateless: true
    command: ${everything}
    args: [stdio]
    tools:
      whitelist: [echo, get-tiny-image, trigger-elicitation-request, trigger-sampling-request]
    transform:
      - prefix: 'ev_'
  hostile:
    command: ${path.join(fixtures, 'mcp_fixture')}
    args: [--tools-json, tools.json]
${broken ? '    request_timeout: soon\n' : ''}`;
}

const tools = JSON.stringify([{ name: 'echo', description: `Echoes. ${HOSTILE}`, inputSchema: { type: 'object', properties: { text: { type: 'string' }, loud: { type: 'boolean', description: 'Shout the text back' } } } }]);

let browser;
before(async () => {
  browser = await launchChromium();
});
after(async () => { await browser?.close(); });

// A page that records console errors, page errors and CSP violations.
async function openPage(d, { width = 1280, height = 900 } = {}) {
  const page = await browser.newPage();
  page.setDefaultTimeout(30000 * slow); // every wait, valgrind's pace included
  await page.setViewport({ width, height });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => { if (!r.url().includes('/v1/events')) errors.push(`requestfailed: ${r.url()}`); });
  await page.evaluateOnNewDocument(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto(`http://127.0.0.1:${d.port}/`, { waitUntil: 'load' });
  return { page, errors };
}

// The raw bytes of a GET (the harness reads bodies as text).
function getBytes(d, p, headers) {
  return new Promise((resolve, reject) => {
    http.get({ host: d.host, port: d.port, path: p, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

const text = (page, sel) => page.$eval(sel, (el) => el.textContent);

async function waitText(page, sel, needle, timeout = 15000 * slow) {
  await page.waitForFunction((s, n) => [...document.querySelectorAll(s)].some((el) => el.textContent.includes(n)), { timeout }, sel, needle);
}

async function chooseTool(page, name) {
  await page.locator(`#tool-list [data-key="tool:${name}"]`).click();
  await page.waitForFunction((n) => document.querySelector('#tool-detail h3')?.textContent.startsWith(n), {}, name);
}

test('the page is served from memory with its headers, ETag, gzip; gateway.ui: false leaves / a 404', async () => {
  const d = await start(config(), { files: { 'tools.json': tools } });
  try {
    const r = await d.get('/');
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /^text\/html/);
    assert.match(r.headers['content-security-policy'], /default-src 'self'/);
    assert.match(r.headers['content-security-policy'], /frame-ancestors 'none'/);
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.match(r.headers.etag, /^"[0-9a-f]{32}"$/);
    assert.match(r.body, /<script type="module" src="\/ui\/app.js">/);
    assert.doesNotMatch(r.body, /<script>|style=/, 'no inline script or style');
    assert.equal((await d.get('/', { headers: { 'if-none-match': r.headers.etag } })).status, 304);
    const gz = await getBytes(d, '/ui/app.js', { 'accept-encoding': 'gzip, br' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.match(gz.headers['content-type'], /^text\/javascript/);
    const plain = await d.get('/ui/app.js');
    assert.equal(zlib.gunzipSync(gz.body).toString(), plain.body);
    assert.notEqual(gz.headers.etag, plain.headers.etag, 'each representation has its own strong ETag');
    assert.equal((await d.get('/ui/favicon.svg')).headers['content-type'], 'image/svg+xml');
    assert.equal((await d.get('/ui/nothing.js')).status, 404);
    assert.equal((await d.post('/', {})).status, 405);
    assert.equal((await d.get('/', { headers: { host: 'evil.example' } })).status, 403, 'the Host gate still applies');
    const s = (await d.get('/v1/servers')).json;
    assert.equal(s.gateway.configPath, d.configPath);
    assert.equal(typeof s.gateway.uptimeSeconds, 'number');
    assert.match(s.gateway.version, /^\d+\.\d+/);
    fs.writeFileSync(d.configPath, config().replace('gateway:\n', 'gateway:\n  ui: false\n'));
    await waitFor(async () => (await d.get('/')).status === 404);
    assert.equal((await d.get('/ui/app.js')).status, 404);
    assert.ok((await d.get('/v1/servers')).json.gateway.lastReload.ok);
    const bad = path.join(d.dir, 'bad.yaml');
    fs.writeFileSync(bad, 'version: 1\ngateway:\n  ui: maybe\n');
    const check = await run(['--check-config', '-c', bad]);
    assert.notEqual(check.code, 0);
    assert.match(check.stdout + check.stderr, /bad\.yaml:3:\d+: error: 'gateway\.ui' must be true or false/);
  } finally {
    await d.stop();
  }
});

test('the page shows the servers, problems live, leases with Release, Try it with input rounds, hostile text as text', async () => {
  const d = await start(config(), { files: { 'tools.json': tools }, waitReady: true });
  const { page, errors } = await openPage(d);
  try {
    await waitText(page, '#server-list h3', 'everything');
    await waitText(page, '#server-list h3', 'hostile');
    await page.waitForFunction(() => document.querySelectorAll('#server-list .server-head .badge.s-ready').length === 2);
    await waitText(page, '#facts', 'v');
    assert.match(await text(page, '#facts'), new RegExp(d.configPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    await page.screenshot({ path: path.join(shots, 'ui-servers.png'), fullPage: true });
    assert.deepEqual(errors, [], 'the page loads without a console error');

    // Idle, the page holds its one event stream and polls nothing faster
    // than once a second. The stream is up first: the page opens it after
    // its first loads, which under valgrind can come after the cards.
    await waitText(page, '#facts', 'live');
    const seen = [];
    const onRequest = (r) => seen.push(new URL(r.url()).pathname);
    page.on('request', onRequest);
    const idleMs = 6000 * slow;
    await new Promise((r) => setTimeout(r, idleMs));
    page.off('request', onRequest);
    const counts = {};
    for (const p of seen) counts[p] = (counts[p] || 0) + 1;
    console.log(`# idle requests in ${idleMs} ms: ${JSON.stringify(counts)}`);
    assert.equal(counts['/v1/events'], undefined, 'the event stream stays open');
    for (const [p, n] of Object.entries(counts)) assert.ok(n <= idleMs / 1000, `${p} polled ${n} times in ${idleMs} ms`);

    // A config edit that breaks a server shows its Problem; the fix removes it.
    const t0 = Date.now();
    fs.writeFileSync(d.configPath, config({ broken: true }));
    await waitText(page, '#problem-list', 'request_timeout');
    const shownMs = Date.now() - t0;
    console.log(`# problem shown ${shownMs} ms after the edit`);
    assert.match(await text(page, '#problem-list'), /mcp\.yaml:\d+:\d+: error: \[server hostile\]/);
    await page.screenshot({ path: path.join(shots, 'ui-problems.png') });
    fs.writeFileSync(d.configPath, config());
    await page.waitForFunction(() => !document.querySelector('#problem-list').textContent.includes('request_timeout'), { timeout: 15000 * slow });

    // A REST call leases an instance; Release ends it.
    const call = await d.post('/v1/tools/echo/call', { dialog: 'd1', arguments: { text: 'hi' } });
    assert.equal(call.status, 200, call.body);
    await waitText(page, '#dialog-list', 'd1');
    await page.locator('#dialog-list button[data-key="release:d1:hostile"]').click();
    await page.waitForFunction(() => document.querySelector('#dialog-list').textContent.includes('No dialog holds'), { timeout: 15000 * slow });
    assert.deepEqual((await d.get('/v1/dialogs')).json.dialogs, []);

    // A dialog that only found tools (tool search, no lease) is shown with
    // them, and Release ends its activations.
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    const found = await d.request('POST', '/mcp', {
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'find_tools', 'x-mcpgw-dialog': 'finder' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'find_tools', arguments: { query: 'tiny image' }, _meta: meta } }),
    });
    assert.equal(found.status, 200, found.body);
    await waitText(page, '#dialog-list', 'ev_get-tiny-image');
    await page.locator('#dialog-list button[data-key="release:finder:"]').click();
    await page.waitForFunction(() => document.querySelector('#dialog-list').textContent.includes('No dialog holds'), { timeout: 15000 * slow });
    assert.deepEqual((await d.get('/v1/dialogs')).json.dialogs, []);

    // The hostile description is text; its handler never runs.
    await chooseTool(page, 'echo');
    assert.ok((await text(page, '#tool-detail .desc')).includes(HOSTILE));
    assert.equal(await page.$('#tool-detail img[src="x"], img[src$="/x"]'), null);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);

    // A boolean is a checkbox at the start of its field, its label beside it
    // and its description on the line below, across the whole field.
    const box = await page.$eval('#tool-detail .field.check', (f) => {
      const r = (el) => el.getBoundingClientRect();
      const [field, input, label, hint] = [r(f), r(f.querySelector('input')), r(f.querySelector('label')), r(f.querySelector('.hint'))];
      return { fieldLeft: field.left, inputLeft: input.left, inputRight: input.right, labelLeft: label.left, hintLeft: hint.left, hintTop: hint.top, inputBottom: input.bottom };
    });
    assert.ok(box.inputRight - box.inputLeft < 32, `the checkbox is a box, not stretched: ${JSON.stringify(box)}`);
    assert.ok(box.labelLeft - box.fieldLeft < 48, `the label is beside the checkbox: ${JSON.stringify(box)}`);
    assert.ok(box.hintLeft - box.fieldLeft < 4 && box.hintTop >= box.inputBottom - 1, `the description is below: ${JSON.stringify(box)}`);

    // Try it: echo.
    await page.type('#tool-filter', 'ev_');
    await chooseTool(page, 'ev_echo');
    await page.type('#tool-detail input[data-name="message"]', 'hello from the page');
    await page.click('#tool-detail button[type="submit"]');
    await waitText(page, '#tool-detail .result pre', 'Echo: hello from the page');

    // Try it: an image, shown from its artifact.
    await chooseTool(page, 'ev_get-tiny-image');
    await page.click('#tool-detail button[type="submit"]');
    await page.waitForFunction(() => { const i = document.querySelector('#tool-detail .result img'); return i && i.complete && i.naturalWidth > 0; }, { timeout: 15000 * slow });
    await page.screenshot({ path: path.join(shots, 'ui-catalog.png'), fullPage: true });

    // Try it: an elicitation round answered in place.
    await chooseTool(page, 'ev_trigger-elicitation-request');
    await page.click('#tool-detail button[type="submit"]');
    await page.waitForSelector('#tool-detail .round input[data-name="name"]', { timeout: 15000 * slow });
    await page.type('#tool-detail .round input[data-name="name"]', 'Ann Example');
    await page.screenshot({ path: path.join(shots, 'ui-input-round.png'), fullPage: true });
    await page.click('#tool-detail .round button[type="submit"]');
    await waitText(page, '#tool-detail .result pre', '- Name: Ann Example');

    // Try it: a sampling round, the operator writing the model's reply.
    await chooseTool(page, 'ev_trigger-sampling-request');
    await page.type('#tool-detail input[data-name="prompt"]', 'say hi');
    await page.click('#tool-detail button[type="submit"]');
    await page.waitForSelector('#tool-detail .round textarea', { timeout: 15000 * slow });
    await waitText(page, '#tool-detail .round pre', 'context: say hi');
    await page.type('#tool-detail .round textarea', 'hi from the operator');
    await page.click('#tool-detail .round button[type="submit"]');
    await waitText(page, '#tool-detail .result pre', 'hi from the operator');

    // Events, newest first; the list holds still while scrolled.
    await waitText(page, '#event-list', 'released');
    for (let i = 0; i < 25; i++) assert.equal((await d.post('/v1/reload', {})).status, 200);
    await page.waitForFunction(() => document.querySelectorAll('#event-list li').length >= 25, { timeout: 15000 * slow });
    await page.screenshot({ path: path.join(shots, 'ui-events.png'), fullPage: true });
    const count = () => page.$$eval('#event-list li', (lis) => lis.length);
    const before = await count();
    await page.$eval('#event-list', (l) => { l.scrollTop = 60; l.dispatchEvent(new Event('scroll')); });
    assert.equal((await d.post('/v1/reload', {})).status, 200);
    await waitText(page, '#event-state', 'paused while scrolled: 1 new');
    assert.equal(await count(), before);
    assert.equal(await page.$eval('#event-list', (l) => l.scrollTop), 60);
    await page.click('#event-resume');
    await page.waitForFunction((n) => document.querySelectorAll('#event-list li').length === n + 1, {}, before);
    await page.select('#event-kind', 'lease');
    assert.ok(await page.$$eval('#event-list li', (lis) => lis.length > 0 && lis.every((li) => li.textContent.includes('lease'))));
    await page.select('#event-kind', '');
    // the stream's snapshot fills the cards; it is not an event to list
    assert.ok(!(await page.$eval('#event-list', (l) => l.textContent)).includes('snapshot'));

    // Accessibility, light and dark: no serious or critical violation.
    await page.evaluate(axeSource);
    for (const scheme of ['light', 'dark']) {
      await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
      const found = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`));
      assert.deepEqual(found, [], `axe-core, ${scheme}`);
    }
    await page.screenshot({ path: path.join(shots, 'ui-dark.png') });
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);

    // 400 px wide: nothing wider than the screen.
    await page.setViewport({ width: 400, height: 800 });
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 400), 'no horizontal scroll at 400 px');
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(shots, 'ui-narrow.png'), fullPage: true });

    assert.deepEqual(await page.evaluate(() => window.__csp), []);
    // Chromium logs every non-2xx answer to fetch() as a console error: the
    // 409 of the input round is the one expected; nothing else may be.
    assert.deepEqual(errors.filter((e) => !/status of 409 \(Conflict\)/.test(e)), []);
  } finally {
    await page.close();
    await d.stop();
  }
});

test('each stdio server\'s card says whether it is sandboxed: network, home, limits and whether they hold', async () => {
  const probe = path.join(fixtures, 'sandbox_probe');
  const stateDir = fs.mkdtempSync('/tmp/mcpgw-state-');
  const d = await start(`version: 1
servers:
  boxed:
    command: ${probe}
    sandbox: {home: dialog, memory: 64MiB, pids: 32}
  open:
    command: ${probe}
    sandbox: false
    transform: [{prefix: o_}]
`, { env: { STATE_DIRECTORY: stateDir }, waitReady: true });
  const { page, errors } = await openPage(d);
  try {
    const servers = (await d.get('/v1/servers')).json.servers;
    const boxed = servers.find((x) => x.id === 'boxed').sandbox;
    await waitText(page, '#server-list .sandbox', 'off in the config');
    const line = (id) => page.$eval(`[aria-labelledby="srv-${id}"] .sandbox`, (el) => el.textContent);
    assert.equal(await line('open'), 'sandbox offoff in the config');
    if (boxed.enforced) {
      const want = `sandbox onnetwork nonehome dialoglimits memory 64 MiB, pids 32, /tmp 64 MiB${boxed.limits.enforced ? '' : ' not enforced'}`;
      assert.equal(await line('boxed'), want);
      if (!boxed.limits.enforced) {
        const title = await page.$eval('[aria-labelledby="srv-boxed"] .sandbox span[title]', (el) => el.title);
        assert.equal(title, boxed.limits.reason);
      }
    } else {
      assert.equal(await line('boxed'), `sandbox off${boxed.reason}`);
    }
    await page.screenshot({ path: path.join(shots, 'ui-sandbox.png') });
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
    await d.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
});

test('with auth_token the page shows nothing before the token and works after it', async () => {
  const token = 'ui-test-token-123456';
  const d = await start(config({ token }), { files: { 'tools.json': tools } });
  const { page, errors } = await openPage(d);
  try {
    await page.waitForSelector('#login:not([hidden])');
    assert.equal(await page.$eval('#main', (m) => m.hidden), true);
    assert.equal(await text(page, '#server-list'), '');
    assert.equal((await d.get('/v1/servers')).status, 401, 'data routes still need the token');
    await page.type('#token', token);
    await page.click('#login button[type="submit"]');
    await waitText(page, '#server-list h3', 'everything');
    await waitText(page, '#facts', 'live');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('mcpgw.token')), token);
    assert.ok(!page.url().includes(token));
    await page.click('#reload');
    await waitText(page, '#status', 'Reloaded');
    // Chromium logs the 401 of the first read (before the token) as a
    // console error; nothing else may be.
    assert.deepEqual(errors.filter((e) => !/status of 401 \(Unauthorized\)/.test(e)), []);
    assert.deepEqual(await page.evaluate(() => window.__csp), []);
  } finally {
    await page.close();
    await d.stop();
  }
});

// Issue 35: given a client's token the page shows that client's view, and
// its admin actions only to an admin client.
test('with clients the page shows the client\'s own view; Reload only for an admin', async () => {
  const admin = 'ui-admin-token-123456', alice = 'ui-alice-token-123456';
  const yaml = config({ token: admin }).replace('servers:\n', `clients:\n  alice: {token: ${alice}, servers: [hostile]}\nservers:\n`);
  const d = await start(yaml, { files: { 'tools.json': tools } });
  try {
    for (const [tok, isAdmin] of [[alice, false], [admin, true]]) {
      const { page, errors } = await openPage(d);
      try {
        await page.waitForSelector('#login:not([hidden])');
        await page.type('#token', tok);
        await page.click('#login button[type="submit"]');
        await waitText(page, '#server-list h3', 'hostile');
        const names = await page.$$eval('#server-list h3', (hs) => hs.map((x) => x.textContent));
        assert.equal(names.some((n) => n.includes('everything')), isAdmin, names.join());
        assert.equal(await page.$eval('#reload', (b) => b.hidden), !isAdmin);
        assert.deepEqual(errors.filter((e) => !/status of 401 \(Unauthorized\)/.test(e)), []);
      } finally {
        await page.close();
      }
    }
  } finally {
    await d.stop();
  }
});
