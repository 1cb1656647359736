// Hot reload (design §8, seed 000): watch, diff, per-server commit, last
// known good, draining, versions and events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { start, waitFor, sleep, fixtures, slow, sseReader } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const alive = (pid) => {
  try { return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] !== 'Z'; } catch { return false; }
};

// Writes the config the way editors do: a temporary file renamed over it.
function rewrite(d, yaml) {
  const tmp = `${d.configPath}.tmp${Math.random().toString(36).slice(2)}`;
  fs.writeFileSync(tmp, yaml);
  fs.renameSync(tmp, d.configPath);
}

const server = (id, extra = '') => `  ${id}:\n    command: ${FIXTURE}\n${extra}`;
const names = async (d) => (await d.get('/v1/tools')).json.tools.map((t) => t.name);
const srv = async (d, id) => (await d.get('/v1/servers')).json.servers.find((s) => s.id === id);
const pidOf = async (d, id) => (await srv(d, id)).instances.find((i) => i.role !== 'retired').pid;

// Collects Server-Sent Events from /v1/events.
function events(d) {
  const got = [];
  const req = http.get({ host: d.host, port: d.port, path: '/v1/events' }, (res) => {
    res.setEncoding('utf8');
    res.on('data', sseReader((ev) => {
      if (ev.event) got.push({ id: Number(ev.id), type: ev.event, data: JSON.parse(ev.data) });
    }));
  });
  req.on('error', () => {});
  return { got, close: () => req.destroy() };
}

test('file watch: add, catalog-only change in place, spawn change replaces, delete and re-create', async (t) => {
  const base = 'version: 1\ngateway:\n  reload: {debounce_ms: 100, poll_interval_ms: 200}\nservers:\n';
  const d = await start(base + server('a', "    truely-stateless: true\n    transform: [{prefix: 'a_'}]\n"), { waitReady: true });
  t.after(() => d.stop());
  const ev = events(d);
  t.after(() => ev.close());
  await sleep(100);
  const pidA = await pidOf(d, 'a');
  const v0 = (await d.get('/v1/tools')).json.version;

  rewrite(d, base + server('a', "    truely-stateless: true\n    transform: [{prefix: 'a_'}]\n") + server('b', "    transform: [{prefix: 'b_'}]\n"));
  await waitFor(async () => (await names(d)).includes('b_echo'));
  assert.equal(await pidOf(d, 'a'), pidA, 'an unchanged server keeps its process');
  const v1 = (await d.get('/v1/tools')).json.version;
  assert.equal(v1, v0 + 1, 'one commit, one version');

  rewrite(d, base + server('a', "    truely-stateless: true\n    transform: [{prefix: 'x_'}]\n") + server('b', "    transform: [{prefix: 'b_'}]\n"));
  await waitFor(async () => (await names(d)).includes('x_echo'));
  assert.ok(!(await names(d)).includes('a_echo'));
  assert.equal(await pidOf(d, 'a'), pidA, 'a catalog-only change keeps the process (in place)');

  rewrite(d, base + server('a', "    truely-stateless: true\n    args: ['--tools', '1']\n    transform: [{prefix: 'x_'}]\n") + server('b', "    transform: [{prefix: 'b_'}]\n"));
  await waitFor(async () => (await names(d)).includes('x_tool_0'));
  const pidA2 = await pidOf(d, 'a');
  assert.notEqual(pidA2, pidA, 'a spawn change replaces the process');
  await waitFor(() => !alive(pidA), 10000 * slow);

  const pidB = await pidOf(d, 'b');
  fs.unlinkSync(d.configPath);
  await waitFor(async () => (await d.get('/v1/toolsets')).json.toolsets.length === 1);
  assert.deepEqual(await names(d), ['mcp_release']);
  await waitFor(() => !alive(pidA2) && !alive(pidB), 10000 * slow);
  assert.deepEqual((await d.get('/v1/servers')).json.servers, []);

  rewrite(d, base + server('a', "    truely-stateless: true\n"));
  await waitFor(async () => (await names(d)).includes('echo'));

  const types = new Set(ev.got.map((e) => e.type));
  for (const ty of ['catalog', 'server', 'reload']) assert.ok(types.has(ty), `a ${ty} event (${[...types]})`);
  const cat = ev.got.filter((e) => e.type === 'catalog');
  assert.ok(cat.some((e) => e.data.server === 'b' && e.data.change === 'added'));
  assert.ok(cat.some((e) => e.data.change === 'removed'));
  assert.equal(ev.got[0].type, 'snapshot');
  const ids = ev.got.slice(1).map((e) => e.id);
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], 'ids increase');
});

