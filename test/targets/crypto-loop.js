'use strict';
// Node's own thread-pool work: crypto.pbkdf2 in a loop, a few at a time, so
// `nodetrace latency` sees the C++ function that queues it (not an add-on).
const crypto = require('crypto');

const CONCURRENCY = 2;
// A pause after each: busy (hundreds a second), not saturating. Back to
// back, the two chains kept both cores of the test machine busy, and the
// kernel's uprobe attach and detach of every trace beside it slowed to
// minutes (docs/platforms.md, "Learned 2026-11-27"). PAUSE_MS=0: no pause.
const PAUSE_MS = process.env.PAUSE_MS === undefined ? 5 : Number(process.env.PAUSE_MS);
function one() {
  crypto.pbkdf2('secret', 'salt', 2000, 32, 'sha256', (err) => {
    if (err) throw err;
    if (PAUSE_MS) setTimeout(one, PAUSE_MS);
    else one();
  });
}
console.log('ready ' + process.pid);
for (let i = 0; i < CONCURRENCY; i++) one();
if (process.env.SECONDS) setTimeout(() => process.exit(0), Number(process.env.SECONDS) * 1000);
