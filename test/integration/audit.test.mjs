// The audit log (issue 35, gateway.audit): a line for every tool call and
// refused attempt of a mixed run, checked one by one against what the test
// did, with argument digests recomputed here (RFC 8785); a full disk raises
// the Problem and calls go on; `required: true` refuses calls until a
// reload fixes the path; SIGUSR1 after a rename starts a new file with
// nothing lost between the two.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { start, waitFor, fixtures, sleep } from './lib/harness.mjs';

const FIXTURE = path.join(fixtures, 'mcp_fixture');
const ALICE = 'alice-token-0123456789abcdef';
const ADMIN = 'admin-token-0123456789abcdef';
const auth = (token) => ({ authorization: `Bearer ${token}` });

// RFC 8785: members sorted by UTF-16 code units (JavaScript's own string
// order), numbers and strings as JSON.stringify writes them.
function jcs(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${jcs(v[k])}`).join(',')}}`;
}
const digest = (args) => crypto.createHash('sha256').update(jcs(args ?? {})).digest('hex');

const config = (auditPath, required = false) => `version: 1
gateway:
  auth_token: ${ADMIN}
  audit:
    path: ${auditPath}
${required ? '    required: true\n' : ''}clients:
  alice: {token: ${ALICE}, deny: ['add'], rate: 50/min}
servers:
  fx:
    command: ${FIXTURE}
    truely-stateless: true
`;

async function up(yaml, opts) {
  const d = await start(yaml, opts);
  await waitFor(async () => (await d.get('/readyz', { headers: auth(ADMIN) })).status === 200, 30000);
  return d;
}

async function stopClean(d) {
  const r = await d.stop();
  assert.doesNotMatch(d.stderr, /AddressSanitizer|LeakSanitizer|runtime error/);
  assert.equal(r.code, 0, d.stderr.slice(-2000));
}

const readLines = (file) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);

