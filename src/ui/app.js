// The status page: reads the gateway's JSON routes, follows /v1/events, and
// polls /v1/servers, /v1/dialogs and /metrics every 5 s while visible.
import { events, getJson, getText, postJson, request, token, Unauthorized } from './api.js';
import { setCatalog, setDialogs } from './catalog.js';
import { ago, badge, duration, h, replace, time } from './dom.js';
import { plot, sample } from './plot.js';

const $ = (id) => document.getElementById(id);
const POLL_MS = 5000;
const MAX_EVENTS = 500;

const state = { gateway: null, servers: [], dialogs: [], problems: new Map(), events: [], shownEvents: 0 };
const openStderr = new Set();
let streamUp = false;
let started = false;

function say(text, isError) {
  $('status').textContent = text;
  $('status').classList.toggle('error', Boolean(isError));
}

// Re-rendering keeps keyboard focus on the element with the same data-key.
function rerender(el, children) {
  const key = document.activeElement && el.contains(document.activeElement) ? document.activeElement.dataset.key : null;
  replace(el, children);
  if (key) el.querySelector(`[data-key="${CSS.escape(key)}"]`)?.focus();
}

/* ---- header ---- */

function fact(term, ...value) {
  return h('div', {}, h('dt', {}, term), h('dd', {}, ...value));
}

function wideFact(term, ...value) {
  const el = fact(term, ...value);
  el.className = 'wide';
  return el;
}

function renderFacts() {
  const g = state.gateway;
  if (!g) return;
  const byState = {};
  for (const s of state.servers) byState[s.state] = (byState[s.state] || 0) + 1;
  const instances = state.servers.reduce((n, s) => n + (s.instances || []).length, 0);
  const sev = { error: 0, warning: 0, info: 0 };
  for (const p of state.problems.values()) sev[p.severity] = (sev[p.severity] || 0) + 1;
  const r = g.lastReload;
  const uptime = g.uptimeSeconds + (Date.now() - state.gatewayAt) / 1000;
  $('version').textContent = `v${g.version}`;
  rerender($('facts'), [
    fact('Readiness', g.ready ? badge('ready') : badge('starting')),
    fact('Uptime', duration(uptime)),
    wideFact('Config', h('span', { class: 'mono' }, g.configPath || '–')),
    fact('Last reload', r ? [badge(r.ok ? 'ok' : 'refused'), ` ${time(r.at)} (${r.trigger})`, r.ok ? '' : ' · last known good kept'] : `none since start (loaded ${time(g.loadedAt)})`),
    fact('Servers', Object.keys(byState).length ? Object.entries(byState).map(([k, n], i) => [i ? ' · ' : '', `${n} ${k.replace(/_/g, ' ')}`]) : 'none'),
    fact('Instances', String(instances)),
    fact('Dialogs', String(state.dialogs.length)),
    fact('Problems', `${sev.error} errors · ${sev.warning} warnings · ${sev.info} info`),
    fact('Events', streamUp ? badge('live', 'ok') : badge('reconnecting', 'warning')),
  ]);
  $('problems-count').textContent = state.problems.size ? `(${state.problems.size})` : '';
}

/* ---- servers ---- */

function holderOf(server, instance) {
  for (const d of state.dialogs) for (const l of d.leases) if (l.server === server && l.instance === instance) return d.dialog;
  return null;
}

/* ---- OAuth: Authorize and Sign out ---- */

// A navigation cannot carry the token: the page asks the authorize route
// for the authorization server's URL and opens it in a new tab (opened
// before the request, so that no popup blocker stops it). The server sends
// the browser to /oauth/callback, which needs no token; the card follows
// the server's events.
async function authorize(id) {
  const tab = window.open('', '_blank');
  if (tab) tab.opener = null;
  try {
    const res = await request('GET', `/v1/servers/${encodeURIComponent(id)}/authorize`, undefined, { accept: 'application/json' });
    const body = await res.json().catch(() => null);
    if (res.status !== 200 || typeof body?.url !== 'string') throw new Error(`HTTP ${res.status} ${body?.error?.message || ''}`);
    if (tab) tab.location.href = body.url;
    else window.location.assign(body.url);
    say(`Authorizing ${id}: continue at the authorization server.`);
  } catch (err) {
    tab?.close();
    say(`Authorize failed: ${err.message}`, true);
  }
}

