'use strict';
// Many asynchronous operations alive at once: on SIGUSR2, BURST (default
// 3000) fs.stat calls issued in one tick, every one alive (its request
// queued for the thread pool) before the first callback can run; prints
// "done {"issued":N,"callbacks":N}" once all have called back. Prints
// "ready <pid>", runs until killed. For a tracer map of fewer keys than
// BURST (nodetrace async with NODETRACE_MAP_KEYS): it fills.
const fs = require('fs');

const BURST = Number(process.env.BURST || 3000);

process.on('SIGUSR2', () => {
  let callbacks = 0;
  for (let i = 0; i < BURST; i++) {
    fs.stat(__filename, () => {
      if (++callbacks === BURST) console.log('done ' + JSON.stringify({ issued: BURST, callbacks }));
    });
  }
});
setInterval(() => {}, 1000);
console.log('ready ' + process.pid);