test('a line for each of 1,000 calls and refusals of a mixed run, checked one by one', async (t) => {
  const dir = fs.mkdtempSync('/tmp/mcpgw-audit-');
  const file = path.join(dir, 'audit.jsonl');
  // a state directory of its own: no sandbox homes of other daemons to sweep
  const d = await up(config(file), { env: { XDG_STATE_HOME: path.join(dir, 'state') } });
  t.after(() => stopClean(d));

  // what the test did, in order: [token, tool, arguments, expected outcome, decision]
  const plan = [];
  const unicode = { 'é': 1, 'z': [1.5, 1e21, 1e-7, -0, 100], '😀': 'x\u0001"\\', a: { c: true, b: null } };
  for (let i = 0; i < 1000; i++) {
    const k = i % 8;
    if (k === 0) plan.push([ALICE, 'echo', { text: `hi ${i}` }, 'ok', 'allow']);
    else if (k === 1) plan.push([ALICE, 'add', { a: i, b: 2 }, 'denied', 'deny']);
    else if (k === 2) plan.push([ALICE, 'no_such_tool', { x: i }, 'unknown_tool', 'deny']);
    else if (k === 3) plan.push([ALICE, 'echo', {}, 'tool_error', 'allow']);
    else if (k === 4) plan.push([ADMIN, 'add', { a: i, b: 0.25 }, 'ok', 'allow']);
    else if (k === 5) plan.push([ADMIN, 'sleep', { ms: 3000 }, 'timeout', 'allow']);
    else if (k === 6) plan.push([ADMIN, 'echo', { text: 'u', ...unicode }, 'ok', 'allow']);
    else plan.push([ADMIN, 'mcp_release', { serverId: 'fx' }, 'ok', 'allow']);
  }
  // alice's bucket (50/min, refilled as the run goes) runs out: her calls
  // answered 429 are rate_limited
  for (const p of plan) {
    const [tok, tool, args] = p;
    const r = await d.post(`/v1/tools/${tool}/call`, { arguments: args, timeout_ms: tool === 'sleep' ? 100 : 5000, dialog: 'dx' },
      { headers: auth(tok) });
    if (r.status === 429) {
      assert.equal(tok, ALICE);
      assert.equal(r.json.error.code, 'rate_limited');
      p[3] = 'rate_limited';
      p[4] = 'deny';
    }
  }
  // a cancelled call: the client hangs up (its socket closed, as Node 18's
  // fetch does not promise on an abort)
  const hangup = http.request({ host: '127.0.0.1', port: d.port, path: '/v1/tools/sleep/call', method: 'POST',
    headers: { 'content-type': 'application/json', ...auth(ADMIN) } });
  hangup.on('error', () => {});
  hangup.end(JSON.stringify({ arguments: { ms: 3000 } }));
  await sleep(300);
  hangup.destroy();
  plan.push([ADMIN, 'sleep', { ms: 3000 }, 'cancelled', 'allow']);

  assert.ok(plan.some((p) => p[3] === 'rate_limited'));
  await waitFor(() => readLines(file).length >= plan.length);
  const lines = readLines(file);
  assert.equal(lines.length, plan.length, 'one line each, no more');
  lines.forEach((l, i) => {
    const [tok, tool, args, outcome, decision] = plan[i];
    const what = `line ${i}: ${JSON.stringify(l)}`;
    assert.equal(l.tool, tool, what);
    assert.equal(l.client, tok === ALICE ? 'alice' : 'default', what);
    assert.equal(l.front, 'rest', what);
    assert.equal(l.outcome, outcome, what);
    assert.equal(l.decision, decision, what);
    assert.equal(l.arguments.sha256, digest(args), what);
    assert.deepEqual(l.arguments.keys, Object.keys(args).sort(), what);
    assert.match(l.policy, /^[0-9a-f]{64}$/);
    assert.match(l.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    if (outcome === 'denied') assert.equal(l.rule, 'add', what);
    if (outcome === 'ok' && tool !== 'mcp_release') {
      assert.equal(l.server, 'fx', what);
      assert.ok(l.instance >= 1 && l.pid > 0 && l.bytes_out > 0, what);
    }
    assert.equal(l.bytes_in, Buffer.byteLength(jcs(args)), what);
    if (outcome === 'rate_limited') assert.equal(l.rule, 'rate', what);
  });
  const metrics = (await d.get('/metrics', { headers: auth(ADMIN) })).body;
  assert.match(metrics, new RegExp(`mcpgw_audit_lines_total\\{result="written"\\} ${plan.length}\\n`));
  // a file of a local file system is written by the loop: no thread was
  // started for it (libuv's pool would have started four)
  assert.match(fs.readFileSync(`/proc/${d.pid}/status`, 'utf8'), /^Threads:\s+1$/m);
  assert.doesNotMatch(fs.readFileSync(file, 'utf8'), new RegExp(`${ALICE}|${ADMIN}`));
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a full disk: the Problem and the dropped lines; calls go on, or with required are refused until a reload', async (t) => {
  const dir = fs.mkdtempSync('/tmp/mcpgw-audit-');
  const d = await up(config('/dev/full'));
  t.after(() => stopClean(d));
  const call = () => d.post('/v1/tools/echo/call', { arguments: { text: 'x' } }, { headers: auth(ADMIN) });

  assert.equal((await call()).status, 200);
  await waitFor(async () => (await d.get('/v1/problems', { headers: auth(ADMIN) })).json.problems.some((p) => p.id === 'audit:write'));
  assert.equal((await call()).status, 200, 'calls go on');
  await waitFor(async () => /mcpgw_audit_lines_total\{result="dropped"\} [1-9]/.test((await d.get('/metrics', { headers: auth(ADMIN) })).body));

  fs.writeFileSync(d.configPath, config('/dev/full', true));
  assert.equal((await d.post('/v1/reload', {}, { headers: auth(ADMIN) })).status, 200);
  await call(); // a write fails again under the new setting
  const refused = await waitFor(async () => { const r = await call(); return r.status === 503 ? r : null; });
  assert.equal(refused.json.error.code, 'audit_unavailable');

  const good = path.join(dir, 'audit.jsonl');
  fs.writeFileSync(d.configPath, config(good, true));
  assert.equal((await d.post('/v1/reload', {}, { headers: auth(ADMIN) })).status, 200);
  assert.equal((await call()).status, 200, 'calls resume');
  await waitFor(() => readLines(good).length === 1);
  await waitFor(async () => !(await d.get('/v1/problems', { headers: auth(ADMIN) })).json.problems.some((p) => p.id === 'audit:write'));
  fs.rmSync(dir, { recursive: true, force: true });
});

test('SIGUSR1 after a rename: a new file, nothing lost between the two', async (t) => {
  const dir = fs.mkdtempSync('/tmp/mcpgw-audit-');
  const file = path.join(dir, 'audit.jsonl');
  const d = await up(config(file));
  t.after(() => stopClean(d));
  const call = (i) => d.post('/v1/tools/echo/call', { arguments: { text: `n${i}` } }, { headers: auth(ADMIN) });

  const burst = async (from, n) => Promise.all(Array.from({ length: n }, (_, k) => call(from + k)));
  await burst(0, 30);
  fs.renameSync(file, `${file}.1`);
  const during = burst(30, 30); // calls in flight while the file moves
  process.kill(d.pid, 'SIGUSR1');
  await during;
  await burst(60, 30);
  await waitFor(() => readLines(`${file}.1`).length + readLines(file).length === 90);
  const texts = [...readLines(`${file}.1`), ...readLines(file)].map((l) => l.arguments.sha256).sort();
  const want = Array.from({ length: 90 }, (_, i) => digest({ text: `n${i}` })).sort();
  assert.deepEqual(texts, want);
  assert.ok(readLines(file).length >= 30, 'the new file has the calls after the signal');
  fs.rmSync(dir, { recursive: true, force: true });
});

// notify_listen prints a datagram on a line, its newlines as '|': the
// fields before MESSAGE (the last) split on them.
function journalEntries(got) {
  return got.split('\n').filter((l) => l.startsWith('SYSLOG_IDENTIFIER=')).map((l) => {
    const at = l.indexOf('MESSAGE=');
    const fields = Object.fromEntries(l.slice(0, at).split('|').filter(Boolean).map((f) => [f.slice(0, f.indexOf('=')), f.slice(f.indexOf('=') + 1)]));
    fields.MESSAGE = JSON.parse(l.slice(at + 'MESSAGE='.length).replace(/\|$/, ''));
    return fields;
  });
}

test('path: journal: each line a native-protocol datagram with indexed fields; a full socket drops lines with the Problem', async (t) => {
  const dir = fs.mkdtempSync('/tmp/mcpgw-audit-');
  const sock = path.join(dir, 'journal.sock');
  const listener = spawn(path.join(fixtures, 'notify_listen'), [sock]);
  t.after(() => listener.kill('SIGKILL'));
  let got = '';
  listener.stdout.on('data', (b) => { got += b; });
  await waitFor(() => got.includes('listening'));
  const d = await start(config('journal'), { env: { MCPGW_JOURNAL_SOCKET: sock } });
  await waitFor(async () => (await d.get('/readyz', { headers: auth(ADMIN) })).status === 200, 30000);
  t.after(() => stopClean(d));
  assert.ok(!fs.existsSync(path.join(path.dirname(d.configPath), 'journal')), 'no file named journal');

  assert.equal((await d.post('/v1/tools/echo/call', { arguments: { text: 'j1' } }, { headers: auth(ALICE) })).status, 200);
  assert.equal((await d.post('/v1/tools/add/call', { arguments: { a: 1, b: 2 } }, { headers: auth(ALICE) })).status, 404);
  await waitFor(() => journalEntries(got).length === 2);
  const [ok, denied] = journalEntries(got);
  assert.deepEqual({ ...ok, MESSAGE: undefined }, { SYSLOG_IDENTIFIER: 'mcpgw', PRIORITY: '6', MCPGW_CLIENT: 'alice', MCPGW_SERVER: 'fx', MCPGW_TOOL: 'echo', MCPGW_DECISION: 'allow', MCPGW_OUTCOME: 'ok', MESSAGE: undefined });
  assert.equal(ok.MESSAGE.client, 'alice');
  assert.equal(ok.MESSAGE.arguments.sha256, digest({ text: 'j1' }));
  assert.equal(denied.MCPGW_DECISION, 'deny');
  assert.equal(denied.MCPGW_OUTCOME, 'denied');
  assert.equal(denied.MESSAGE.rule, 'add');

  // the journal stops reading: its socket fills, lines are dropped, calls go on
  listener.kill('SIGSTOP');
  const metric = async () => Number(/mcpgw_audit_lines_total\{result="dropped"\} (\d+)/.exec((await d.get('/metrics', { headers: auth(ADMIN) })).body)[1]);
  for (let i = 0; i < 3000 && (await metric()) === 0; i++) {
    assert.equal((await d.post('/v1/tools/echo/call', { arguments: { text: `fill ${i}` } }, { headers: auth(ADMIN) })).status, 200);
  }
  assert.ok((await metric()) > 0, 'lines dropped');
  for (let i = 0; i < 20; i++) await d.post('/v1/tools/echo/call', { arguments: { text: `more ${i}` } }, { headers: auth(ADMIN) });
  assert.equal(d.stderr.split('\n').filter((l) => l.includes('audit log')).length, 2, 'the Problem and the error logged once, not per line');
  assert.ok((await d.get('/v1/problems', { headers: auth(ADMIN) })).json.problems.some((p) => p.id === 'audit:write'));
  listener.kill('SIGCONT');
  await waitFor(async () => (await d.post('/v1/tools/echo/call', { arguments: { text: 'after' } }, { headers: auth(ADMIN) })).status === 200 &&
    !(await d.get('/v1/problems', { headers: auth(ADMIN) })).json.problems.some((p) => p.id === 'audit:write'));
  await waitFor(() => journalEntries(got).some((e) => e.MESSAGE.arguments.sha256 === digest({ text: 'after' })));
  fs.rmSync(dir, { recursive: true, force: true });
});

test('path: journal: an entry too large for a datagram arrives whole in a sealed memfd; arguments over 1 MiB are cut to their digest', async (t) => {
  const dir = fs.mkdtempSync('/tmp/mcpgw-audit-');
  const sock = path.join(dir, 'journal.sock');
  const listener = spawn(path.join(fixtures, 'notify_listen'), [sock]);
  t.after(() => listener.kill('SIGKILL'));
  let got = '';
  listener.stdout.on('data', (b) => { got += b; });
  await waitFor(() => got.includes('listening'));
  const d = await start(`version: 1
gateway:
  auth_token: ${ADMIN}
  audit:
    path: journal
    arguments: full
servers:
  fx:
    command: ${FIXTURE}
    truely-stateless: true
`, { env: { MCPGW_JOURNAL_SOCKET: sock } });
  await waitFor(async () => (await d.get('/readyz', { headers: auth(ADMIN) })).status === 200, 30000);
  t.after(() => stopClean(d));

  // 400 KB: twice the default send buffer of a unix datagram socket
  const big = { text: 'b'.repeat(400 * 1024) };
  assert.equal((await d.post('/v1/tools/echo/call', { arguments: big }, { headers: auth(ADMIN) })).status, 200);
  await waitFor(() => journalEntries(got).length === 1, 20000);
  const [entry] = journalEntries(got);
  const memfd = /memfd sealed=(\d) bytes=(\d+)/.exec(got);
  assert.ok(memfd, 'passed as a file descriptor');
  assert.equal(memfd[1], '1', 'sealed against shrink, grow, write and further seals');
  assert.ok(Number(memfd[2]) > 400 * 1024);
  assert.equal(entry.MCPGW_OUTCOME, 'ok');
  assert.deepEqual(entry.MESSAGE.arguments, big, 'the whole line');

  // beyond 1 MiB of arguments, the line keeps their digest only
  const huge = { text: 'h'.repeat(1100 * 1024) };
  assert.equal((await d.post('/v1/tools/echo/call', { arguments: huge }, { headers: auth(ADMIN) })).status, 200);
  await waitFor(() => journalEntries(got).length === 2, 20000);
  const cut = journalEntries(got)[1];
  assert.deepEqual(cut.MESSAGE.arguments, { sha256: digest(huge), cut: true });
  assert.equal(cut.MESSAGE.bytes_in, Buffer.byteLength(jcs(huge)));
  assert.ok(!(await d.get('/v1/problems', { headers: auth(ADMIN) })).json.problems.some((p) => p.id === 'audit:write'));
  fs.rmSync(dir, { recursive: true, force: true });
});

test('arguments: full: the arguments whole, the server\'s secrets masked in each string (an escaped one too)', async (t) => {
  const dir = fs.mkdtempSync('/tmp/mcpgw-audit-');
  const file = path.join(dir, 'audit.jsonl');
  const secret = 'quo"ted-secret-42';
  const d = await up(`version: 1
gateway:
  auth_token: ${ADMIN}
  audit:
    path: ${file}
    arguments: full
servers:
  fx:
    command: ${FIXTURE}
    truely-stateless: true
    env:
      API_KEY: '${secret}'
`);
  t.after(() => stopClean(d));
  const args = { text: `before ${secret} after`, nested: { list: [secret, 7, true, null], [`k ${secret}`]: 'v' }, n: 1.5 };
  assert.equal((await d.post('/v1/tools/echo/call', { arguments: args }, { headers: auth(ADMIN) })).status, 200);
  assert.equal((await d.post('/v1/tools/nope/call', { arguments: { token: ADMIN } }, { headers: auth(ADMIN) })).status, 404);
  await waitFor(() => readLines(file).length === 2);
  const [ok, unknown] = readLines(file);
  assert.deepEqual(ok.arguments, { text: 'before *** after', nested: { list: ['***', 7, true, null], 'k ***': 'v' }, n: 1.5 });
  assert.equal(ok.bytes_in, Buffer.byteLength(jcs(args)));
  assert.deepEqual(unknown.arguments, { token: '***' }, 'the gateway token, where no server is known');
  const text = fs.readFileSync(file, 'utf8');
  assert.ok(!text.includes('quo') && !text.includes('secret-42') && !text.includes(ADMIN), text);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('path: journal with required: no journal refuses calls; SIGUSR1 once it listens resumes them', async (t) => {
  const dir = fs.mkdtempSync('/tmp/mcpgw-audit-');
  const sock = path.join(dir, 'journal.sock');
  const d = await start(config('journal', true), { env: { MCPGW_JOURNAL_SOCKET: sock } });
  await waitFor(async () => (await d.get('/readyz', { headers: auth(ADMIN) })).status === 200, 30000);
  t.after(() => stopClean(d));
  const call = () => d.post('/v1/tools/echo/call', { arguments: { text: 'r' } }, { headers: auth(ADMIN) });

  await call(); // its line finds no journal
  const refused = await waitFor(async () => { const r = await call(); return r.status === 503 ? r : null; });
  assert.equal(refused.json.error.code, 'audit_unavailable');
  assert.ok((await d.get('/v1/problems', { headers: auth(ADMIN) })).json.problems.some((p) => p.id === 'audit:write' && /journal/.test(p.message)));

  const listener = spawn(path.join(fixtures, 'notify_listen'), [sock]);
  t.after(() => listener.kill('SIGKILL'));
  let got = '';
  listener.stdout.on('data', (b) => { got += b; });
  await waitFor(() => got.includes('listening'));
  assert.equal((await call()).status, 503, 'refused until the log is opened again');
  process.kill(d.pid, 'SIGUSR1');
  await waitFor(async () => (await call()).status === 200);
  await waitFor(() => journalEntries(got).some((e) => e.MCPGW_OUTCOME === 'ok'));
  fs.rmSync(dir, { recursive: true, force: true });
});
