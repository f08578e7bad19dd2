'use strict';
// Plays nodetrace's part towards the ebadf watchdog, for test/ebadf-unit.test.js:
// starts the watchdog for PID argv[2], tells it that PID was stopped (and,
// with a second argument, that a fake "gcore" process group is running),
// prints "armed", then waits to be killed. The test SIGKILLs this process and
// checks that the watchdog resumes the PID and kills the group.
const { Guard } = require('../../lib/ebadf/guard');

const pid = Number(process.argv[2]);
const gcorePgid = Number(process.argv[3] || 0);

Guard.start({ pid }).then((guard) => {
  guard.send(`stopped ${pid}`);
  if (gcorePgid) guard.send(`gcore ${gcorePgid}`);
  process.stdout.write('armed\n');
  setInterval(() => {}, 1000);
}, (err) => {
  process.stderr.write(String(err.message) + '\n');
  process.exit(1);
});