async function signOut(id) {
  try {
    const res = await request('DELETE', `/v1/servers/${encodeURIComponent(id)}/authorize`);
    say(res.ok ? `Signed out of ${id}: its grant is forgotten.` : `Sign out failed: HTTP ${res.status}`, !res.ok);
  } catch (err) {
    say(`Sign out failed: ${err.message}`, true);
  }
  refresh('servers');
}

function grantLine(s) {
  const g = s.grant;
  if (!g) return null;
  return h('p', { class: 'server-meta grant' },
    h('span', {}, 'authorized by ', h('b', { class: 'mono' }, g.issuer)),
    h('span', {}, 'scopes ', h('b', {}, g.scopes && g.scopes.length ? g.scopes.join(' ') : '–')),
    h('span', {}, 'expires ', h('b', {}, g.expiresAt ? `${time(g.expiresAt)}${g.refreshable ? ' (refreshed ahead)' : ''}` : 'never said')));
}

function size(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0;
  while (u < 4 && n >= 1024 && n % 1024 === 0) { n /= 1024; u++; }
  return `${n} ${units[u]}`;
}

// A stdio server's sandbox (S.sandbox): on or why not, and what it holds.
function sandboxLine(s) {
  const b = s.sandbox;
  if (!b) return null;
  if (!b.enforced) {
    return h('p', { class: 'server-meta sandbox' },
      h('span', {}, 'sandbox ', badge('off', b.reason === 'off in the config' ? 'info' : 'warning')), h('span', {}, b.reason || ''));
  }
  const l = b.limits || {};
  const limits = [l.memory && `memory ${size(l.memory)}`, l.pids && `pids ${l.pids}`, l.cpu && `cpu ${l.cpu}`, l.tmp && `/tmp ${size(l.tmp)}`].filter(Boolean);
  return h('p', { class: 'server-meta sandbox' },
    h('span', {}, 'sandbox ', badge('on', 'ready')),
    h('span', {}, 'network ', h('b', { class: 'mono' }, Array.isArray(b.network) ? b.network.join(' ') : b.network)),
    h('span', {}, 'home ', h('b', {}, b.home)),
    h('span', { title: l.enforced ? null : l.reason }, 'limits ', h('b', {}, limits.join(', ') || 'none'),
      l.enforced ? null : [' ', badge('not enforced', 'warning')]));
}

function serverCard(s) {
  const now = Date.now();
  const cfg = s.config || {};
  const sharing = s.sharedUpstream ? 'shared by every dialog' : cfg.mode ? `one per dialog (${cfg.mode})` : 'one per dialog';
  const stderrOpen = openStderr.has(s.id);
  const rows = (s.instances || []).map((i) => h('tr', {},
    h('td', { class: 'num' }, String(i.id)), h('td', {}, badge(i.state || '?')), h('td', { class: 'num' }, i.pid ? String(i.pid) : '–'),
    h('td', {}, holderOf(s.id, i.id) || (s.sharedUpstream ? 'all' : 'none')), h('td', {}, ago(i.since, now)),
    h('td', { class: 'num' }, String(i.calls ?? 0)), h('td', { class: 'num' }, String(i.inFlight ?? 0))));
  const stderr = [];
  for (const i of s.instances || []) if (i.stderrTail && i.stderrTail.length) stderr.push(`# instance ${i.id}\n${i.stderrTail.join('\n')}`);
  if (s.lastStderr && s.lastStderr.length) stderr.push(`# the last instance that died\n${s.lastStderr.join('\n')}`);
  return h('article', { class: 'card server', 'aria-labelledby': `srv-${s.id}` },
    h('div', { class: 'server-head' },
      h('h3', { id: `srv-${s.id}` }, s.id), badge(s.state),
      h('div', { class: 'server-actions' },
        s.state === 'needs_authorization' && admin() ? h('button', { type: 'button', class: 'primary', 'data-key': `authorize:${s.id}`, 'aria-label': `Authorize ${s.id}`, onclick: () => authorize(s.id) }, 'Authorize') : null,
        s.grant && admin() ? h('button', { type: 'button', 'data-key': `signout:${s.id}`, 'aria-label': `Sign out of ${s.id}`, onclick: () => signOut(s.id) }, 'Sign out') : null,
        h('button', { type: 'button', 'data-key': `stderr:${s.id}`, 'aria-expanded': String(stderrOpen), 'aria-controls': `stderr-${s.id}`,
          onclick: () => { if (stderrOpen) openStderr.delete(s.id); else openStderr.add(s.id); renderServers(); } }, stderrOpen ? 'Hide stderr' : 'Show stderr'))),
    h('div', { class: 'server-meta' },
      h('span', {}, 'transport ', h('b', {}, s.transport)), h('span', {}, 'protocol ', h('b', {}, s.protocolVersion || s.protocol || '–')),
      h('span', {}, 'instances ', h('b', {}, sharing)), h('span', {}, 'tools ', h('b', {}, String(s.tools ?? 0))),
      h('span', {}, 'restarts ', h('b', {}, String(s.restarts ?? 0)))),
    grantLine(s),
    sandboxLine(s),
    s.lastError ? h('p', { class: 'lasterror' }, `Last error: ${s.lastError}`) : null,
    rows.length ? h('div', { class: 'table-wrap' }, h('table', {},
      h('caption', { class: 'sr-only' }, `Instances of ${s.id}`),
      h('thead', {}, h('tr', {}, ['#', 'state', 'pid', 'dialog', 'age', 'calls', 'in flight'].map((c, i) => h('th', { scope: 'col', class: i === 0 || i === 2 || i > 4 ? 'num' : null }, c)))),
      h('tbody', {}, rows))) : h('p', { class: 'muted' }, 'No instance running.'),
    stderrOpen ? h('pre', { tabindex: 0, id: `stderr-${s.id}`, 'aria-label': `stderr of ${s.id}` }, stderr.join('\n\n') || '(nothing on stderr)') : null,
    plot(s.id));
}

