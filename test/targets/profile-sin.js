'use strict';
// For test/profile.test.js, "a frameless leaf": betaFloat calls Math.sin
// in a loop, which V8 compiles to a call of its C++ ieee754::sin, a leaf
// that keeps no frame pointer on its fast path; gammaInt does integer work
// beside it; tick calls both, each turn an immediate. Run it with --cpu-prof
// (the truth the test compares with): it exits on SIGUSR2 (or after
// SECONDS, 120), so that node writes the profile. Prints "ready PID".
function betaFloat(x) {
  let s = 0;
  for (let i = 0; i < 4000; i++) s += Math.sin(x + i * 0.001);
  return s;
}

function gammaInt(n) {
  let s = n;
  for (let i = 0; i < 40000; i++) s = (s * 31 + i) | 0;
  return s;
}

function tick() {
  let t = 0;
  for (let k = 0; k < 50; k++) {
    t += betaFloat(k);
    t += gammaInt(k);
  }
  globalThis.result = t;
  setImmediate(tick);
}

tick();
console.log(`ready ${process.pid}`);
process.on('SIGUSR2', () => process.exit(0));
setTimeout(() => process.exit(0), Number(process.env.SECONDS || 120) * 1000).unref();
