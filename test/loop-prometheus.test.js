'use strict';
// `nodetrace loop --prometheus` end to end @tracer: the real bpftrace on a
// target that stalls its loop in counted bursts (test/targets/loop-stall.js,
// LOOP_STALLS_ON_SIGNAL), its endpoint scraped after each burst, then
// Ctrl-C and the usual report. One trace.
const assert = require('assert');
const { requireTracing, startTarget, stopTarget, killStragglers } = require('./support/harness');
const { startLiveTrace, valueOf, scrapeAfterBursts, keepSaid } = require('./support/live-trace');

// Attach and detach on a loaded host (test/loop.test.js).
const TRACE_BOUND_MS = 60000;
const WAIT_BOUND_MS = 20000;
// A stall of 180 ms lands in hist()'s [128K, 256K) µs: le 0.131072 to 0.262144.
const STALL_MS = 180;
const PER_BURST = 3;
const DUMP_MS = 1200;
const FAMILY = 'nodetrace_loop_busy_seconds';

// The turns busy for [131, 262) ms: the stalls.
function stallsOf(samples) {
  return valueOf(samples, `${FAMILY}_bucket`, undefined, { le: '0.262144' }) - valueOf(samples, `${FAMILY}_bucket`, undefined, { le: '0.131072' });
}

describe('nodetrace loop --prometheus @tracer', function () {
  this.timeout(TRACE_BOUND_MS + 4 * WAIT_BOUND_MS);
  let target;
  let bursts;
  let scrapes;
  let report;

  before(async function () {
    requireTracing(this);
    target = keepSaid(await startTarget('loop-stall.js', { env: { LOOP_STALLS_ON_SIGNAL: String(PER_BURST), LOOP_STALL_MS: String(STALL_MS) } }));
    const live = await startLiveTrace(['loop', '-p', String(target.pid), '--json'], { timeoutMs: TRACE_BOUND_MS + 3 * WAIT_BOUND_MS });
    ({ counts: bursts, scrapes, report } = await scrapeAfterBursts(live, {
      start: () => target.kill('SIGUSR2'),
      finished: (n) => {
        const m = new RegExp(`^burst ${n}: stalls (\\d+)$`, 'm').exec(target.said);
        return m && Number(m[1]);
      },
      shown: (samples, n) => stallsOf(samples) >= n * PER_BURST,
      waitMs: WAIT_BOUND_MS,
      settleMs: DUMP_MS,
    }));
  });

  after(async function () {
    stopTarget(target);
    await killStragglers.call(this);
  });

  it('serves the histogram of each turn\'s busy time, its stalls growing by exactly the target\'s own count', function () {
    const traced = scrapes.map(stallsOf);
    assert.deepStrictEqual(traced, bursts, `stalls served ${traced}, counted by the target ${bursts}`);
    for (const s of scrapes) {
      assert.strictEqual(valueOf(s, `${FAMILY}_bucket`, undefined, { le: '+Inf' }), valueOf(s, `${FAMILY}_count`));
      assert.strictEqual(valueOf(s, 'nodetrace_loop_turns_total'), valueOf(s, `${FAMILY}_count`));
      for (const x of s) assert.deepStrictEqual([x.labels.pid, x.labels.thread], [String(target.pid), 'main'], JSON.stringify(x));
    }
    assert.ok(valueOf(scrapes[1], `${FAMILY}_count`) > valueOf(scrapes[0], `${FAMILY}_count`));
  });

  it('prints the usual report at Ctrl-C, with the stalls the target made', function () {
    assert.strictEqual(report.code, 0, report.stderr);
    const json = JSON.parse(report.stdout);
    assert.strictEqual(json.stalls.length, bursts[1], JSON.stringify(json.stalls));
  });
});
