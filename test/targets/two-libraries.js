'use strict';
// For test/memory-budget.test.js: time spent in two files' native code,
// the node executable (spinNative: V8's own, a JSON round trip) and
// libc (fillBytes: Buffer#fill is a memset, copyBytes#copy a memmove),
// each from a JavaScript function of its own. Prints "ready PID"; runs
// until killed.
const a = Buffer.alloc(8 << 20);
const b = Buffer.alloc(8 << 20);
const doc = { list: Array.from({ length: 2000 }, (_, i) => ({ i, name: `item ${i}` })) };

function fillBytes(n) {
  for (let i = 0; i < 4; i++) a.fill(n + i);
}

function copyBytes() {
  for (let i = 0; i < 4; i++) a.copy(b);
}

function spinNative() {
  return JSON.parse(JSON.stringify(doc)).list.length;
}

let n = 0;
function tick() {
  fillBytes(n++ & 0xff);
  copyBytes();
  globalThis.result = spinNative();
  setImmediate(tick);
}

console.log(`ready ${process.pid}`);
tick();
