// Preloaded into the peers (node -r ./loopback.cjs) that have no option to
// choose their listen address (mcp-hub, supergateway): every server.listen()
// without an explicit host binds 127.0.0.1 instead of all interfaces, so the
// benchmarks never expose anything beyond loopback.
'use strict';
const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    if (typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  } else if (args[0] && typeof args[0] === 'object' && args[0].port !== undefined && !args[0].host && !args[0].path) {
    args[0] = { ...args[0], host: '127.0.0.1' };
  }
  return listen.apply(this, args);
};
