'use strict';
// Many asynchronous operations alive at once: on SIGUSR2, BURST (default
// 3000) fs.stat calls issued in one tick, every one alive (its request
// queued for the thread pool) before the first callback can run; prints
// "done {"issued":N,"callbacks":N}" once all have called back. Prints
// "ready <pid>", runs until killed. For a tracer map of fewer keys than
// BURST (nodetrace async with NODETRACE_MAP_KEYS): it fills. With CALLERS
// set, each call is made from a function of its own (CALLERS distinct
// functions, in turn): as many distinct creation stacks, for the map of
// their JavaScript frames (async --stacks) to fill. With HOLD set, the
// thread pool's threads (UV_THREADPOOL_SIZE, 4 by default) are first kept
// busy for good (a pbkdf2 of 2^31-1 iterations each), so that every call
// stays queued, alive, until the target is killed; it prints
// "held {"issued":N}" instead. Run with --always-sparkplug --no-opt
// --no-maglev, each caller has its own return address: as many distinct
// user stacks, for bpftrace's own map of stacks (before 0.25) to lose some.
const fs = require('fs');
const crypto = require('crypto');

const BURST = Number(process.env.BURST || 3000);
const CALLERS = Number(process.env.CALLERS || 0);
const callers = Array.from({ length: CALLERS }, (_, i) => new Function('stat', 'file', 'done', `return stat(file, done); // caller ${i}`));

process.on('SIGUSR2', () => {
  if (process.env.HOLD) {
    const threads = Number(process.env.UV_THREADPOOL_SIZE || 4);
    for (let i = 0; i < threads; i++) crypto.pbkdf2('x', 'y', 2 ** 31 - 1, 8, 'sha1', () => {});
  }
  let callbacks = 0;
  const done = () => {
    if (++callbacks === BURST) console.log('done ' + JSON.stringify({ issued: BURST, callbacks }));
  };
  for (let i = 0; i < BURST; i++) {
    if (CALLERS) callers[i % CALLERS](fs.stat, __filename, done);
    else fs.stat(__filename, done);
  }
  if (process.env.HOLD) console.log('held ' + JSON.stringify({ issued: BURST }));
});
setInterval(() => {}, 1000);
console.log('ready ' + process.pid);
