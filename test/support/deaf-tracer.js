'use strict';
// Acts out how bpftrace 0.17 ends, for test/session.test.js: it misses the
// first SIGTERM (as bpftrace misses a signal that lands outside epoll_wait),
// ends on the next one, prints END_MARKER, then prints its "maps" slowly.
// From then on SIGINT kills it, as it does bpftrace (SIG_DFL while printing),
// and SIGTERM is ignored (but noted on stderr). With DEAF_TRACER_HEARS_FIRST=1 it ends at once.
const MAPS = ['@a: 1', '@b: 2', '@c: 3'];
let heard = process.env.DEAF_TRACER_HEARS_FIRST === '1' ? 1 : 0;
let ended = false;
const keepAlive = setInterval(() => {}, 1000);

function end() {
  ended = true;
  process.removeAllListeners('SIGINT'); // default: a late SIGINT kills us
  process.stdout.write('Tracing ended.\n\n\n');
  let i = 0;
  const printNext = setInterval(() => {
    if (i < MAPS.length) { process.stdout.write(MAPS[i++] + '\n'); return; }
    clearInterval(printNext);
    clearInterval(keepAlive);
  }, 400);
}

const onSignal = (sig) => {
  if (ended) return process.stderr.write(`late ${sig}\n`); // says what was not needed
  if (heard++ === 0) return; // lost, like bpftrace's
  end();
};
process.on('SIGTERM', onSignal);
process.on('SIGINT', onSignal);
process.stdout.write('Attaching 1 probe...\nHit Ctrl-C to end.\n');
