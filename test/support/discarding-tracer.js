'use strict';
// Acts out how bpftrace ends a stream of printf events, for
// test/session.test.js: what it has not read when SIGTERM arrives is
// discarded (src/bpftrace.cpp: exitsig_recv), so a snoop stops the events
// first. It prints "E <n>" lines every few ms; SIGURG stops them and prints
// "Tracing stopped." (unless DISCARDING_TRACER_DEAF=1: a program whose
// gate never fires); SIGTERM prints how many events were still "unread"
// (emitted after the stop line was due) on stderr, then the END marker.
// DISCARDING_TRACER_DETACH_MS: it then takes this long to exit, as bpftrace
// 0.17 detaching http-wire.bt's 23 probes on Linux 6.13+ does.
let n = 0;
let stopped = false;
const emit = setInterval(() => { if (!stopped) process.stdout.write(`E ${++n}\n`); }, 2);

process.on('SIGURG', () => {
  if (process.env.DISCARDING_TRACER_DEAF === '1') return;
  stopped = true;
  process.stdout.write('Tracing stopped.\n');
});
process.on('SIGTERM', () => {
  clearInterval(emit);
  process.stderr.write(stopped ? '' : `discarded events after E ${n}\n`);
  process.stdout.write(`Tracing ended.\n@records: ${n}\n`);
  setTimeout(() => process.exit(0), Number(process.env.DISCARDING_TRACER_DETACH_MS || 0));
});
process.stdout.write('Attaching 1 probe...\nHit Ctrl-C to end.\n');
