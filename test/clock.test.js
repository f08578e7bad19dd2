'use strict';
// Wall time for a kernel timestamp (lib/clock.js), held to Node's own
// instrument: performance.timeOrigin + performance.now(), which Node reads
// with microseconds at start (wall and monotonic clocks back to back).
const assert = require('assert');
const { wallMinusMonoNs, sleepSync } = require('../lib/clock');

describe('clock: wall minus monotonic', function () {
  it('agrees with performance.timeOrigin to a tenth of a millisecond, not to the whole millisecond Date.now() counts', function () {
    // Readings at random points within a millisecond: a reading that took
    // Date.now() as it stands is off by that point, 0-1 ms (median ~0.5).
    const offByMs = [];
    for (let i = 0; i < 15; i++) {
      sleepSync(1);
      const phaseUntil = process.hrtime.bigint() + BigInt(Math.floor(Math.random() * 1e6));
      while (process.hrtime.bigint() < phaseUntil);
      const ours = wallMinusMonoNs();
      const node = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6)) - process.hrtime.bigint();
      offByMs.push(Math.abs(Number(ours - node)) / 1e6);
    }
    const median = offByMs.slice().sort((a, b) => a - b)[7];
    assert(median < 0.1, `median ${median.toFixed(3)} ms off performance.timeOrigin: ${offByMs.map((x) => x.toFixed(3)).join(' ')}`);
  });
});
