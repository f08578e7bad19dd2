'use strict';
// `nodetrace async --prometheus` end to end @tracer: the real bpftrace on a
// target that makes counted bursts of fs.stat calls (test/targets/
// async-burst.js: "done {"issued":N,"callbacks":N}" once a burst's calls
// have all called back), its endpoint scraped after each burst, then
// Ctrl-C and the usual report. One trace.
const assert = require('assert');
const { requireTracing, startTarget, stopTarget, killStragglers } = require('./support/harness');
const { startLiveTrace, valueOf, scrapeAfterBursts, keepSaid } = require('./support/live-trace');
const { checkHistogram } = require('./support/prometheus-text');

// Attach and detach on a loaded host (test/async.test.js).
const TRACE_BOUND_MS = 110000;
const WAIT_BOUND_MS = 20000;
const BURST = 200;
const DUMP_MS = 1200;
const KIND = 'FSREQCALLBACK';
const CREATED = 'nodetrace_async_operations_created_total';

describe('nodetrace async --prometheus @tracer', function () {
  this.timeout(TRACE_BOUND_MS + 4 * WAIT_BOUND_MS);
  let target;
  let issued;
  let scrapes;
  let report;

  before(async function () {
    requireTracing(this);
    target = keepSaid(await startTarget('async-burst.js', { env: { BURST: String(BURST) } }));
    const live = await startLiveTrace(['async', '-p', String(target.pid), '--json'], { timeoutMs: TRACE_BOUND_MS + 3 * WAIT_BOUND_MS });
    ({ counts: issued, scrapes, report } = await scrapeAfterBursts(live, {
      start: () => target.kill('SIGUSR2'),
      finished: (n) => {
        const all = [...target.said.matchAll(/^done (\{.*\})$/gm)].map((m) => JSON.parse(m[1]));
        return all.length >= n ? all[n - 1].issued : null;
      },
      shown: (samples, n, counts) => valueOf(samples, CREATED, KIND) >= counts.reduce((a, b) => a + b, 0),
      waitMs: WAIT_BOUND_MS,
      settleMs: DUMP_MS,
    }));
  });

  after(async function () {
    stopTarget(target);
    await killStragglers.call(this);
  });

  it('serves each kind\'s counts and histograms, FSREQCALLBACK\'s growing by exactly the target\'s own count', function () {
    const created = scrapes.map((s) => valueOf(s, CREATED, KIND));
    assert.deepStrictEqual(created, [issued[0], issued[0] + issued[1]], `served ${created}, issued ${issued}`);
    for (const [i, s] of scrapes.entries()) {
      assert.strictEqual(valueOf(s, 'nodetrace_async_callbacks_total', KIND), created[i]);
      assert.strictEqual(checkHistogram(s, 'nodetrace_async_first_callback_wait_seconds', KIND), created[i]);
      for (const x of s) assert.strictEqual(x.labels.pid, String(target.pid), JSON.stringify(x));
    }
  });

  it('prints the usual report at Ctrl-C, its count the one served last', function () {
    assert.strictEqual(report.code, 0, report.stderr);
    const json = JSON.parse(report.stdout);
    const kind = json.kinds.find((k) => k.name === KIND);
    assert.strictEqual(kind.created, issued[0] + issued[1], JSON.stringify(kind));
  });
});
