'use strict';
// For test/session.test.js: a tracer given `-o FILE`, as bpftrace -c runs
// (its stdout is the command's): BEGIN's line at once, then a line every
// 100 ms into FILE, flushed each time as bpftrace does; on SIGTERM the END
// marker and a map, then exit. With `--exit-after MS`, it ends so by
// itself after MS ms, as bpftrace -c does when its command exits.
const fs = require('fs');
const file = process.argv[process.argv.indexOf('-o') + 1];
const exitAfter = process.argv.includes('--exit-after') ? Number(process.argv[process.argv.indexOf('--exit-after') + 1]) : 0;
const fd = fs.openSync(file, 'w', 0o600);
fs.writeSync(fd, 'Sampling... Hit Ctrl-C to end.\n');
let n = 0;
const tick = setInterval(() => fs.writeSync(fd, `tick ${++n}\n`), 100);
function end() {
  clearInterval(tick);
  fs.writeSync(fd, '\nTracing ended.\n@a: 1\n');
  fs.closeSync(fd);
  process.exit(0);
}
process.on('SIGTERM', end);
if (exitAfter) setTimeout(end, exitAfter);
