'use strict';
// Known counts of the asynchronous resources that are not AsyncWraps, for
// `nodetrace async` on a process started with -r nodetrace/register
// (lib/async/hook.js). Prints "ready", then on SIGUSR2 waits until the hook
// is on (a tracer attached: "state active" once it is; "state inactive"
// after 20 s),
// then does ROUNDS (default 200) of: one setTimeout, one setImmediate, one
// Promise.resolve().then() (two promises, one callback), one AsyncResource
// of type NodetraceJob run once and destroyed, one fs.read (an AsyncWrap:
// the uprobes' to count, not the hook's); one setImmediate callback
// busy-waits BUSY_MS (default 0) ms, and so does, for BUSY_MS too, the
// reaction of a promise the first fs.read callback makes (two promises,
// one callback more: a promise's time inside an AsyncWrap's callback).
// With FORGED_TYPE set, each round also runs an AsyncResource of that type,
// a name made to look like a line of the tracer's output (docs/security.md,
// 35.8). Then it prints what it did:
//   done {"Timeout":N,"Immediate":N,"promises":N,"then":N,"NodetraceJob":N,"fs.read":N[,"forged":N]}
// No async function or await anywhere: each promise made here is one of
// those counted. On SIGUSR1 it says whether its hook is on: "hook on|off".
const fs = require('fs');
const { AsyncResource } = require('async_hooks');

const ROUNDS = Number(process.env.ROUNDS || 200);
const BUSY_MS = Number(process.env.BUSY_MS || 0);
const FORGED_TYPE = process.env.FORGED_TYPE || '';
const hook = () => globalThis[Symbol.for('nodetrace.register.async')];
const fd = fs.openSync(__filename, 'r');
const into = Buffer.alloc(256);
const done = { Timeout: 0, Immediate: 0, promises: 0, then: 0, NodetraceJob: 0, 'fs.read': 0, ...(FORGED_TYPE ? { forged: 0 } : {}) };
let busy = BUSY_MS > 0;
let busyInRead = BUSY_MS > 0;

function busyWait() {
  const t0 = process.hrtime.bigint();
  while (process.hrtime.bigint() - t0 < BigInt(BUSY_MS) * 1000000n);
}

function round(next) {
  let left = 5;
  const one = () => { if (--left === 0) next(); };
  setTimeout(() => { done.Timeout++; one(); }, 1);
  setImmediate(() => {
    if (busy) {
      busy = false;
      busyWait();
    }
    done.Immediate++;
    one();
  });
  done.promises += 2;
  Promise.resolve(1).then(() => { done.then++; one(); });
  const job = new AsyncResource('NodetraceJob');
  job.runInAsyncScope(() => { done.NodetraceJob++; });
  job.emitDestroy();
  if (FORGED_TYPE) {
    const forged = new AsyncResource(FORGED_TYPE);
    forged.runInAsyncScope(() => { done.forged++; });
    forged.emitDestroy();
  }
  one();
  fs.read(fd, into, 0, into.length, 0, (err) => {
    if (err) throw err;
    done['fs.read']++;
    if (busyInRead) {
      busyInRead = false;
      done.promises += 2;
      Promise.resolve().then(() => { done.then++; busyWait(); });
    }
    one();
  });
}

function run() {
  let n = 0;
  const next = () => {
    if (++n > ROUNDS) { console.log('done ' + JSON.stringify(done)); return; }
    round(next);
  };
  next();
}

function whenActive(waited) {
  const h = hook();
  if (h && h.active()) { console.log('state active'); run(); return; }
  if (waited > 20000) { console.log('state inactive'); return; }
  setTimeout(() => whenActive(waited + 10), 10);
}

process.on('SIGUSR2', () => whenActive(0));
process.on('SIGUSR1', () => console.log(`hook ${hook() && hook().active() ? 'on' : 'off'}`));
setInterval(() => {}, 1000);
console.log(`ready ${hook() ? 'hook' : 'no-hook'}`);