test('a replaced server drains in-flight calls; leases move and say restarted', async (t) => {
  const d = await start('version: 1\nservers:\n' + server('s', "    args: ['--delay-ms', '800']\n"), { waitReady: true });
  t.after(() => d.stop());
  const ev = events(d);
  t.after(() => ev.close());
  assert.equal((await d.post('/v1/tools/echo/call', { dialog: 'd1', arguments: { text: 'x' } })).status, 200);
  const oldPid = (await d.get('/v1/dialogs')).json.dialogs[0].leases[0].pid;
  const inflight = d.post('/v1/tools/echo/call', { dialog: 'd1', arguments: { text: 'slow' } });
  await sleep(100);
  fs.writeFileSync(d.configPath, 'version: 1\nservers:\n' + server('s', "    args: ['--delay-ms', '10']\n"));
  const r = await d.post('/v1/reload', {});
  assert.equal(r.status, 200, r.body);
  assert.deepEqual(r.json.changed, ['s']);
  assert.equal(r.json.ok, true);
  const done = await inflight;
  assert.equal(done.status, 200, 'the in-flight call finishes on the old instance');
  assert.equal(done.json.contentItems[0].text, 'slow');
  await waitFor(async () => (await srv(d, 's')).config && !alive(oldPid), 15000 * slow);
  const next = await d.post('/v1/tools/echo/call', { dialog: 'd1', arguments: { text: 'y' } });
  assert.equal(next.status, 200, next.body);
  assert.equal(next.json.lease.restarted, true);
  assert.notEqual((await d.get('/v1/dialogs')).json.dialogs[0].leases[0].pid, oldPid);
  assert.ok(ev.got.some((e) => e.type === 'lease' && e.data.dialog === 'd1'));
});

test('a failed server update keeps the last known good; workspace errors refuse the reload', async (t) => {
  const good = 'version: 1\nservers:\n' + server('s', "    truely-stateless: true\n") + server('o', "    truely-stateless: true\n    transform: [{prefix: 'o_'}]\n");
  const d = await start(good, { waitReady: true });
  t.after(() => d.stop());
  const pid = await pidOf(d, 's');
  const v = (await d.get('/v1/tools')).json.version;

  // The new command crashes during initialize: s keeps its old instance, o commits.
  fs.writeFileSync(d.configPath, 'version: 1\nservers:\n' + server('s', "    truely-stateless: true\n    args: ['--crash-on-init']\n") + server('o', "    truely-stateless: true\n    transform: [{prefix: 'p_'}]\n"));
  let r = await d.post('/v1/reload', {});
  assert.equal(r.status, 200);
  await waitFor(async () => (await d.get('/v1/problems')).json.problems.some((p) => p.id === 'server:s:reload'));
  assert.equal(await pidOf(d, 's'), pid, 'the last known good instance keeps serving');
  assert.equal((await d.post('/v1/tools/echo/call', { arguments: { text: 'still' } })).status, 200);
  assert.ok((await names(d)).includes('p_echo'), 'the other server committed');

  // A config error in one server: refused for it alone.
  fs.writeFileSync(d.configPath, 'version: 1\nservers:\n' + server('s', "    truely-stateless: true\n    transport: pigeon\n") + server('o', "    truely-stateless: true\n    transform: [{prefix: 'p_'}]\n"));
  r = await d.post('/v1/reload', {});
  assert.deepEqual(r.json.refused, ['s']);
  assert.equal(await pidOf(d, 's'), pid);

  // Workspace-level: the whole reload is refused.
  fs.writeFileSync(d.configPath, 'version: 1\nservers:\n  s: {command: x}\n  s: {command: y}\n');
  r = await d.post('/v1/reload', {});
  assert.equal(r.status, 422);
  assert.equal(r.json.ok, false);
  assert.ok(r.json.errors.some((e) => /duplicate/i.test(e)), JSON.stringify(r.json.errors));
  assert.ok((await names(d)).includes('p_echo'));
  assert.equal(await pidOf(d, 's'), pid);

  // Fixed: problems clear, the version moved on.
  fs.writeFileSync(d.configPath, good);
  r = await d.post('/v1/reload', {});
  assert.equal(r.status, 200);
  await waitFor(async () => !(await d.get('/v1/problems')).json.problems.some((p) => p.server === 's' || p.scope === 'workspace'));
  assert.ok((await d.get('/v1/tools')).json.version > v);
});

