'use strict';
// fs work on libuv's pool in a loop (fs.stat of this file, two at a time):
// a process beside a traced one, whose fs.stat must never show in the
// other's trace, and a target whose own count is the truth a trace's is
// held to. Prints "ready PID"; on SIGUSR2, "started N at NS": the fs.stat
// calls it has made so far, and when it was asked (CLOCK_MONOTONIC, ns).
const fs = require('fs');

let started = 0;
function one() {
  started++;
  fs.stat(__filename, () => setImmediate(one));
}

process.on('SIGUSR2', () => console.log(`started ${started} at ${process.hrtime.bigint()}`));
console.log('ready ' + process.pid);
for (let i = 0; i < 2; i++) one();
