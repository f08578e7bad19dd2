'use strict';
// A hot arrow function whose work is three small named functions that
// TurboFan inlines into it once it is optimized: a sample there is a frame
// of the arrow's code only, unless the inlining is read back
// (docs/v8-frames.md, "Inlined functions"). The arrow is called from a
// loop in runFor, many times a millisecond, so V8 optimizes it as a function
// of its own (not only its loop, on the stack: OSR); it is too big to be
// inlined into runFor (more bytecode than --max-inlined-bytecode-size, 460:
// a branch never taken). With BOTH=1, runFor also calls scale from a
// function V8 is told never to optimize (%NeverOptimizeFunction, natives
// syntax turned on at run time), so that scale runs both inlined into step
// and as a frame of its own, about as long each way (issue 36.7).
// Prints "ready PID"; with SECONDS=N exits after N s.
function scale(x) {
  return (x * 31 + 7) % 1000003;
}

function mix(x) {
  return (x ^ (x >>> 3)) + 1;
}

function clampTo(x) {
  return x & 0xfffff;
}

const step = (x, k) => {
  if (k < 0) {
    let y = x;
    y = (y * 17 + 0) % 999983;
    y = (y * 17 + 1) % 999983;
    y = (y * 17 + 2) % 999983;
    y = (y * 17 + 3) % 999983;
    y = (y * 17 + 4) % 999983;
    y = (y * 17 + 5) % 999983;
    y = (y * 17 + 6) % 999983;
    y = (y * 17 + 7) % 999983;
    y = (y * 17 + 8) % 999983;
    y = (y * 17 + 9) % 999983;
    y = (y * 17 + 10) % 999983;
    y = (y * 17 + 11) % 999983;
    y = (y * 17 + 12) % 999983;
    y = (y * 17 + 13) % 999983;
    y = (y * 17 + 14) % 999983;
    y = (y * 17 + 15) % 999983;
    y = (y * 17 + 16) % 999983;
    y = (y * 17 + 17) % 999983;
    y = (y * 17 + 18) % 999983;
    y = (y * 17 + 19) % 999983;
    y = (y * 17 + 20) % 999983;
    y = (y * 17 + 21) % 999983;
    y = (y * 17 + 22) % 999983;
    y = (y * 17 + 23) % 999983;
    y = (y * 17 + 24) % 999983;
    y = (y * 17 + 25) % 999983;
    y = (y * 17 + 26) % 999983;
    y = (y * 17 + 27) % 999983;
    y = (y * 17 + 28) % 999983;
    y = (y * 17 + 29) % 999983;
    y = (y * 17 + 30) % 999983;
    y = (y * 17 + 31) % 999983;
    y = (y * 17 + 32) % 999983;
    y = (y * 17 + 33) % 999983;
    y = (y * 17 + 34) % 999983;
    y = (y * 17 + 35) % 999983;
    y = (y * 17 + 36) % 999983;
    y = (y * 17 + 37) % 999983;
    y = (y * 17 + 38) % 999983;
    y = (y * 17 + 39) % 999983;
    return y;
  }
  for (let i = 0; i < 40; i++) x = clampTo(mix(scale(x + i)));
  return x;
};

const BOTH = process.env.BOTH === '1';
function coldCaller(x) {
  for (let i = 0; i < 40; i++) x = scale(x + i);
  return x;
}
if (BOTH) {
  require('v8').setFlagsFromString('--allow-natives-syntax');
  new Function('f', '%NeverOptimizeFunction(f)')(coldCaller);
}

function runFor(ms) {
  const end = Date.now() + ms;
  let x = 1;
  while (Date.now() < end) {
    for (let k = 0; k < 1000; k++) x = step(x, k);
    if (BOTH) for (let k = 0; k < 1000; k++) x = coldCaller(x);
  }
  globalThis.sink = x;
  setImmediate(runFor, ms);
}

// Run as a program it starts runFor itself; required (profile-worker.js
// with INLINE=1, the hot arrow function beside other work) it exports it:
// 20 ms a turn, each turn queued again by setImmediate.
if (require.main === module) {
  setImmediate(runFor, 20);
  if (process.env.SECONDS) setTimeout(() => process.exit(0), Number(process.env.SECONDS) * 1000);
  console.log("ready " + process.pid);
}
module.exports = { runFor };
