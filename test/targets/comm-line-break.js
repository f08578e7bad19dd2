'use strict';
// A process whose main thread names itself with a line break and a map
// line after it, as anyone may name their own threads (15 bytes, one write
// to /proc/self/task/TID/comm), then works: every 30 ms it spins 20 ms and
// waits 5 ms in Atomics.wait (on- and off-CPU samples of that thread).
// argv[2]: the name (default "a\n@x[1, q]: 9"). Prints "ready NAME" as
// JSON once named, with the name read back from /proc.
const fs = require('fs');

const name = process.argv[2] === undefined ? 'a\n@x[1, q]: 9' : process.argv[2];
const fd = fs.openSync(`/proc/self/task/${process.pid}/comm`, 'w');
fs.writeSync(fd, Buffer.from(name));
fs.closeSync(fd);
const comm = fs.readFileSync(`/proc/self/task/${process.pid}/comm`, 'latin1').replace(/\n$/, '');
console.log(JSON.stringify({ ready: true, pid: process.pid, comm }));

const cell = new Int32Array(new SharedArrayBuffer(4));
setInterval(() => {
  const end = Date.now() + 20;
  let x = 0;
  while (Date.now() < end) x += Math.sqrt(x + 1);
  Atomics.wait(cell, 0, 0, 5);
}, 30);
