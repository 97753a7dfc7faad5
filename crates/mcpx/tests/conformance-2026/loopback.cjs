// Preloaded into the conformance suite (`node --require loopback.cjs ...`): every socket it listens
// on is put on 127.0.0.1 (crates/mcpx-interop/peers/loopback.cjs, which also prints
// `listening 127.0.0.1:PORT` on stderr), and a dns.lookup of the literal 127.0.0.1 answers at once:
// several 0.2.0 scenarios read `server.address().port` right after `listen(0)`, which with an
// asynchronous lookup is still null ("Scenario server is not listening").
'use strict';
const path = require('node:path');
require(path.join(__dirname, '..', '..', '..', 'mcpx-interop', 'peers', 'loopback.cjs'));
const dns = require('node:dns');
const lookup = dns.lookup;
dns.lookup = function (host, options, callback) {
  if (host !== '127.0.0.1') {
    return lookup.apply(this, arguments);
  }
  const done = typeof options === 'function' ? options : callback;
  if (options !== null && typeof options === 'object' && options.all) {
    return done(null, [{ address: '127.0.0.1', family: 4 }]);
  }
  return done(null, '127.0.0.1', 4);
};
