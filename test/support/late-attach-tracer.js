'use strict';
// For test/session.test.js: acts out how bpftrace starts: BEGIN's ready line
// first, then attaching the other probes (here 600 ms), then, as bpftrace
// does with __BPFTRACE_NOTIFY_PROBES_ATTACHED set, the notice on stderr.
// Ends on SIGTERM with the END marker.
const keepAlive = setInterval(() => {}, 1000);
process.stdout.write('Attaching 3 probes...\nTracing... Hit Ctrl-C to end.\n');
setTimeout(() => {
  if (process.env.__BPFTRACE_NOTIFY_PROBES_ATTACHED) process.stderr.write('__BPFTRACE_NOTIFY_PROBES_ATTACHED\n');
  process.stdout.write(`attached at ${Date.now()}\n`);
}, 600);
process.on('SIGTERM', () => {
  process.stdout.write('Tracing ended.\n');
  clearInterval(keepAlive);
});
