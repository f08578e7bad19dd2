'use strict';
// gc --prometheus without a tracer: the live dumps of a real capture
// (test/fixtures/bpftrace-gc-live.out, with its .cmd) as Prometheus's text
// format.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { LiveDumps } = require('../lib/prometheus/live-dumps');
const { dumpKinds, renderGcMetrics } = require('../lib/gc/live-metrics');
const { parseGc } = require('../lib/gc/report');
const { readExposition, samplesOf, checkHistogram } = require('./support/prometheus-text');

const CAPTURE = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-gc-live.out'), 'utf8');
const FAMILY = 'nodetrace_gc_pause_seconds';

describe('gc --prometheus: live dumps and their metrics', function () {
  const dumps = [];
  const left = [];
  const taker = new LiveDumps((d) => dumps.push(d));
  for (const line of CAPTURE.split('\n')) if (!taker.take(line)) left.push(line);
  const render = (d) => readExposition(renderGcMetrics(dumpKinds(d), { labels: [['pid', '4393']] }));
  const value = (samples, name, kind) => samplesOf(samples, name, kind).map((s) => s.value);

  it('takes each dump between its markers, and leaves the report to gc\'s parser', function () {
    assert.strictEqual(dumps.length, 8);
    const report = parseGc(left.slice(left.indexOf('Tracing ended.')).join('\n'), { tracer: 'bpftrace' });
    assert.deepStrictEqual(report.kinds.map((k) => [k.name, Number(k.count)]), [['scavenge', 70], ['mark-compact', 23], ['incremental', 118]]);
  });

  it('gives each kind a histogram whose _count is the program\'s own count and _sum its exact total', function () {
    const samples = render(dumps[dumps.length - 1]);
    const kinds = dumpKinds(dumps[dumps.length - 1]);
    assert.deepStrictEqual(kinds.map((k) => k.name), ['scavenge', 'mark-compact', 'incremental']);
    for (const k of kinds) {
      assert.strictEqual(checkHistogram(samples, FAMILY, k.name), Number(k.count));
      assert.deepStrictEqual(value(samples, 'nodetrace_gc_pauses_total', k.name), [Number(k.count)]);
      assert.deepStrictEqual(value(samples, `${FAMILY}_sum`, k.name), [Number(k.totalUs) / 1e6]);
    }
    for (const s of samples) assert.strictEqual(s.labels.pid, '4393');
    // [16K, 32K) µs of mark-compact ends at le 0.032768: all but its [32K, 64K) bucket below it.
    const le = (bound) => samplesOf(samples, `${FAMILY}_bucket`, 'mark-compact', { le: bound })[0].value;
    const count = Number(kinds[1].count);
    const above = Number(kinds[1].entry.buckets.filter((b) => Number(b.lo) >= 32768).reduce((n, b) => n + b.count, 0n));
    assert.strictEqual(le('0.032768'), count - above);
  });

  it('never goes backwards from one dump to the next, and grows', function () {
    const counts = dumps.map((d) => value(render(d), `${FAMILY}_count`, 'mark-compact')[0] || 0);
    for (let i = 1; i < counts.length; i++) assert.ok(counts[i] >= counts[i - 1], counts.join(' '));
    assert.ok(counts[counts.length - 1] > counts[0], counts.join(' '));
  });

  it('before the first dump, answers the families with no series', function () {
    const text = renderGcMetrics(null, { labels: [['pid', '1']] });
    assert.deepStrictEqual(readExposition(text), []);
    assert.match(text, /^# TYPE nodetrace_gc_pause_seconds histogram$/m);
    assert.match(text, /^# TYPE nodetrace_gc_pauses_total counter$/m);
  });
});
