// The gateway's own routes, with the token when one is set. The token lives
// in this tab's sessionStorage only: never in a URL or a cookie.
const KEY = 'mcpgw.token';

export class Unauthorized extends Error {}

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

function headers(extra) {
  const t = token.get();
  return { ...(t ? { authorization: `Bearer ${t}` } : {}), ...extra };
}

export async function request(method, path, body, extra) {
  const init = { method, headers: headers({ ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...extra }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(path, init);
  if (res.status === 401) throw new Unauthorized('the token was refused');
  return res;
}

export async function getJson(path) {
  const res = await request('GET', path);
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return res.json();
}

// POST with a JSON body; resolves {status, body} whatever the status.
export async function postJson(path, body) {
  const res = await request('POST', path, body);
  let json = null;
  try { json = await res.json(); } catch { /* an empty or non-JSON answer */ }
  return { status: res.status, body: json };
}

export async function getText(path) {
  const res = await request('GET', path);
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return res.text();
}

export async function getBlob(path) {
  const res = await request('GET', path);
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return res.blob();
}

// GET /v1/events read with fetch (EventSource cannot send a header), one
// stream for the page. Reconnects with Last-Event-ID so nothing is missed;
// onState(true|false) reports whether it is connected.
export function events(onEvent, onState, onUnauthorized) {
  let last = null;
  let delay = 1000;
  async function run() {
    for (;;) {
      try {
        const res = await fetch('/v1/events', {
          headers: headers(last !== null ? { 'last-event-id': last } : {}),
        });
        if (res.status === 401) { onState(false); onUnauthorized(); return; }
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        onState(true);
        delay = 1000;
        await read(res.body.getReader());
      } catch { /* the connection broke: retry below */ }
      onState(false);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 15000);
    }
  }
  async function read(reader) {
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.search(/\r?\n\r?\n/)) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + (buf[i] === '\r' ? 4 : 2));
        dispatch(block);
      }
    }
  }
  function dispatch(block) {
    let type = 'message', data = '', id = null;
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(':')) continue;
      const c = line.indexOf(':');
      const field = c < 0 ? line : line.slice(0, c);
      const value = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
      if (field === 'event') type = value;
      else if (field === 'data') data += (data ? '\n' : '') + value;
      else if (field === 'id') id = value;
    }
    if (id !== null) last = id;
    if (!data) return;
    try { onEvent(type, JSON.parse(data), id); } catch { /* not JSON: not ours */ }
  }
  run();
}
