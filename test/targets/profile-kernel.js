'use strict';
// A main thread that spends most of its CPU in the kernel, called from one
// JavaScript function: syscallLoop reads /dev/zero 64 KiB at a time with
// fs.readSync (the kernel clears each buffer: system time) until it has
// used CALL_MS of CPU, then userSpin computes in JavaScript until USER_MS
// (8 and 2 by default), over and over, each called by the event loop as an
// immediate. Budgets are CPU time (process.cpuUsage), as profile-hot.js's.
// Prints "ready PID". On SIGUSR2 it prints "kernel CALL_MS CPU_MS
// SYSTEM_MS": the CPU time really spent in syscallLoop, the process's CPU
// time and the part of it spent in the kernel. (test/loop.test.js runs it
// with CALL_MS=30 USER_MS=0: each turn of the loop a 30 ms stall.)
const fs = require('fs');

const CALL_MS = Number(process.env.CALL_MS || 8);
const USER_MS = Number(process.env.USER_MS || 2);
const fd = fs.openSync('/dev/zero', 'r');
const buf = Buffer.alloc(65536);

function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

let callMs = 0;

function syscallLoop() {
  const start = cpuMs();
  const end = start + CALL_MS;
  while (cpuMs() < end) { for (let i = 0; i < 20; i++) fs.readSync(fd, buf, 0, buf.length, null); }
  callMs += cpuMs() - start;
  setImmediate(userSpin);
}

function userSpin() {
  const end = cpuMs() + USER_MS;
  let x = 1;
  while (cpuMs() < end) { for (let i = 0; i < 200000; i++) x = (x * 31 + i) % 1000003; }
  globalThis.spinResult = x;
  setImmediate(syscallLoop);
}

process.on('SIGUSR2', () => console.log(`kernel ${callMs} ${cpuMs()} ${process.cpuUsage().system / 1000}`));
if (process.env.SECONDS) setTimeout(() => process.exit(0), Number(process.env.SECONDS) * 1000);
console.log('ready ' + process.pid);
setImmediate(syscallLoop);
