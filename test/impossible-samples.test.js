'use strict';
// Samples that cannot be true (negative durations, durations longer than the
// trace) are counted apart and said, never folded into a histogram, a
// percentile or a share: on real DTrace for Linux output that shows them
// (addon-latency.d before its fix, racing on its global arrays).

const assert = require('node:assert/strict');
const { splitAtEndMarker } = require('../lib/tracer/output-formats');
const fs = require('node:fs');
const path = require('node:path');
const { buildModel } = require('../lib/latency/report/build-model');
const { summarize } = require('../lib/latency/report/summary');
const { renderText } = require('../lib/latency/report/text');
const { renderJson } = require('../lib/latency/report/json');
const { parse } = require('../lib/aggregation/parse');
const { discardImpossible } = require('../lib/aggregation/impossible');
const { percentile, totalCount } = require('../lib/aggregation/model');
const { buildKinds } = require('../lib/latency/report/kinds');

const RACE = fs.readFileSync(path.join(__dirname, 'fixtures', 'dtrace-addon-latency-race-crypto.out'), 'utf8');
// Node's own PBKDF2 work: its C++ name in the raw capture, crypto.pbkdf2 once named for users.
const PBKDF2 = /PBKDF2|^crypto\.pbkdf2$/;

function pbkdf2(model) {
  return buildKinds(model, { unit: 'ns' }).kinds.find((k) => PBKDF2.test(k.key.join(' ')));
}

describe('impossible samples', function () {
  it('the capture really holds negative buckets in the queue wait of the crypto work', function () {
    const raw = pbkdf2(parse(RACE));
    const negative = raw.breakdown.queue_wait.entry.buckets.filter((b) => b.lo !== null && b.lo < 0n && b.count > 0n);
    assert.deepEqual(negative[0], { lo: -549755813888n, hi: -274877906944n, count: 116n });
    assert.equal(negative.reduce((n, b) => n + b.count, 0n), 750n);
    // Folded in, they make a median of nonsense.
    assert.ok(percentile(raw.breakdown.queue_wait.entry, 1) < 0);
  });

  it('sets negative durations apart from the histogram, percentiles and count', function () {
    const model = buildModel(splitAtEndMarker(RACE.split('\n')), { tracer: 'dtrace' });
    const kind = pbkdf2(model);
    const queue = kind.breakdown.queue_wait.entry;
    assert.deepEqual(queue.discarded, { outOfOrder: 750n, longerThanTrace: 0n });
    assert.ok(queue.buckets.every((b) => b.lo === null || b.lo >= 0n || b.count === 0n));
    assert.ok(percentile(queue, 1) >= 0, 'no negative percentile');
    assert.equal(model.discarded.outOfOrder, 868n, 'every kind and phase, in all');
  });

  it('with the trace\'s length, sets apart durations longer than the trace, and an impossible max', function () {
    // The capture lasted 30 s (timeout -s TERM 30); the race made totals of ~549 s.
    const model = buildModel(splitAtEndMarker(RACE.split('\n')), { tracer: 'dtrace', traceNs: 30e9 });
    const zero = buildKinds(model, { unit: 'ns' }).kinds.find((k) => k.key.join('') === '0x0');
    assert.deepEqual(zero.entry.discarded, { outOfOrder: 0n, longerThanTrace: 5n });
    assert.ok(zero.entry.buckets.every((b) => b.count === 0n || b.lo < 30000000000n));
    assert.equal(totalCount(zero.entry), 111n, 'the count excludes the 5 set apart (116 printed)');
    assert.equal(model.discarded.longerThanTrace, 294n);
    assert.ok(model.discarded.maxima >= 1, 'the max of ~549 s is left out');
  });

  it('says so in the text report, per kind and in all, and keeps shares to the samples kept', function () {
    const text = renderText(summarize(buildModel(splitAtEndMarker(RACE.split('\n')), { tracer: 'dtrace', traceNs: 30e9 })), { traceText: '30 s' });
    assert.match(text, /queue wait: 750 samples discarded: timestamps out of order/);
    assert.match(text, /5 samples discarded: longer than the trace/);
    assert.match(text, /In all, set apart and not counted in any histogram, percentile or share:\n {2}868 samples discarded: timestamps out of order/);
    assert.match(text, /294 samples discarded: longer than the trace \(30 s\)/);
    assert.doesNotMatch(text, /-\d[\d.]* ?(ns|µs|ms|s)\b.*\|/, 'no negative row in any histogram');
  });

  it('says so in JSON, with zeros where nothing was set apart', function () {
    const json = JSON.parse(renderJson(summarize(buildModel(splitAtEndMarker(RACE.split('\n')), { tracer: 'dtrace', traceNs: 30e9 }))));
    const kind = json.kinds.find((k) => PBKDF2.test(k.name));
    assert.deepEqual(kind.breakdown.queue_wait.discarded, { out_of_order: 750, longer_than_trace: 53 });
    assert.deepEqual(kind.breakdown.run.discarded, { out_of_order: 79, longer_than_trace: 134 });
    const single = json.kinds.find((k) => k.name === '0xaced13da2c');
    assert.deepEqual(single.discarded, { out_of_order: 0, longer_than_trace: 0 });
    assert.deepEqual(json.discarded, { out_of_order: 868, longer_than_trace: 294, impossible_maxima: 2 });
    assert.ok(kind.breakdown.queue_wait.p50 >= 0);
    assert.ok(kind.breakdown.queue_wait.histogram.every((b) => b.count === 0 || b.lo >= 0));
  });

  it('leaves clean output and non-durations alone', function () {
    const clean = parse('@count_calls\n\n  a   -3\n');
    assert.deepEqual(discardImpossible(clean, { traceNs: 1e9 }).aggregations, clean.aggregations);
    const counts = parse('\n  value  ------------- Distribution ------------- count\n     -2 |@@@@ 4\n     -1 | 0\n      0 | 0\n');
    // a histogram of sizes (no unit, bpftrace's default) may well be negative
    const bp = discardImpossible({ ...counts, tracer: 'bpftrace' }, { unit: null });
    assert.equal(bp.discarded.outOfOrder, 0n);
  });
});
