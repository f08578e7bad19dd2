'use strict';
// Acts out how bpftrace ends when detaching its probes is slow (uprobes on a
// 120 MB node, a loaded host), for test/session.test.js: it hears the first
// SIGTERM, closes its "probes" (descriptors of /dev/null, counted by the
// test as bpftrace's perf events are), and runs END 1.5 s later. A second
// signal by then makes it exit without END's output, as bpftrace 0.17 does
// (src/bpftrace.cpp: a signal during END's drain returns from the poll, and
// perf_event_printer drops every event once exitsig_recv is set).
const fs = require('fs');

const probes = Array.from({ length: 4 }, () => fs.openSync('/dev/null', 'r'));
const keepAlive = setInterval(() => {}, 1000);
let detaching = false;
let again = false;

process.on('SIGTERM', () => {
  if (detaching) { again = true; return; }
  detaching = true;
  for (const fd of probes) fs.closeSync(fd);
  setTimeout(() => {
    if (!again) process.stdout.write('Tracing ended.\n\n\n@a: 1\n');
    clearInterval(keepAlive);
  }, 1500);
});
process.stdout.write('Attaching 4 probes...\nHit Ctrl-C to end.\n');
