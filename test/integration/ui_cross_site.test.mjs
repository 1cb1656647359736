// Cross-site requests from a real browser (Debian's chromium through
// puppeteer-core): a hostile page served by another process on another
// loopback port (127.0.0.1 — same-site to the gateway — and localhost —
// cross-site) fires every request a page may send without a CORS
// preflight at the gateway, which has no auth_token: forms (text/plain,
// urlencoded, multipart), no-cors fetch with and without a body,
// sendBeacon, a JSON fetch that needs a preflight, an <img>, an <iframe>
// and a no-cors fetch of the authorize route. Nothing may happen: no
// reload, no tool call (REST or /mcp), no release of a held lease, no
// OAuth discovery or registration at the fixture's authorization server;
// every request that reached the gateway was refused. Then the same from
// an origin listed in gateway.allowed_origins: the Origin passes, and the
// content type and Fetch Metadata still refuse. A person who followed a
// cross-site link to the authorize route gets a page whose own link goes
// on to the authorization server. Last, the status page itself, opened as
// 127.0.0.1 or as localhost, still reloads and starts an authorization.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { launchChromium } from './lib/chromium.mjs';
import { start, fixtures, tmpdir, waitFor, slow } from './lib/harness.mjs';
import { oauthServer } from './lib/oauth.mjs';

let browser;
before(async () => { browser = await launchChromium(); });
after(async () => { await browser?.close(); });

// The hostile page: `gw` is the gateway's base URL. It says when it has
// sent everything (a beacon is only queued).
const hostilePage = (gw) => `<!doctype html><meta charset=utf-8><title>hostile</title>
<iframe name=s1></iframe><iframe name=s2></iframe><iframe name=s3></iframe>
<form id=f1 target=s1 method=post enctype=text/plain action="${gw}/v1/reload"><input name='{"a":"' value='"}'></form>
<form id=f2 target=s2 method=post action="${gw}/v1/tools/echo/call"><input name=dialog value=x></form>
<form id=f3 target=s3 method=post enctype=multipart/form-data action="${gw}/v1/dialogs/held/release"><input name=a value=b></form>
<script>
(async () => {
  const gw = ${JSON.stringify(gw)};
  const call = JSON.stringify({ dialog: 'evil', arguments: { text: 'from another site' } });
  const rpc = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } });
  const quiet = (p) => p.then(() => 'sent', (e) => String(e));
  const done = [];
  for (const f of ['f1', 'f2', 'f3']) document.getElementById(f).submit();
  done.push(quiet(fetch(gw + '/v1/reload', { method: 'POST', mode: 'no-cors' })));
  done.push(quiet(fetch(gw + '/v1/tools/echo/call', { method: 'POST', mode: 'no-cors', body: call })));
  done.push(quiet(fetch(gw + '/v1/dialogs/held/release', { method: 'POST', mode: 'no-cors' })));
  done.push(quiet(fetch(gw + '/mcp', { method: 'POST', mode: 'no-cors', body: rpc })));
  done.push(quiet(fetch(gw + '/v1/reload', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })));
  navigator.sendBeacon(gw + '/v1/reload');
  navigator.sendBeacon(gw + '/v1/tools/echo/call', call);
  navigator.sendBeacon(gw + '/v1/dialogs/held/release', new Blob(['{}'], { type: 'text/plain' }));
  done.push(quiet(fetch(gw + '/v1/servers/secured/authorize', { mode: 'no-cors' })));
  done.push(new Promise((resolve) => {
    const img = new Image();
    img.onload = img.onerror = () => resolve('img');
    img.src = gw + '/v1/servers/secured/authorize';
  }));
  const frame = document.createElement('iframe');
  done.push(new Promise((resolve) => { frame.onload = () => resolve('iframe'); }));
  frame.src = gw + '/v1/servers/secured/authorize';
  document.body.append(frame);
  window.__results = await Promise.all(done);
})();
</script>`;

// Serves `html` at / on 127.0.0.1 at a port of the kernel's choice.
async function hostileServer(html) {
  const srv = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html());
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return { port: srv.address().port, close: () => new Promise((resolve) => { srv.close(resolve); srv.closeAllConnections(); }) };
}

