'use strict';
// Wall time for a kernel timestamp (lib/clock.js), held to Node's own
// instrument: performance.timeOrigin + performance.now(), which Node reads
// with microseconds at start (wall and monotonic clocks back to back).
//
// Read in a fresh process: timeOrigin is fixed at start, while the wall
// clock is slewed (NTP) against the monotonic one as a long process runs:
// in `make unit`'s 4-minute mocha, 6.6 ms by then (2026-11-30), every
// reading off by the same amount.
const assert = require('assert');
const { execFileSync } = require('child_process');
const path = require('path');

const READINGS = `
const { wallMinusMonoNs, sleepSync } = require(${JSON.stringify(path.join(__dirname, '../lib/clock'))});
const offByMs = [];
for (let i = 0; i < 15; i++) {
  sleepSync(1);
  // Readings at random points within a millisecond: a reading that took
  // Date.now() as it stands is off by that point, 0-1 ms (median ~0.5).
  const phaseUntil = process.hrtime.bigint() + BigInt(Math.floor(Math.random() * 1e6));
  while (process.hrtime.bigint() < phaseUntil);
  const ours = wallMinusMonoNs();
  const node = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6)) - process.hrtime.bigint();
  offByMs.push(Math.abs(Number(ours - node)) / 1e6);
}
process.stdout.write(JSON.stringify(offByMs));
`;

describe('clock: wall minus monotonic', function () {
  it('agrees with performance.timeOrigin to a tenth of a millisecond, not to the whole millisecond Date.now() counts', function () {
    const offByMs = JSON.parse(execFileSync(process.execPath, ['-e', READINGS], { encoding: 'utf8', timeout: 30000 }));
    assert.strictEqual(offByMs.length, 15);
    const median = offByMs.slice().sort((a, b) => a - b)[7];
    assert(median < 0.1, `median ${median.toFixed(3)} ms off performance.timeOrigin: ${offByMs.map((x) => x.toFixed(3)).join(' ')}`);
  });
});
