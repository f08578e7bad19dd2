'use strict';
// Acts out a bpftrace program with a window (plan.window: lib/tracer/
// capabilities.js windowSignal), for test/session.test.js: its first SIGURG
// opens the window, saying so ("Window opened.") OPEN_MS later (bpftrace
// 0.22+ runs the clause in its poll loop, about 100 ms after the signal),
// its second prints the report (END_MARKER, its maps,
// REPORT_MARKER) with its "probes" (descriptors of /dev/null) still held;
// SIGTERM then closes them one by one, DETACH_MS apart (uprobes detach
// serially on Linux 6.13+), runs END and prints its maps again, as bpftrace
// does at exit. It writes what it was sent, with times, to its stderr.
// WINDOWED_TRACER_DEAF=1: it never prints the report (a tracer that did not
// run the clause), and prints its maps after END only.
// WINDOWED_TRACER_OPEN_MS=N: says the window is open N ms after the first
// SIGURG (default 150; "never": it does not).
// WINDOWED_TRACER_EARLY_REPORT=1: prints its report once, unasked, right
// after saying the window is open (as a window signal sent by another would
// make it), its maps then empty.
const fs = require('fs');

const DETACH_MS = Number(process.env.WINDOWED_TRACER_DETACH_MS || 400);
const OPEN_MS = process.env.WINDOWED_TRACER_OPEN_MS || '150';
const probes = Array.from({ length: 4 }, () => fs.openSync('/dev/null', 'r'));
const keepAlive = setInterval(() => {}, 1000);
let urgs = 0;
let detaching = false;
const say = (what) => process.stderr.write(`${what} at ${Date.now()}\n`);

process.on('SIGURG', () => {
  urgs++;
  say(`SIGURG ${urgs}`);
  if (urgs === 1 && OPEN_MS !== 'never') {
    setTimeout(() => {
      say('opened');
      process.stdout.write('Window opened.\n');
      if (process.env.WINDOWED_TRACER_EARLY_REPORT === '1') process.stdout.write('Tracing ended.\n@a: 1\n@traced_ns: 5\nReport printed.\n');
    }, Number(OPEN_MS));
  }
  if (urgs === 2 && process.env.WINDOWED_TRACER_DEAF !== '1') {
    const counted = process.env.WINDOWED_TRACER_EARLY_REPORT === '1' ? '' : '@a: 1\n';   // cleared by the early one
    process.stdout.write(`Tracing ended.\n${counted}@traced_ns: 5\nReport printed.\n`);
  }
});
process.on('SIGTERM', () => {
  say('SIGTERM');
  if (detaching) return;
  detaching = true;
  const detachNext = () => {
    if (probes.length) {
      fs.closeSync(probes.pop());
      setTimeout(detachNext, DETACH_MS);
      return;
    }
    process.stdout.write(urgs >= 2 && process.env.WINDOWED_TRACER_DEAF !== '1' ? 'Tracing ended.\n\n\n@b: 7\n' : 'Tracing ended.\n\n\n@a: 1\n');
    clearInterval(keepAlive);
  };
  detachNext();
});
process.stdout.write('Attaching 4 probes...\nHit Ctrl-C to end.\n');