// The requests the page sends at least, by "METHOD path" (the form POSTs,
// fetches and beacons; the JSON fetch's preflight; the three GETs of the
// authorize route).
const EXPECTED = {
  'POST /v1/reload': 3, 'POST /v1/tools/echo/call': 3, 'POST /v1/dialogs/held/release': 3, 'POST /mcp': 1,
  'OPTIONS /v1/reload': 1, 'GET /v1/servers/secured/authorize': 3,
};

function answered(d) {
  const seen = {};
  for (const m of d.stderr.slice(d.attackedFrom).matchAll(/msg=http method=(\S+) path=(\S+) status=(\d+)/g)) {
    const key = `${m[1]} ${m[2]}`;
    if (key in EXPECTED) (seen[key] ??= []).push(Number(m[3]));
  }
  return seen;
}

async function setup(t, extra = '') {
  const as = await oauthServer();
  t.after(() => as.stop());
  const dir = tmpdir();
  const log = path.join(dir, 'calls.log');
  const yaml = `version: 1\ngateway:\n  warm_spares: 0\n${extra}servers:\n`
    + `  fx:\n    command: ${path.join(fixtures, 'mcp_fixture')}\n    args: [--log, ${log}]\n`
    + `  secured:\n    transport: streamable_http\n    url: ${as.url}\n`;
  const d = await start(yaml, { env: { XDG_STATE_HOME: dir, STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  // both servers settled: `secured` asks for authorization, `fx` is ready
  // (under load the first may get there first)
  await waitFor(async () => {
    const servers = (await d.get('/v1/servers')).json.servers;
    return servers.find((s) => s.id === 'secured')?.state === 'needs_authorization' && servers.find((s) => s.id === 'fx')?.state === 'ready';
  }, 20000 * slow);
  const held = await d.post('/v1/tools/echo/call', { dialog: 'held', arguments: { text: 'mine' } });
  assert.equal(held.status, 200, held.body);
  const calls = () => fs.readFileSync(log, 'utf8').split('\n').filter((l) => l === 'tools/call').length;
  assert.equal(calls(), 1);
  await d.waitLog(/method=POST path=\/v1\/tools\/echo\/call status=200/); // before the attack's log
  return { as, d, calls };
}

async function attack(t, d, origin) {
  d.attackedFrom = d.stderr.length;
  const page = await browser.newPage();
  t.after(() => page.close());
  await page.goto(`${origin}/`, { waitUntil: 'load' });
  await page.waitForFunction(() => window.__results, { timeout: 20000 * slow });
  // Each request reached the gateway (a beacon is sent after the page
  // moves on): wait for the access log, bounded.
  await waitFor(() => Object.entries(EXPECTED).every(([k, n]) => (answered(d)[k] ?? []).length >= n), 20000 * slow)
    .catch(() => assert.fail(`not every request arrived: ${JSON.stringify(answered(d))}`));
}

async function nothingHappened(d, as, calls, metaBefore) {
  const seen = answered(d);
  const let_through = Object.entries(seen).filter(([k, st]) => st.some((s) => s < 400 && !k.startsWith('OPTIONS')));
  assert.deepEqual(let_through, [], `answered below 400: ${JSON.stringify(seen)}`);
  const g = (await d.get('/v1/servers')).json;
  assert.equal(g.gateway.lastReload, null, 'no reload');
  assert.equal(calls(), 1, 'no tool call');
  const dialogs = (await d.get('/v1/dialogs')).json;
  assert.match(JSON.stringify(dialogs), /"held"/, 'the lease is still held');
  assert.doesNotMatch(JSON.stringify(dialogs), /"evil"/);
  assert.deepEqual(as.events.filter((e) => e.event === 'register' || e.event === 'authorize'), [], 'no registration, no authorization');
  assert.equal(as.events.filter((e) => e.event === 'metadata').length, metaBefore, 'no discovery');
  assert.equal(g.servers.find((s) => s.id === 'secured').state, 'needs_authorization');
}

for (const host of ['127.0.0.1', 'localhost']) {
  test(`a page at ${host} on another port changes nothing`, async (t) => {
    const { as, d, calls } = await setup(t);
    const hostile = await hostileServer(() => hostilePage(`http://127.0.0.1:${d.port}`));
    t.after(() => hostile.close());
    const metaBefore = as.events.filter((e) => e.event === 'metadata').length;
    await attack(t, d, `http://${host}:${hostile.port}`);
    await nothingHappened(d, as, calls, metaBefore);
    const seen = answered(d);
    assert.ok(seen['POST /v1/reload'].every((s) => s === 403), `Origin refused: ${JSON.stringify(seen)}`);
  });
}

test('a page at an allowed origin still cannot POST without JSON nor start an authorization by GET', async (t) => {
  let gw;
  const hostile = await hostileServer(() => hostilePage(gw));
  t.after(() => hostile.close());
  const { as, d, calls } = await setup(t, `  allowed_origins: ['http://127.0.0.1:${hostile.port}']\n`);
  gw = `http://127.0.0.1:${d.port}`;
  const metaBefore = as.events.filter((e) => e.event === 'metadata').length;
  await attack(t, d, `http://127.0.0.1:${hostile.port}`);
  await nothingHappened(d, as, calls, metaBefore);
  const seen = answered(d);
  for (const k of ['POST /v1/reload', 'POST /v1/tools/echo/call', 'POST /v1/dialogs/held/release', 'POST /mcp']) {
    assert.ok(seen[k].every((s) => s === 415), `${k}: ${JSON.stringify(seen[k])}`);
  }
  assert.ok(seen['GET /v1/servers/secured/authorize'].every((s) => s === 403), JSON.stringify(seen));
});

test('a person sent to the authorize link by another site goes on from the gateway\'s own page', async (t) => {
  const { as, d } = await setup(t);
  const gw = `http://127.0.0.1:${d.port}`;
  const link = await hostileServer(() => `<!doctype html><a id=go href="${gw}/v1/servers/secured/authorize">authorize</a>`);
  t.after(() => link.close());
  const page = await browser.newPage();
  t.after(() => page.close());
  await page.goto(`http://localhost:${link.port}/`, { waitUntil: 'load' });
  await Promise.all([page.waitForNavigation(), page.click('#go')]);
  assert.equal(page.url(), `${gw}/v1/servers/secured/authorize`);
  assert.match(await page.$eval('h1', (el) => el.textContent), /Authorize secured\?/);
  assert.equal(as.events.filter((e) => e.event === 'register').length, 0);
  // Its link, from the gateway's origin, starts the flow: the fixture's
  // authorization server approves at once and sends the browser back.
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('a')]);
  await page.waitForFunction(() => document.body?.textContent.includes('secured is authorized'), { timeout: 20000 * slow });
  assert.equal(as.events.filter((e) => e.event === 'register').length, 1);
  await waitFor(async () => (await d.get('/v1/servers')).json.servers.find((s) => s.id === 'secured').state === 'ready', 20000 * slow);
});

test('the page itself, opened as 127.0.0.1 or localhost, still reloads; Authorize still starts the flow', async (t) => {
  const { as, d } = await setup(t);
  let page;
  for (const host of ['127.0.0.1', 'localhost']) {
    const opened = page = await browser.newPage();
    t.after(() => opened.close());
    await page.goto(`http://${host}:${d.port}/`, { waitUntil: 'load' });
    await page.waitForSelector('#reload:not([hidden])');
    await page.click('#reload');
    await page.waitForFunction(() => /Reloaded/.test(document.querySelector('#status')?.textContent), { timeout: 20000 * slow });
  }
  assert.equal((await d.get('/v1/servers')).json.gateway.lastReload.ok, true);
  // Authorize (on the localhost page) asks the route for the URL, from its
  // own origin, and opens it in a new tab: the flow starts.
  await page.waitForSelector('[data-key="authorize:secured"]');
  const opened = new Promise((resolve) => browser.once('targetcreated', resolve));
  await page.locator('[data-key="authorize:secured"]').click();
  const tab = await (await opened).page();
  t.after(() => tab?.close().catch(() => {}));
  await waitFor(() => as.events.some((e) => e.event === 'register'), 20000 * slow);
  await waitFor(async () => (await d.get('/v1/servers')).json.servers.find((s) => s.id === 'secured').state === 'ready', 20000 * slow);
});
