'use strict';
// Thread-pool work in counted bursts, idle between them: on SIGUSR2 it
// starts BURST fs.stat calls and BURST / 10 crypto.pbkdf2 calls (small, 1,000
// rounds), and once every one has called back prints "burst N: fs.stat S
// crypto.pbkdf2 P" (its totals so far). A live trace's counts must then grow
// by exactly what it printed. Prints "ready PID"; runs until killed.
const crypto = require('crypto');
const fs = require('fs');

const BURST = Number(process.env.BURST || 500);
const totals = { stat: 0, pbkdf2: 0 };
let bursts = 0;

function burst() {
  const stats = BURST;
  const hashes = Math.max(1, Math.floor(BURST / 10));
  let pending = stats + hashes;
  const done = () => {
    if (--pending === 0) {
      bursts++;
      console.log(`burst ${bursts}: fs.stat ${totals.stat} crypto.pbkdf2 ${totals.pbkdf2}`);
    }
  };
  // A few at a time, as a service does: the pool is never flooded.
  let i = 0;
  const next = () => {
    if (i >= stats) return;
    i++;
    totals.stat++;
    fs.stat(__filename, () => { done(); next(); });
  };
  for (let k = 0; k < 4; k++) next();
  for (let h = 0; h < hashes; h++) {
    totals.pbkdf2++;
    crypto.pbkdf2('secret', 'salt', 1000, 32, 'sha256', done);
  }
}

process.on('SIGUSR2', burst);
setInterval(() => {}, 1 << 30);
console.log('ready ' + process.pid);
