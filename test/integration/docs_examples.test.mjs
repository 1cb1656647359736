// The curl examples of docs/api.md, run as written against the example
// configuration conf/mcp.yaml (its real npm servers), so that an example
// naming a tool the config does not have, or showing an answer the gateway
// does not give, fails here. Only the gateway's address is changed (the
// daemon listens on a port of the kernel's choice), and the config's
// paths are made absolute. A command to any host but the gateway's is not
// run: the set of such hosts is fixed below, so a new one is noticed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { start, root, nodeModules, tmpdir, slow } from './lib/harness.mjs';

const NOT_RUN = new Set(['api.anthropic.com']);

// Each fenced block that holds a curl command: its commands (continuation
// lines joined) and, for `$ `-prompted ones, the output shown after each.
// `line` is where the block starts in docs/api.md, for messages.
function examples(markdown) {
  const blocks = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^```/.test(lines[i])) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```/.test(lines[end])) end++;
    const body = lines.slice(start, end);
    i = end;
    if (!body.some((l) => /^(\$ )?curl /.test(l))) continue;
    const cmds = [];
    for (let k = 0; k < body.length; k++) {
      const m = /^(\$ )?(curl .*)$/.exec(body[k]);
      if (!m) {
        if (cmds.length && cmds[cmds.length - 1].prompted) cmds[cmds.length - 1].shown.push(body[k]);
        continue;
      }
      let text = m[2];
      // a command goes on while its line ends with `\` or a quote is open
      while (k + 1 < body.length && (/\\$/.test(text) || (text.split("'").length - 1) % 2 === 1)) text += `\n${body[++k]}`;
      cmds.push({ text, prompted: Boolean(m[1]), shown: [] });
    }
    if (cmds.length) blocks.push({ line: start, cmds });
  }
  return blocks;
}

// The shown output as a pattern: its lines joined as the gateway writes
// them (one compact line), `…` standing for anything.
function shownPattern(shown) {
  const text = shown.map((l) => l.replace(/^\s+/, '')).join('');
  const parts = text.split('…').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[^]*')}\\s*$`);
}

function sh(cmd, cwd) {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', cmd], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30000 * slow);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, out, err }); });
  });
}

// conf/mcp.yaml with its relative server paths and its artifacts moved
// into a directory of the test's own; its sandboxed servers also see
// test/webcrypto.cjs, which the tests' NODE_OPTIONS preloads. (The memory
// file stays in /tmp: a sandboxed instance's /tmp is its own.)
function exampleConfig(dir) {
  return fs.readFileSync(path.join(root, 'conf/mcp.yaml'), 'utf8')
    .replaceAll('../test/node_modules', nodeModules)
    .replace('/tmp/mcpgw-artifacts', path.join(dir, 'artifacts'))
    .replace('    default: on\n', `    default: on\n    read: [${path.dirname(nodeModules)}]\n`);
}

test('every curl example of docs/api.md runs against conf/mcp.yaml and answers as shown', async (t) => {
  const dir = tmpdir();
  const d = await start(exampleConfig(dir), { waitReady: true, env: { STATE_DIRECTORY: path.join(dir, 'state') } });
  t.after(() => d.stop());
  const doc = fs.readFileSync(path.join(root, 'docs/api.md'), 'utf8');
  const blocks = examples(doc);
  assert.ok(blocks.length >= 3, `curl examples found: ${blocks.length}`);
  const skipped = new Set();
  let ran = 0;
  for (const b of blocks) {
    // a value an answer gave (a requestState) replaces the shown one in
    // the commands after it
    const given = new Map();
    for (const c of b.cmds) {
      const host = /curl [^\n]*?(?:https?:\/\/)?([a-z0-9.-]+)(?::\d+)?\//i.exec(c.text)?.[1];
      if (host !== 'localhost' && host !== '127.0.0.1') {
        skipped.add(host);
        continue;
      }
      let cmd = c.text.replace(/(localhost|127\.0\.0\.1):7420/g, `127.0.0.1:${d.port}`);
      for (const [shownValue, real] of given) cmd = cmd.replaceAll(shownValue, real);
      const r = await sh(cmd, dir);
      const where = `docs/api.md:${b.line}: ${c.text.split('\n')[0]}`;
      assert.equal(r.code, 0, `${where}: exit ${r.code}: ${r.err}`);
      ran++;
      if (/>\s*\S+\s*$/.test(c.text)) continue; // its output went to a file
      if (c.shown.length) {
        const state = /"requestState":"([^"]+)"/;
        const shownState = state.exec(c.shown.join(''))?.[1];
        if (shownState && state.test(r.out)) given.set(shownState, state.exec(r.out)[1]);
        let shown = c.shown;
        if (shownState) shown = shown.map((l) => l.replace(shownState, state.exec(r.out)?.[1] ?? shownState));
        assert.match(r.out, shownPattern(shown), `${where}: the answer is not the one shown`);
      } else {
        const body = JSON.parse(r.out);
        assert.equal(body.error, undefined, `${where}: ${r.out}`);
        assert.ok(body.result, `${where}: ${r.out}`);
        assert.notEqual(body.result.isError, true, `${where}: ${r.out}`);
      }
    }
  }
  assert.deepEqual([...skipped], [...NOT_RUN], 'hosts of the examples that are not run');
  assert.ok(ran >= 5, `commands run: ${ran}`);

  // The tools the Tool search example shows are the ones the listing it
  // ran wrote, deferred as shown.
  const written = JSON.parse(fs.readFileSync(path.join(dir, 'tools.json'), 'utf8'));
  const shownTools = /request's `tools` then read:\n\n```json\n([^]*?)```/.exec(doc)[1].replace(/\s*\n\s*/g, ' ');
  const entries = [...shownTools.matchAll(/\{"name": "([^"]+)", "description": "([^"]*)", "input_schema": \{…\}(, "defer_loading": true)?\}/g)];
  assert.ok(entries.length >= 3);
  for (const [, name, description, deferred] of entries) {
    const tool = written.find((x) => x.name === name);
    assert.ok(tool, `${name} is in the listing`);
    assert.ok(tool.description.startsWith(description.replace(/ …$/, '')), `${name}'s description`);
    assert.equal(tool.defer_loading === true, Boolean(deferred), `${name}'s defer_loading`);
  }

  // The examples' first tool call: the 2026-07-28 one names a tool of the config.
  assert.match(doc, /"params":\{"name":"ev_echo",/);
  assert.ok(written.some((x) => x.name === 'ev_echo'));
});
