'use strict';
// For test/fixtures/bpftrace-profile-no-ustack-0.17.out: a CPU-bound loop
// through thousands of distinct user stacks (recursion 12 deep through one
// of two call sites, chosen by the bits of a counter), so that bpftrace
// 0.17's map of stacks (131,072 buckets by a hash of the stack, no second
// place: a stack whose bucket is taken is not kept) loses some. Run it with
// --always-sparkplug --no-opt --no-maglev: each call site then has its own
// return address. Prints "ready PID".
function walk(bits, depth) {
  if (depth === 0) {
    let x = 0;
    for (let i = 0; i < 2000; i++) x += i;
    return x;
  }
  if (bits & 1) return walk(bits >> 1, depth - 1) + 1;
  return walk(bits >> 1, depth - 1) + 2;
}

let n = 0;
function spin() {
  const end = Date.now() + 50;
  while (Date.now() < end) walk(n++ & 0xfff, 12);
  setImmediate(spin);
}
console.log(`ready ${process.pid}`);
spin();
