// Preloaded into every Node process the tests start (NODE_OPTIONS, set by
// the Makefile). Node 18, Debian 12's own, has Web Crypto only as
// require('node:crypto').webcrypto, not as the global `crypto` that the
// MCP SDK's streamable-HTTP server transport calls (crypto.randomUUID):
// server-everything over HTTP fails every initialize with
// "ReferenceError: crypto is not defined" there. Newer Nodes have the
// global, and this does nothing.
'use strict';
if (typeof globalThis.crypto === 'undefined') {
  Object.defineProperty(globalThis, 'crypto', {
    value: require('node:crypto').webcrypto,
    enumerable: false,
    configurable: true,
    writable: true,
  });
}
