// test/fixtures/oidc_server.mjs (oidc-provider in front of an MCP server
// behind the SDK's requireBearerAuth) and a browser that goes through the
// provider's login page: shared by the oauth_oidc*.test.mjs files.
import { fixtureServer } from './fixture_server.mjs';

export async function oidcServer(env = {}) {
  const { child, url, events, stop } = await fixtureServer('oidc_server.mjs', env);
  return {
    url,
    events,
    // A command to the fixture (see oidc_server.mjs).
    send: (line) => child.stdin.write(`${line}\n`),
    count: (name, pred = () => true) => events.filter((e) => e.event === name && pred(e)).length,
    stop,
  };
}

// A browser: cookies per host, redirects followed, the provider's login
// form filled in and posted.
export async function browse(url) {
  const jar = new Map();
  const cookies = (u) => [...(jar.get(new URL(u).host) ?? new Map())].map(([k, v]) => `${k}=${v}`).join('; ');
  const keep = (u, res) => {
    const host = new URL(u).host;
    if (!jar.has(host)) jar.set(host, new Map());
    // Node 18's fetch may lack getSetCookie: split the joined header then.
    const set = res.headers.getSetCookie?.() ?? (res.headers.get('set-cookie') ?? '').split(/,(?=\s*[^;,=\s]+=)/).filter(Boolean);
    for (const c of set) {
      const [kv] = c.split(';');
      const i = kv.indexOf('=');
      jar.get(host).set(kv.slice(0, i).trim(), kv.slice(i + 1));
    }
  };
  let method = 'GET';
  let body;
  for (let i = 0; i < 15; i++) {
    const res = await fetch(url, { method, body, redirect: 'manual', headers: { cookie: cookies(url), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) } });
    keep(url, res);
    const text = await res.text();
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location'), url).toString();
      method = 'GET';
      body = undefined;
      continue;
    }
    const form = /<form[^>]*action="([^"]+)"[^>]*method="post"/i.exec(text);
    if (res.status === 200 && form && !url.includes('/oauth/callback')) {
      const fields = new URLSearchParams();
      for (const m of text.matchAll(/<input[^>]*>/gi)) {
        const name = /name="([^"]+)"/.exec(m[0])?.[1];
        if (!name) continue;
        const value = /value="([^"]*)"/.exec(m[0])?.[1];
        fields.set(name, value || (name === 'password' ? 'pw' : 'alice'));
      }
      url = new URL(form[1], url).toString();
      method = 'POST';
      body = fields.toString();
      continue;
    }
    return { status: res.status, url, text };
  }
  throw new Error('the browser went round in circles');
}