function renderServers() {
  rerender($('server-list'), state.servers.length ? state.servers.map(serverCard) : h('p', { class: 'muted' }, 'No servers configured.'));
  const sel = $('event-server');
  const cur = sel.value;
  replace(sel, h('option', { value: '' }, 'all'), state.servers.map((s) => h('option', { value: s.id }, s.id)));
  sel.value = cur;
}

/* ---- dialogs ---- */

// An admin releases another client's dialog by naming that client.
const admin = () => state.gateway?.admin !== false;
const foreign = (client) => client && client !== state.gateway?.client;
async function release(dialog, server, client) {
  const r = await postJson(`/v1/dialogs/${dialog}/release`, { ...(server ? { serverId: server } : {}), ...(foreign(client) ? { client } : {}) });
  say(r.status === 200 ? `Released ${server || 'the tools found'} from ${dialog}.` : `Release failed: HTTP ${r.status} ${r.body?.error?.message || ''}`, r.status !== 200);
  refresh('dialogs', 'servers');
}

// Another client's dialog (an admin sees every client's) under its client.
const shownDialog = (d) => (foreign(d.client) ? `${d.client} · ${d.dialog}` : d.dialog);

function renderDialogs() {
  const now = Date.now();
  const rows = [];
  for (const d of state.dialogs) {
    for (const l of d.leases) {
      rows.push(h('tr', {}, h('td', { class: 'mono' }, shownDialog(d)), h('td', {}, l.server), h('td', { class: 'num' }, String(l.instance)),
        h('td', { class: 'num' }, l.pid ? String(l.pid) : '–'), h('td', {}, ago(l.since, now)), h('td', {}, ago(l.lastUsed, now)),
        h('td', { class: 'num' }, String(l.inFlight ?? 0)),
        h('td', {}, h('button', { type: 'button', 'data-key': `release:${d.dialog}:${l.server}`, 'aria-label': `Release ${l.server} from ${d.dialog}`, onclick: () => release(d.dialog, l.server, d.client) }, 'Release'))));
    }
    // A dialog holding no lease is listed for the tools it activated (tool search).
    if (!d.leases.length && d.activeTools?.length) {
      rows.push(h('tr', {}, h('td', { class: 'mono' }, shownDialog(d)), h('td', { colspan: 6, class: 'muted' }, `no lease · tools found: ${d.activeTools.join(', ')}`),
        h('td', {}, h('button', { type: 'button', 'data-key': `release:${d.dialog}:`, 'aria-label': `Release the tools found by ${d.dialog}`, onclick: () => release(d.dialog, undefined, d.client) }, 'Release'))));
    }
  }
  rerender($('dialog-list'), rows.length ? h('div', { class: 'table-wrap card' }, h('table', {},
    h('caption', { class: 'sr-only' }, 'Leases held by dialogs'),
    h('thead', {}, h('tr', {}, ['dialog', 'server', 'instance', 'pid', 'held for', 'idle', 'in flight', ''].map((c) => h('th', { scope: 'col' }, c || h('span', { class: 'sr-only' }, 'actions'))))),
    h('tbody', {}, rows))) : h('p', { class: 'muted' }, 'No dialog holds an instance.'));
  setDialogs(state.dialogs.map((d) => d.dialog).filter((d) => !d.startsWith('mcp-session:')));
}

