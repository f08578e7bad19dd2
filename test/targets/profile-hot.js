'use strict';
// A main thread that spends a known share of its CPU in one JavaScript
// function: hotSpin runs until it has used HOT_MS of CPU, then warmSpin
// until WARM_MS, over and over (80% and 20% by default), each called by the
// event loop as an immediate (called from the loop, they are not inlined
// into a caller of ours). Budgets are CPU time (process.cpuUsage), not wall
// time, so a busy machine does not shift the split. Prints "ready PID".
// With POOL=N, also keeps N crypto.pbkdf2 calls running on libuv's pool.
// SECONDS=N: exits after N s; CPU_SECONDS=N: once the process has used N s
// of CPU, however long a busy machine makes that (what a profile samples).
// With HOT_DEPTH=2, hotSpin is called two calls deep: outerHot -> middleHot
// -> hotSpin (each caller called once per turn: V8 compiles and inlines
// only what runs often, so they stay frames of their own).
// On SIGUSR2 it prints "split HOT_MS WARM_MS CPU_MS": the CPU time really
// spent in each (a budget is overshot by up to one inner loop, so the split
// is measured, not assumed) and the process's CPU time; with
// SPLIT_AT_EXIT=1, also as it exits.
const crypto = require('crypto');

const HOT_MS = Number(process.env.HOT_MS || 8);
const WARM_MS = Number(process.env.WARM_MS || 2);

function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

let hotMs = 0;
let warmMs = 0;

function hotSpin() {
  const start = cpuMs();
  const end = start + HOT_MS;
  let x = 1;
  while (cpuMs() < end) { for (let i = 0; i < 200000; i++) x = (x * 31 + i) % 1000003; }
  globalThis.hotResult = x;
  hotMs += cpuMs() - start;
  setImmediate(warmSpin);
}

function warmSpin() {
  const start = cpuMs();
  const end = start + WARM_MS;
  let x = 1;
  while (cpuMs() < end) { for (let i = 0; i < 200000; i++) x = (x * 17 + i) % 999983; }
  globalThis.warmResult = x;
  warmMs += cpuMs() - start;
  setImmediate(startHot);
}

function middleHot() {
  hotSpin();
}

function outerHot() {
  middleHot();
}

const startHot = process.env.HOT_DEPTH === '2' ? outerHot : hotSpin;

function pbkdf2Forever() {
  crypto.pbkdf2('secret', 'salt', 20000, 32, 'sha256', (err) => {
    if (err) throw err;
    pbkdf2Forever();
  });
}

for (let i = 0; i < Number(process.env.POOL || 0); i++) pbkdf2Forever();
if (process.env.HOT_MS !== '0') setImmediate(startHot);
if (process.env.SECONDS) setTimeout(() => process.exit(0), Number(process.env.SECONDS) * 1000);
if (process.env.CPU_SECONDS) {
  const limitMs = Number(process.env.CPU_SECONDS) * 1000;
  setInterval(() => { if (cpuMs() >= limitMs) process.exit(0); }, 50);
}
process.on('SIGUSR2', () => console.log(`split ${hotMs} ${warmMs} ${cpuMs()}`));
// With SPLIT_AT_EXIT=1, the same line as it exits (its whole life: what `profile -c` samples).
if (process.env.SPLIT_AT_EXIT) process.on('exit', () => console.log(`split ${hotMs} ${warmMs} ${cpuMs()}`));
console.log('ready ' + process.pid);
