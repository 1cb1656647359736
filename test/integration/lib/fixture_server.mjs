// A fixture server run as a child process (test/fixtures/*.mjs): it prints
// "listening <url>" once, then one JSON event a line. Shared by the OAuth
// and oidc-provider helpers.
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { root, slow, track } from './harness.mjs';

// Starts test/fixtures/<name>; resolves {child, url, events, stop}.
export async function fixtureServer(name, env = {}) {
  const child = track(spawn(process.execPath, [path.join(root, 'test/fixtures', name)], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] }));
  child.stderr.on('data', () => {});
  const events = [];
  const lines = readline.createInterface({ input: child.stdout });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not listen`)), 20000 * slow);
    lines.on('line', (line) => {
      const m = /^listening (\S+)$/.exec(line);
      if (m) { clearTimeout(timer); resolve(m[1]); } else if (line.startsWith('{')) events.push(JSON.parse(line));
    });
  });
  return { child, url, events, stop: () => { try { process.kill(child.pid, 'SIGKILL'); } catch { /* gone */ } } };
}
