'use strict';
// A main thread busy in one JavaScript function, clockLoop, that reads the
// clock on every turn of its inner loop: Date.now() ends in clock_gettime,
// which the kernel's vDSO answers in user space, in an executable mapping
// with no file ([vdso]). With WORK=20 about a quarter of the samples land
// there and most of the rest in clockLoop itself (measured with profile:
// WORK=0 puts more in the vDSO than in clockLoop). Prints "ready PID".
const WORK = Number(process.env.WORK || 20);

function clockLoop() {
  const end = Date.now() + 10;
  let x = 1;
  let now = 0;
  while ((now = Date.now()) < end) { for (let i = 0; i < WORK; i++) x = (x * 31 + i) % 1000003; }
  globalThis.clockResult = x + now;
  setImmediate(clockLoop);
}

console.log('ready ' + process.pid);
setImmediate(clockLoop);
