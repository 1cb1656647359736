// The OAuth fixture (test/fixtures/oauth_server.mjs) and a browser that
// follows its redirects, for the tests of servers that require OAuth.
import http from 'node:http';
import { fixtureServer } from './fixture_server.mjs';

// Starts the fixture; resolves {url, events, stop}.
export const oauthServer = (env = {}) => fixtureServer('oauth_server.mjs', env);

// One GET without following redirects.
export function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false }, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
    }).on('error', reject);
  });
}

// The browser: the authorize link, then each redirect, up to mcpgw's page;
// it stops at the first URL that `stop` matches without fetching it (a host
// it cannot reach) and answers the URL it ended on.
export async function browse(url, stop = () => false) {
  const hops = [];
  for (let i = 0; i < 5; i++) {
    if (stop(url)) return { url, hops };
    const r = await get(url);
    hops.push({ url, status: r.status });
    if (r.status !== 302) return { ...r, url, hops };
    url = new URL(r.headers.location, url).toString();
  }
  throw new Error(`too many redirects: ${JSON.stringify(hops)}`);
}
