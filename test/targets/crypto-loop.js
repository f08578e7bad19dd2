'use strict';
// Node's own thread-pool work: crypto.pbkdf2 in a loop, a few at a time, so
// `nodetrace latency` sees the C++ function that queues it (not an add-on).
const crypto = require('crypto');

const CONCURRENCY = 2;
function one() {
  crypto.pbkdf2('secret', 'salt', 2000, 32, 'sha256', (err) => {
    if (err) throw err;
    one();
  });
}
console.log('ready ' + process.pid);
for (let i = 0; i < CONCURRENCY; i++) one();
if (process.env.SECONDS) setTimeout(() => process.exit(0), Number(process.env.SECONDS) * 1000);
