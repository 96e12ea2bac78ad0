'use strict';
// loopback.cjs: preloaded with `node --require` so that every server the
// process starts listens on 127.0.0.1 only, whatever address (or none) its
// code asks for. The interop tests run TypeScript servers that would
// otherwise listen on all interfaces.
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
    if (first.path === undefined && first.handle === undefined && first.fd === undefined) {
      args[0] = Object.assign({}, first, { host: '127.0.0.1' });
    }
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    // listen(port[, host][, backlog][, callback]): replace or insert host.
    if (typeof args[1] === 'string') {
      args[1] = '127.0.0.1';
    } else {
      args.splice(1, 0, '127.0.0.1');
    }
  }
  return listen.apply(this, args);
};
