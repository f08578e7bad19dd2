'use strict';
// For test/session.test.js: a tracer that never gets its probes attached
// (as bpftrace blocked opening a FIFO someone planted), and ignores SIGTERM.
process.on('SIGTERM', () => {});
setInterval(() => {}, 1000);
