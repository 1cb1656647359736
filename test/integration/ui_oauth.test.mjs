// The status page's Authorize and Sign out, in a real browser (Debian's
// chromium through puppeteer-core) with gateway.auth_token set, against a
// real authorization server (oidc-provider, test/fixtures/oidc_server.mjs)
// in front of an MCP server that requires its tokens: Authorize opens the
// provider's login page in a new tab (the page asked the authorize route
// for its URL with the token), the provider sends the browser back to
// /oauth/callback, the card then shows the grant (issuer, scopes, expiry)
// and Sign out, and Sign out returns the server to needs_authorization.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium } from './lib/chromium.mjs';
import { start, waitFor, tmpdir, slow } from './lib/harness.mjs';
import { oidcServer } from './lib/oidc.mjs';

const TOKEN = 'ui-oauth-token-123456';
const auth = { headers: { authorization: `Bearer ${TOKEN}` } };

let browser;
before(async () => {
  browser = await launchChromium();
});
after(async () => { await browser?.close(); });

const server = async (d) => (await d.get('/v1/servers', auth)).json.servers.find((s) => s.id === 'idp');

async function waitText(page, sel, needle, timeout = 20000 * slow) {
  await page.waitForFunction((s, n) => [...document.querySelectorAll(s)].some((el) => el.textContent.includes(n)), { timeout }, sel, needle);
}

test('Authorize goes through the authorization server and back; the card shows the grant; Sign out withdraws it', async (t) => {
  const as = await oidcServer();
  t.after(() => as.stop());
  const yaml = `version: 1\ngateway:\n  auth_token: ${TOKEN}\nservers:\n  idp:\n    transport: streamable_http\n    url: ${as.url}\n`;
  const d = await start(yaml, { env: { XDG_STATE_HOME: tmpdir(), STATE_DIRECTORY: '' } });
  t.after(() => d.stop());
  await waitFor(async () => (await server(d)).state === 'needs_authorization');

  // The route the page uses: with Accept: application/json, the URL in JSON.
  const asked = await d.get('/v1/servers/idp/authorize', { headers: { ...auth.headers, accept: 'application/json' } });
  assert.equal(asked.status, 200, asked.body);
  assert.equal(asked.headers['cache-control'], 'no-store');
  const issuer = new URL(asked.json.url).origin;
  assert.notEqual(issuer, new URL(as.url).origin, 'the authorization server is not the MCP server');

  const page = await browser.newPage();
  t.after(() => page.close());
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' && !/status of 401/.test(m.text())) errors.push(`console: ${m.text()}`); });
  await page.evaluateOnNewDocument(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto(`http://127.0.0.1:${d.port}/`, { waitUntil: 'load' });
  await page.waitForSelector('#login:not([hidden])');
  await page.type('#token', TOKEN);
  await page.click('#login button[type="submit"]');
  await page.waitForSelector('[data-key="authorize:idp"]');
  assert.equal(await page.$('[data-key="signout:idp"]'), null, 'no Sign out without a grant');

  // Authorize opens the provider's page in a new tab: log in there (its
  // development login takes any name and password), continue on its
  // consent page, and land on the gateway's callback.
  const opened = new Promise((resolve) => browser.once('targetcreated', resolve));
  // a locator: the card is drawn again on every event, and a handle found
  // just before may be gone when clicked
  await page.locator('[data-key="authorize:idp"]').click();
  const tab = await (await opened).page();
  t.after(() => tab.close().catch(() => {}));
  await tab.waitForSelector('input[name="login"]', { timeout: 20000 * slow });
  assert.equal(new URL(tab.url()).origin, issuer, 'the tab is at the authorization server');
  await tab.type('input[name="login"]', 'alice');
  await tab.type('input[name="password"]', 'pw');
  for (let step = 0; new URL(tab.url()).pathname !== '/oauth/callback'; step++) {
    assert.ok(step < 5, `stuck at ${tab.url()}`);
    assert.equal(new URL(tab.url()).origin, issuer);
    await Promise.all([tab.waitForNavigation({ timeout: 20000 * slow }), tab.click('form[method="post"] button[type="submit"]')]);
  }
  await tab.waitForFunction(() => document.body?.textContent.includes('idp is authorized'), { timeout: 20000 * slow });

  await tab.close();
  await page.bringToFront();

  // The status page follows the server's events: the grant and Sign out.
  await page.waitForSelector('[data-key="signout:idp"]', { timeout: 20000 * slow });
  await waitText(page, '.grant', issuer);
  await waitText(page, '.grant', 'mcp:tools');
  assert.equal(await page.$('[data-key="authorize:idp"]'), null, 'no Authorize once granted');
  const s = await server(d);
  assert.deepEqual(Object.keys(s.grant).sort(), ['expiresAt', 'issuer', 'refreshable', 'scopes']);
  assert.equal(s.grant.issuer, issuer);
  assert.ok(s.grant.scopes.includes('mcp:tools'));
  assert.equal(s.grant.refreshable, true);
  assert.ok(Date.parse(s.grant.expiresAt) > Date.now());
  await waitFor(async () => (await server(d)).tools > 0, 20000 * slow);

  // Sign out: DELETE, then the card goes back to needs_authorization.
  await page.locator('[data-key="signout:idp"]').click();
  await page.waitForSelector('[data-key="authorize:idp"]', { timeout: 20000 * slow });
  await waitText(page, '#server-list .badge', 'needs_authorization');
  assert.equal(await page.$('[data-key="signout:idp"]'), null);
  assert.equal(await page.$('.grant'), null);
  const after = await server(d);
  assert.equal(after.state, 'needs_authorization');
  assert.equal(after.grant, undefined);

  assert.deepEqual(errors, []);
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
});
