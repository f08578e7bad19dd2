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
//   EBADF_SAY_WHERE=1    first print "at closeTwice LINE COLUMN": where V8
//                        says the function that closes twice starts (the
//                        inspector's [[FunctionLocation]], 0-based)
//   EBADF_COMM=TEXT      name itself TEXT at start (its comm: the kernel keeps
//                        15 bytes), as any process may, newlines and all;
//                        prints "comm HEX", the name the kernel kept, in hex
const fs = require('fs');
const os = require('os');
const path = require('path');

const env = (name, dflt) => (process.env[name] === undefined ? dflt : Number(process.env[name]));
const AFTER_TICKS = env('EBADF_AFTER_TICKS', 20);
const ON_SIGNAL = process.env.EBADF_ON_SIGNAL === '1';
const TIMES = env('EBADF_TIMES', 1);
const TICKS_AFTER = env('TICKS_AFTER', 5);
const TICK_MS = env('TICK_MS', 100);

if (process.env.EBADF_COMM !== undefined) {
  fs.writeFileSync('/proc/self/comm', process.env.EBADF_COMM);
  // (The kernel ends what it shows with a newline of its own.)
  console.log('comm ' + Buffer.from(fs.readFileSync('/proc/self/comm', 'utf8').slice(0, -1)).toString('hex'));
}

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

// Asked of V8 itself, as a truth for the names nodetrace gives frames.
function functionLocation(fn) {
  const session = new (require('inspector').Session)();
  session.connect();
  let where = null;
  try {
    globalThis.__ebadfProbe = fn;
    session.post('Runtime.evaluate', { expression: 'globalThis.__ebadfProbe' }, (err, r) => {
      if (err) return;
      session.post('Runtime.getProperties', { objectId: r.result.objectId, ownProperties: true }, (err2, props) => {
        const loc = !err2 && (props.internalProperties || []).find((q) => q.name === '[[FunctionLocation]]');
        if (loc) where = loc.value.value;
      });
    });
  } finally {
    delete globalThis.__ebadfProbe;
    session.disconnect();
  }
  return where;
}
if (process.env.EBADF_SAY_WHERE === '1') {
  const where = functionLocation(closeTwice);
  if (where) console.log(`at closeTwice ${where.lineNumber} ${where.columnNumber}`);
}

const timer = setInterval(tick, TICK_MS);
console.log('ready ' + process.pid);
