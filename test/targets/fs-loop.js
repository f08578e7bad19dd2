'use strict';
// fs work on libuv's pool in a loop (fs.stat of this file, two at a time):
// a process beside a traced one, whose fs.stat must never show in the
// other's trace. Prints "ready PID".
const fs = require('fs');

function one() {
  fs.stat(__filename, () => setImmediate(one));
}

console.log('ready ' + process.pid);
for (let i = 0; i < 2; i++) one();
