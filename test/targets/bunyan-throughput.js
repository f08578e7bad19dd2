'use strict';
// A bunyan service at level info doing units of CPU work and logging debug
// records, for bench/snoop-throughput.js and the snoop tests.
//   RATE=0       one log.debug() call per unit of work (a tight loop of debug calls)
//   RATE=10000   10,000 debug records a second, spread over the work
//   UNIT=N       JSON round trips per unit of work (default 1)
//   DURATION=N   run this long, then print a result line and exit (default 5)
//   WARMUP=N     seconds not counted at the start (default 1)
//   STEADY=1     a unit of work is arithmetic (no allocation) instead of a
//                JSON round trip: garbage collection makes the JSON units'
//                rate vary by 10-30% from run to run, which hides a 10% cost
// Prints "ready <pid>" at once, then after DURATION:
//   result <units> <debug calls> <seconds measured>
// Start it with `node -r <repo>/register.js` for real probes, or without for
// the stock dtrace-provider stub (no-op probes on Linux).
const bunyan = require('bunyan');

const RATE = Number(process.env.RATE || 0);
const UNIT = Number(process.env.UNIT || 1);
const DURATION = Number(process.env.DURATION || 5);
const WARMUP = Number(process.env.WARMUP || 1);

const log = bunyan.createLogger({ name: 'throughput', level: 'info', streams: [{ level: 'info', stream: { write() {} } }] });
const payload = { user: 'u123', op: 'get', path: '/v1/objects/abc', bytes: 4096, tags: ['a', 'b', 'c'] };

const STEADY = process.env.STEADY === '1';
let sink = 0;
function work() {
  if (STEADY) {
    for (let i = 0; i < UNIT * 400; i++) sink = (sink * 31 + i) | 0;
    return;
  }
  for (let i = 0; i < UNIT; i++) sink += JSON.parse(JSON.stringify(payload)).bytes;
}

console.log('ready ' + process.pid);

const start = process.hrtime.bigint();
const warmEnd = start + BigInt(Math.round(WARMUP * 1e9));
const end = warmEnd + BigInt(Math.round(DURATION * 1e9));
let units = 0;
let calls = 0;
let issued = 0;
let measuring = false;
let t0 = warmEnd;

function slice() {
  // Work in 10 ms slices so timers and signals still get a turn.
  const sliceEnd = process.hrtime.bigint() + 10000000n;
  for (;;) {
    const now = process.hrtime.bigint();
    if (!measuring && now >= warmEnd) {
      measuring = true;
      t0 = now;
      units = 0;
      calls = 0;
    }
    if (now >= end) {
      const secs = Number(now - t0) / 1e9;
      console.log(`result ${units} ${calls} ${secs.toFixed(3)}`);
      process.exit(0);
    }
    if (now >= sliceEnd) break;
    for (let j = 0; j < 64; j++) {
      work();
      units++;
      if (RATE === 0) {
        log.debug({ unit: units }, 'unit %d done', units);
        calls++;
      }
    }
    if (RATE > 0) {
      const due = Math.floor(Number(now - start) / 1e9 * RATE);
      while (issued < due) {
        issued++;
        log.debug({ unit: units, n: issued }, 'unit %d done', units);
        calls++;
      }
    }
  }
  setImmediate(slice);
}
setImmediate(slice);
