'use strict';
// A bench workload of libuv's own thread-pool requests, for what latency
// --paths and --hosts cost: IN_FLIGHT (default 8) lanes, each doing fs.stat
// of one of 4 paths then dns.lookup('localhost'), over and over (about
// 10,000 pool operations a second on one core here). SIGUSR2 prints
// "loops <operations> <monotonic ns>" (bench/workload-lines.js reads it).
const fs = require('fs');
const dns = require('dns');

const IN_FLIGHT = Number(process.env.IN_FLIGHT || 8);
const PATHS = [__dirname, __filename, '/', '/nonexistent/nodetrace-bench'];
let ops = 0;

function lane(i) {
  fs.stat(PATHS[i % PATHS.length], () => {
    ops++;
    dns.lookup('localhost', () => {
      ops++;
      lane(i + 1);
    });
  });
}

process.on('SIGUSR2', () => console.log(`loops ${ops} ${process.hrtime.bigint()}`));
console.log('ready ' + process.pid);
for (let i = 0; i < IN_FLIGHT; i++) lane(i);
