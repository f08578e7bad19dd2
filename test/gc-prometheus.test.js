'use strict';
// `nodetrace gc --prometheus` end to end @tracer: the real bpftrace on a
// target that forces full GCs in counted bursts and counts its own
// collections (test/targets/gc-churn.js, GC_ON_SIGNAL), its endpoint
// scraped after each burst, then Ctrl-C and the usual report. One trace.
const assert = require('assert');
const { requireTracing, startTarget, stopTarget, killStragglers } = require('./support/harness');
const { startLiveTrace, valueOf, scrapeAfterBursts, keepSaid } = require('./support/live-trace');
const { checkHistogram } = require('./support/prometheus-text');

// Attach and detach on a loaded host (test/gc.test.js).
const TRACE_BOUND_MS = 110000;
// A dump every second; a burst is done in well under that.
const WAIT_BOUND_MS = 20000;
const PER_BURST = 5;
// The program prints its maps every second: a little more is one dump later.
const DUMP_MS = 1200;
const FAMILY = 'nodetrace_gc_pause_seconds';

describe('nodetrace gc --prometheus @tracer', function () {
  this.timeout(TRACE_BOUND_MS + 4 * WAIT_BOUND_MS);
  let target;
  let bursts;
  let scrapes;
  let report;

  before(async function () {
    requireTracing(this);
    target = keepSaid(await startTarget('gc-churn.js', { args: ['--expose-gc'], env: { GC_ON_SIGNAL: String(PER_BURST) } }));
    const live = await startLiveTrace(['gc', '-p', String(target.pid), '--json'], { timeoutMs: TRACE_BOUND_MS + 3 * WAIT_BOUND_MS });
    const majors = (samples) => valueOf(samples, `${FAMILY}_count`, 'mark-compact');
    ({ counts: bursts, scrapes, report } = await scrapeAfterBursts(live, {
      start: () => target.kill('SIGUSR2'),
      finished: (n) => {
        const m = new RegExp(`^burst ${n}: minor (\\d+) major (\\d+)$`, 'm').exec(target.said);
        return m && { minor: Number(m[1]), major: Number(m[2]) };
      },
      // Every forced GC of the bursts so far shows (the count at least their sum).
      shown: (samples, n) => majors(samples) >= n * PER_BURST,
      waitMs: WAIT_BOUND_MS,
      settleMs: DUMP_MS,
    }));
  });

  after(async function () {
    stopTarget(target);
    await killStragglers.call(this);
  });

  it('serves the pause histograms by kind, mark-compact\'s _count growing by exactly the target\'s own count of major GCs', function () {
    for (const scrape of scrapes) {
      checkHistogram(scrape, FAMILY, 'mark-compact');
      for (const s of scrape) assert.strictEqual(s.labels.pid, String(target.pid), JSON.stringify(s));
    }
    const traced = scrapes.map((s) => valueOf(s, `${FAMILY}_count`, 'mark-compact'));
    assert.strictEqual(traced[1] - traced[0], bursts[1].major - bursts[0].major, `traced ${traced}, the target counted ${JSON.stringify(bursts)}`);
    assert.ok(bursts[1].major - bursts[0].major >= PER_BURST, JSON.stringify(bursts));
    assert.strictEqual(valueOf(scrapes[1], 'nodetrace_gc_pauses_total', 'mark-compact'), traced[1]);
  });

  it('prints the usual report at Ctrl-C, its mark-compact count the one served last', function () {
    assert.strictEqual(report.code, 0, report.stderr);
    const json = JSON.parse(report.stdout);
    assert.strictEqual(json.kinds.find((k) => k.name === 'mark-compact').count, valueOf(scrapes[1], `${FAMILY}_count`, 'mark-compact'));
  });
});
