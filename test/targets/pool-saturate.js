'use strict';
// A thread pool kept saturated by one kind of work: IN_FLIGHT (default 8)
// crypto.pbkdf2 calls of about ITERATIONS (default 100000) rounds always
// queued, while fs.stat runs every 5 ms behind them. Start it with a small
// pool (UV_THREADPOOL_SIZE=2) for `nodetrace latency`'s saturation test.
// Prints "ready <pid>", runs until killed.
const crypto = require('crypto');
const fs = require('fs');

const IN_FLIGHT = Number(process.env.IN_FLIGHT || 8);
const ITERATIONS = Number(process.env.ITERATIONS || 100000);

function hash() {
  crypto.pbkdf2('secret', 'salt', ITERATIONS, 32, 'sha256', (err) => {
    if (err) throw err;
    hash();
  });
}
for (let i = 0; i < IN_FLIGHT; i++) hash();
setInterval(() => fs.stat(__dirname, () => {}), 5);
console.log('ready ' + process.pid);
