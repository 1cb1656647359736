// Reads `GET /v1/servers` on stdin and prints a line per server: its id,
// sandbox.enforced and the reason when there is one ("none" without a sandbox).
'use strict';
let body = '';
process.stdin.on('data', (d) => (body += d)).on('end', () => {
  for (const s of JSON.parse(body).servers) {
    const sb = s.sandbox;
    console.log([s.id, sb ? String(sb.enforced) : 'none', (sb && sb.reason) || ''].join(' ').trim());
  }
});
