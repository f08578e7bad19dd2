'use strict';
// A Node program with the article's bug: some code closes a file descriptor
// that is not open (here a double close, the usual way it happens), gets
// EBADF, shrugs, and carries on. `nodetrace ebadf` should stop it right at
// the failing close(), take a core, and let it finish its work.
//
// Prints "ready PID" at start, "close failed: EBADF" after each bad close and
// "finished: N ticks, M bad closes" at the end; exits 0.
//
// Environment (all optional):
//   EBADF_AFTER_TICKS=N  do the bad close at tick N (default 20; ticks are 100 ms)
//   EBADF_ON_SIGNAL=1    do it at the first tick after SIGUSR2 instead
//   EBADF_TIMES=N        bad closes to do, one per tick (default 1)
//   TICKS_AFTER=N        ticks of work after the last bad close (default 5)
//   HEAP_MB=N            keep N MB of live objects (makes gcore take longer)
//   TICK_MS=N            tick length (default 100)
const fs = require('fs');
const os = require('os');
const path = require('path');

const env = (name, dflt) => (process.env[name] === undefined ? dflt : Number(process.env[name]));
const AFTER_TICKS = env('EBADF_AFTER_TICKS', 20);
const ON_SIGNAL = process.env.EBADF_ON_SIGNAL === '1';
const TIMES = env('EBADF_TIMES', 1);
const TICKS_AFTER = env('TICKS_AFTER', 5);
const TICK_MS = env('TICK_MS', 100);

const ballast = [];
for (let i = 0; i < env('HEAP_MB', 0); i++) ballast.push(Buffer.alloc(1 << 20, i & 0xff));

let ticks = 0;
let badCloses = 0;
let triggered = !ON_SIGNAL && AFTER_TICKS <= 0;
let ticksSinceLast = 0;
process.on('SIGUSR2', () => { triggered = true; });

// The bug: the descriptor was already closed (think of a fork() failure
// path that closed it behind our back), and we close it again.
function closeTwice() {
  const fd = fs.openSync(os.devNull, 'r');
  fs.closeSync(fd);
  try {
    fs.closeSync(fd);
  } catch (err) {
    badCloses++;
    console.log('close failed: ' + err.code);
  }
}

// Real work between bad closes: write a file, read it back.
const scratch = path.join(os.tmpdir(), `ebadf-target-${process.pid}.txt`);
// (Removed each time, so that a target killed by a test leaves nothing behind.)
function work() {
  fs.writeFileSync(scratch, 'tick ' + ticks);
  const back = fs.readFileSync(scratch, 'utf8');
  fs.rmSync(scratch, { force: true });
  if (back !== 'tick ' + ticks) throw new Error('work went wrong');
}

function tick() {
  ticks++;
  work();
  if (!ON_SIGNAL && ticks >= AFTER_TICKS) triggered = true;
  if (triggered && badCloses < TIMES) {
    closeTwice();
    ticksSinceLast = 0;
    return;
  }
  if (badCloses >= TIMES && ++ticksSinceLast >= TICKS_AFTER) {
    clearInterval(timer);
    console.log(`finished: ${ticks} ticks, ${badCloses} bad closes, ${ballast.length} MB ballast`);
  }
}

const timer = setInterval(tick, TICK_MS);
console.log('ready ' + process.pid);
