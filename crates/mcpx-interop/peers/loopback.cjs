// Preloaded into a Node server (`node --require loopback.cjs ...`) that binds all interfaces by
// default: every listening socket is put on 127.0.0.1, and its address is printed on stderr as
// `listening 127.0.0.1:PORT`, so that the server can be started with PORT=0 and found.
'use strict';
const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first !== null && typeof first === 'object') {
    args[0] = { ...first, host: '127.0.0.1' };
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    args[0] = Number(first);
    if (typeof args[1] === 'string') {
      args[1] = '127.0.0.1';
    } else {
      args.splice(1, 0, '127.0.0.1');
    }
  }
  this.once('listening', () => {
    const address = this.address();
    process.stderr.write(`listening ${address.address}:${address.port}\n`);
  });
  return listen.apply(this, args);
};
