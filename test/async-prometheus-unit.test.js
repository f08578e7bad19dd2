'use strict';
// async --prometheus without a tracer: the live dumps of a real capture
// (test/fixtures/bpftrace-async-live.out, with its .cmd) as Prometheus's
// text format.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { LiveDumps } = require('../lib/prometheus/live-dumps');
const { dumpKinds, renderAsyncMetrics, OTHER_KINDS } = require('../lib/async/live-metrics');
const { providersOf } = require('../lib/async/providers');
const { readExposition, checkHistogram } = require('./support/prometheus-text');

const CAPTURE = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-async-live.out'), 'utf8');
const providers = providersOf('20.20.2');

describe('async --prometheus: live dumps and their metrics', function () {
  const dumps = [];
  const taker = new LiveDumps((d) => dumps.push(d));
  for (const line of CAPTURE.split('\n')) taker.take(line);
  const render = (d, o = {}) => renderAsyncMetrics(dumpKinds(d, { providers }),
    { labels: [['pid', '21071']], ...o });
  const value = (samples, name, kind) => samples.filter((s) => s.name === name && s.labels.kind === kind)
    .map((s) => s.value);

  it('counts FSREQCALLBACK as the target counted its fs.stat calls: 200 a burst, created, called back and destroyed', function () {
    assert.strictEqual(dumps.length, 7);
    const samples = readExposition(render(dumps[dumps.length - 1]).text);
    for (const name of ['nodetrace_async_operations_created_total', 'nodetrace_async_callbacks_total', 'nodetrace_async_operations_destroyed_total']) {
      assert.deepStrictEqual(value(samples, name, 'FSREQCALLBACK'), [400], name);
    }
    assert.strictEqual(checkHistogram(samples, 'nodetrace_async_first_callback_wait_seconds', 'FSREQCALLBACK'), 400);
    assert.strictEqual(checkHistogram(samples, 'nodetrace_async_callback_seconds', 'FSREQCALLBACK'), 400);
    for (const s of samples) assert.strictEqual(s.labels.pid, '21071');
  });

  it('never goes backwards from one dump to the next, and shows each burst', function () {
    const created = dumps.map((d) => value(readExposition(render(d).text), 'nodetrace_async_operations_created_total', 'FSREQCALLBACK')[0] || 0);
    for (let i = 1; i < created.length; i++) assert.ok(created[i] >= created[i - 1], created.join(' '));
    assert.ok(created.includes(200) && created[created.length - 1] === 400, created.join(' '));
  });

  it('gives the first kinds seen series of their own, up to the bound, the rest one "(other kinds)"', function () {
    const first = render(dumps[dumps.length - 1], { maxKinds: 1 });
    const kinds = [...new Set(readExposition(first.text).map((s) => s.labels.kind))].sort();
    assert.deepStrictEqual(kinds, [OTHER_KINDS, first.admitted[0]].sort());
    const again = render(dumps[dumps.length - 1], { maxKinds: 1, admitted: first.admitted });
    assert.deepStrictEqual(again.admitted, first.admitted);
  });

  it('before the first dump, answers the families with no series', function () {
    const text = renderAsyncMetrics(null, { labels: [['pid', '1']] }).text;
    assert.deepStrictEqual(readExposition(text), []);
    assert.match(text, /^# TYPE nodetrace_async_callback_seconds histogram$/m);
  });
});