/* ---- problems ---- */

function renderProblems() {
  const order = { error: 0, warning: 1, info: 2 };
  const ps = [...state.problems.values()].sort((a, b) => (order[a.severity] - order[b.severity]) || a.id.localeCompare(b.id));
  replace($('problem-list'), ps.length ? ps.map((p) => h('li', { 'data-id': p.id },
    h('div', { class: 'row' }, badge(p.severity), h('span', { class: 'muted' }, [p.scope, p.server, p.tool].filter(Boolean).join(' · ')), h('span', { class: 'muted' }, `since ${time(p.since)}`)),
    h('span', { class: 'msg mono' }, p.message))) : h('li', { class: 'muted' }, 'No problems.'));
  renderFacts();
}

/* ---- events ---- */

function summary(kind, d) {
  if (kind === 'problem') return `${d.cleared ? 'cleared' : d.severity}: ${d.message}`;
  if (kind === 'lease') return `${d.action} ${d.server} for ${d.dialog}${d.instance !== undefined ? ` (instance ${d.instance})` : ''}`;
  if (kind === 'server') return `${d.server} is ${d.state}${d.lastError ? `: ${d.lastError}` : ''}`;
  if (kind === 'catalog') return `version ${d.version}: ${d.server || ''} ${d.change || ''}`;
  if (kind === 'reload') return `${d.ok ? 'ok' : 'refused'} (${d.trigger}) ${['added', 'removed', 'changed', 'refused'].map((k) => (d[k] && d[k].length ? `${k} ${d[k].join(', ')}` : '')).filter(Boolean).join('; ')}${(d.errors || []).length ? ` · ${d.errors.join(' ')}` : ''}`;
  return JSON.stringify(d);
}

const list = $('event-list');
const paused = () => list.scrollTop > 4;

function renderEvents() {
  const kind = $('event-kind').value, server = $('event-server').value;
  const shown = state.events.filter((e) => (!kind || e.kind === kind) && (!server || e.data.server === server)).slice(-200).reverse();
  replace(list, shown.length ? shown.map((e) => h('li', {}, h('span', { class: 'muted' }, time(e.at)), h('span', {}, badge(e.kind, e.kind === 'problem' ? (e.data.cleared ? 'info' : e.data.severity) : e.data.state || e.data.action || 'info')), h('span', { class: 'data' }, summary(e.kind, e.data))))
    : h('li', { class: 'muted empty' }, 'No events yet.'));
  state.shownEvents = state.events.length;
  $('event-resume').hidden = true;
  $('event-state').textContent = '';
}

function eventsArrived() {
  if (!paused()) { renderEvents(); return; }
  const n = state.events.length - state.shownEvents;
  $('event-state').textContent = `paused while scrolled: ${n} new`;
  $('event-resume').hidden = false;
}

list.addEventListener('scroll', () => { if (!paused() && state.shownEvents !== state.events.length) renderEvents(); });
$('event-resume').addEventListener('click', () => { list.scrollTop = 0; renderEvents(); });
$('event-kind').addEventListener('change', renderEvents);
$('event-server').addEventListener('change', renderEvents);

function onEvent(kind, data) {
  if (kind === 'snapshot') { // the state when the stream began: not an event to list
    state.servers = data.servers;
    state.dialogs = data.dialogs;
    renderDialogs();
    renderServers();
    renderFacts();
    return;
  }
  state.events.push({ kind, data, at: new Date().toISOString() });
  if (state.events.length > MAX_EVENTS) state.events.splice(0, state.events.length - MAX_EVENTS);
  eventsArrived();
  if (kind === 'problem') {
    if (data.cleared) state.problems.delete(data.id);
    else state.problems.set(data.id, data);
    renderProblems();
  } else if (kind === 'lease') refresh('dialogs', 'servers');
  else if (kind === 'server' || kind === 'reload') refresh('servers', 'catalog');
  else if (kind === 'catalog') refresh('catalog', 'servers');
}

