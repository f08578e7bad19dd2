'use strict';
// Acts out how bpftrace ends a stream of printf events, for
// test/session.test.js: what it has not read when SIGTERM arrives is
// discarded (src/bpftrace.cpp: exitsig_recv), so a snoop stops the events
// first. It prints "E <n>" lines every few ms; SIGURG stops them and prints
// "Snooping stopped." (unless DISCARDING_TRACER_DEAF=1: a program whose
// gate never fires); SIGTERM prints how many events were still "unread"
// (emitted after the stop line was due) on stderr, then the END marker.
let n = 0;
let stopped = false;
const emit = setInterval(() => { if (!stopped) process.stdout.write(`E ${++n}\n`); }, 2);

process.on('SIGURG', () => {
  if (process.env.DISCARDING_TRACER_DEAF === '1') return;
  stopped = true;
  process.stdout.write('Snooping stopped.\n');
});
process.on('SIGTERM', () => {
  clearInterval(emit);
  process.stderr.write(stopped ? '' : `discarded events after E ${n}\n`);
  process.stdout.write(`Tracing ended.\n@records: ${n}\n`);
  process.exit(0);
});
process.stdout.write('Attaching 1 probe...\nHit Ctrl-C to end.\n');
