'use strict';
// Plays nodetrace's part towards the ebadf watchdog, for test/ebadf-unit.test.js:
// starts the watchdog for PID argv[2], tells it that PID was stopped (and,
// with a second argument, that a fake "gcore" process group is running on
// it), prints "armed", then waits to be killed. The test SIGKILLs this
// process and checks that the watchdog resumes the PID and kills the group.
//
// Environment, for the watchdog's own clock (all optional):
//   GUARD_MAX_STOP_MS=N  the longest one stop may last
//   GUARD_SILENT_MS=N    how long nodetrace may be silent
//   GUARD_CLAIM=0        do not say the PID was stopped (a hit not read yet)
//   GUARD_BLOCK_MS=N     once armed, block this event loop for N ms (a
//                        nodetrace busy reading: no heartbeat)
const { Guard } = require('../../lib/ebadf/guard');

const pid = Number(process.argv[2]);
const gcorePgid = Number(process.argv[3] || 0);
const env = (name) => Number(process.env[name] || 0);

Guard.start({ pid, maxStopMs: env('GUARD_MAX_STOP_MS'), silentMs: env('GUARD_SILENT_MS') }).then((guard) => {
  if (process.env.GUARD_CLAIM !== '0') guard.send(`stopped ${pid}`);
  if (gcorePgid) guard.send(`gcore ${gcorePgid} /nonexistent ${pid}`);
  process.stdout.write('armed\n', () => {
    const block = env('GUARD_BLOCK_MS');
    if (block) {
      const until = Date.now() + block;
      while (Date.now() < until) { /* busy */ }
      process.stdout.write('unblocked\n');
    }
  });
  setInterval(() => {}, 1000);
}, (err) => {
  process.stderr.write(String(err.message) + '\n');
  process.exit(1);
});
