'use strict';
// For test/fixtures/bpftrace-{profile,loop,offcpu}-no-ustack-0.17.out: a
// loop through thousands of distinct user stacks (recursion 12 deep through
// one of two call sites, chosen by the bits of a counter), so that bpftrace
// 0.17's map of stacks (131,072 buckets by a hash of the stack, no second
// place: a stack whose bucket is taken is not kept) loses some. Run it with
// --always-sparkplug --no-opt --no-maglev: each call site then has its own
// return address. STACKS (at most 4,096, the default) sets how many
// distinct stacks; with BLOCK=FILE the deepest call writes a byte to FILE
// and fsyncs it rather than spinning (blocked off-CPU, for `profile
// --off-cpu`; a futex wait, Atomics.wait, leaves a one-frame user stack:
// glibc keeps no frame pointer there).
// On SIGUSR2 it prints "stacks SPIN_MS CPU_MS": the CPU time spent in spin
// (the walks and the clock they read) and the process's, so far.
// Prints "ready PID".
const STACKS = Math.min(Number(process.env.STACKS || 4096), 4096);
const BLOCK = Boolean(process.env.BLOCK);
const fs = require('fs');
const fd = BLOCK ? fs.openSync(process.env.BLOCK, 'w') : -1;

function walk(bits, depth) {
  if (depth === 0) {
    if (BLOCK) { fs.writeSync(fd, 'x', 0); fs.fsyncSync(fd); return 1; }
    let x = 0;
    for (let i = 0; i < 2000; i++) x += i;
    return x;
  }
  if (bits & 1) return walk(bits >> 1, depth - 1) + 1;
  return walk(bits >> 1, depth - 1) + 2;
}

function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

let n = 0;
let spinMs = 0;
function spin() {
  const start = cpuMs();
  const end = Date.now() + 50;
  while (Date.now() < end) walk(n++ % STACKS, 12);
  spinMs += cpuMs() - start;
  setImmediate(spin);
}
process.on('SIGUSR2', () => console.log(`stacks ${spinMs} ${cpuMs()}`));
console.log(`ready ${process.pid}`);
spin();