/* ---- loading ---- */

const loaders = {
  async servers() {
    const r = await getJson('/v1/servers');
    state.gateway = r.gateway;
    state.gatewayAt = Date.now();
    state.servers = r.servers;
    renderServers();
    renderFacts();
  },
  async dialogs() {
    state.dialogs = (await getJson('/v1/dialogs')).dialogs;
    renderDialogs();
    renderServers();
    renderFacts();
  },
  async problems() {
    state.problems = new Map((await getJson('/v1/problems')).problems.map((p) => [p.id, p]));
    renderProblems();
  },
  async catalog() {
    const [t, s] = await Promise.all([getJson('/v1/tools'), getJson('/v1/toolsets')]);
    setCatalog(t.tools, s.toolsets);
  },
  async metrics() {
    sample(await getText('/metrics'));
  },
};

// Event-driven reads are coalesced: each resource at most once a second.
const lastRun = new Map();
const pending = new Set();
let timer = null;
function refresh(...what) {
  for (const w of what) pending.add(w);
  if (timer) return;
  const wait = Math.max(0, ...[...pending].map((w) => 1000 - (Date.now() - (lastRun.get(w) || 0))));
  timer = setTimeout(() => {
    timer = null;
    const run = [...pending];
    pending.clear();
    load(run);
  }, wait);
}

async function load(which) {
  for (const w of which) lastRun.set(w, Date.now());
  try {
    await Promise.all(which.map((w) => loaders[w]()));
  } catch (err) {
    if (err instanceof Unauthorized) { locked('The token was refused; enter it again.'); return; }
    say(`Could not read the gateway: ${err.message}`, true);
  }
}

async function poll() {
  if (!started) return;
  if (document.visibilityState === 'visible') {
    // a client that is no admin reads no /metrics
    await load(admin() ? ['metrics', 'servers', 'dialogs'] : ['servers', 'dialogs']);
  }
  setTimeout(poll, POLL_MS);
}

function locked(message) {
  token.clear();
  started = false;
  $('main').hidden = true;
  $('reload').hidden = true;
  $('forget').hidden = true;
  $('login').hidden = false;
  $('login-error').textContent = message || '';
  $('token').focus();
}

async function open() {
  try {
    await loaders.servers();
  } catch (err) {
    if (err instanceof Unauthorized) { locked(token.get() ? 'The token was refused.' : ''); return; }
    say(`Could not read the gateway: ${err.message}`, true);
    return;
  }
  $('login').hidden = true;
  $('main').hidden = false;
  $('reload').hidden = !admin();
  $('forget').hidden = !token.get();
  started = true;
  await load(admin() ? ['dialogs', 'problems', 'catalog', 'metrics'] : ['dialogs', 'problems', 'catalog']);
  renderEvents();
  events(onEvent, (up) => { streamUp = up; renderFacts(); if (up) refresh('servers', 'dialogs', 'problems', 'catalog'); }, () => locked('The token was refused; enter it again.'));
  setTimeout(poll, POLL_MS);
  // The clock of the header only: no request.
  setInterval(renderFacts, 1000);
}

$('login').addEventListener('submit', (e) => {
  e.preventDefault();
  token.set($('token').value);
  $('token').value = '';
  open();
});
$('forget').addEventListener('click', () => { locked('Token forgotten.'); });
$('reload').addEventListener('click', async () => {
  $('reload').disabled = true;
  try {
    const r = await postJson('/v1/reload', {});
    const b = r.body || {};
    say(r.status === 200 ? `Reloaded: ${['added', 'removed', 'changed', 'refused'].map((k) => `${(b[k] || []).length} ${k}`).join(', ')}.` : `Reload refused: ${(b.errors || []).join(' ')}`, r.status !== 200);
  } catch (err) {
    say(`Reload failed: ${err.message}`, true);
  }
  $('reload').disabled = false;
  refresh('servers', 'catalog');
});

open();