test('events: problems, reload summaries, heartbeat-safe stream, Last-Event-ID replay', async (t) => {
  const d = await start('version: 1\nservers:\n' + server('s', "    truely-stateless: true\n"), { waitReady: true });
  t.after(() => d.stop());
  const ev = events(d);
  t.after(() => ev.close());
  await sleep(100);
  fs.writeFileSync(d.configPath, 'version: 1\nservers:\n' + server('s', "    truely-stateless: true\n    typo_key: 1\n"));
  d.child.kill('SIGHUP');
  await waitFor(() => ev.got.some((e) => e.type === 'problem' && /typo_key/.test(e.data.message)));
  await waitFor(() => ev.got.some((e) => e.type === 'reload' && e.data.trigger === 'sighup'));
  const last = ev.got[ev.got.length - 1].id;
  const replay = await new Promise((resolve) => {
    const req = http.get({ host: d.host, port: d.port, path: '/v1/events', headers: { 'last-event-id': String(last - 1) } }, (res) => {
      let buf = '';
      res.on('data', (c) => { buf += c; if (buf.includes(`id: ${last}\n`)) { req.destroy(); resolve(buf); } });
    });
    req.on('error', () => {});
  });
  assert.match(replay, new RegExp(`id: ${last}\\n`));
  assert.ok(!replay.includes(`id: ${last - 1}\n`), 'only what came after Last-Event-ID');
});

// One /v1/events connection's events until `until` holds of them (or 10 s).
function stream(d, headers, until) {
  return new Promise((resolve, reject) => {
    const got = [];
    const req = http.get({ host: d.host, port: d.port, path: '/v1/events', headers }, (res) => {
      res.setEncoding('utf8');
      res.on('data', sseReader((ev) => {
        if (!ev.event) return;
        got.push({ id: ev.id, type: ev.event, data: JSON.parse(ev.data) });
        if (until(got)) { clearTimeout(timer); req.destroy(); resolve(got); }
      }));
    });
    const timer = setTimeout(() => { req.destroy(); reject(new Error(`no such events: ${JSON.stringify(got)}`)); }, 10000 * slow);
    req.on('error', () => {});
  });
}

test('events: a stream starts with a snapshot of the servers and dialogs; a resume that lost nothing does not', async (t) => {
  const d = await start('version: 1\nservers:\n' + server('s', "    truely-stateless: true\n") + server('l', "    transform: [{prefix: 'l_'}]\n"), { waitReady: true });
  t.after(() => d.stop());
  assert.equal((await d.post('/v1/tools/l_echo/call', { dialog: 'd1', arguments: { text: 'x' } })).status, 200);
  const [first, ...rest] = await stream(d, {}, (got) => got.length >= 1);
  assert.equal(first.type, 'snapshot');
  assert.equal(first.id, undefined, 'the snapshot has no id of its own');
  assert.equal(rest.length, 0);
  assert.deepEqual(first.data.servers.map((x) => [x.id, x.state]), [['s', 'ready'], ['l', 'ready']]);
  assert.deepEqual(Object.keys(first.data.servers[0]), Object.keys((await d.get('/v1/servers')).json.servers[0]), 'S as /v1/servers has it');
  assert.deepEqual(first.data.dialogs.map((x) => [x.dialog, x.leases.map((l) => l.server)]), [['d1', ['l']]]);
  assert.ok(Number.isInteger(first.data.eventId) && first.data.eventId >= 1, JSON.stringify(first.data));

  // Resuming from an event still kept: the missed events, no snapshot.
  const resumed = stream(d, { 'last-event-id': String(first.data.eventId) }, (got) => got.some((e) => e.type === 'lease'));
  await sleep(100);
  assert.equal((await d.post('/v1/dialogs/d1/release', {})).status, 200);
  const after = await resumed;
  assert.ok(after.every((e) => e.type !== 'snapshot'), JSON.stringify(after));
  // An id this daemon never gave (a restarted daemon's client): a snapshot.
  const [fresh] = await stream(d, { 'last-event-id': '999999' }, (got) => got.length >= 1);
  assert.equal(fresh.type, 'snapshot');
  assert.deepEqual(fresh.data.dialogs, []);
});
