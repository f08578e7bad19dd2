'use strict';
// loop --prometheus without a tracer: the live dumps of a real capture
// (test/fixtures/bpftrace-loop-live.out, with its .cmd) as Prometheus's
// text format.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { LiveDumps } = require('../lib/prometheus/live-dumps');
const { dumpTurns, renderLoopMetrics, liveMetricsFor } = require('../lib/loop/live-metrics');
const { readExposition } = require('./support/prometheus-text');

const CAPTURE = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-loop-live.out'), 'utf8');
const FAMILY = 'nodetrace_loop_busy_seconds';

describe('loop --prometheus: live dumps and their metrics', function () {
  const dumps = [];
  const taker = new LiveDumps((d) => dumps.push(d));
  for (const line of CAPTURE.split('\n')) taker.take(line);
  const render = (d) => readExposition(renderLoopMetrics(dumpTurns(d), { labels: [['pid', '24778']] }));
  const one = (samples, name, le) => {
    const found = samples.filter((s) => s.name === name && (le === undefined || s.labels.le === le));
    assert.strictEqual(found.length, 1, `${name} ${le}`);
    return found[0].value;
  };

  it('serves the busy time of the turns: _count the turns, _sum the exact total, the target\'s 6 stalls of 180 ms in their bucket', function () {
    assert.strictEqual(dumps.length, 7);
    const last = dumps[dumps.length - 1];
    const samples = render(last);
    assert.strictEqual(one(samples, `${FAMILY}_count`), Number(dumpTurns(last).turns));
    assert.strictEqual(one(samples, 'nodetrace_loop_turns_total'), Number(dumpTurns(last).turns));
    assert.strictEqual(one(samples, `${FAMILY}_sum`), Number(dumpTurns(last).busyTotalUs) / 1e6);
    assert.strictEqual(one(samples, `${FAMILY}_bucket`, '+Inf'), one(samples, `${FAMILY}_count`));
    // [128K, 256K) µs: the stalls, 180 ms each: below le 0.262144 and not below 0.131072.
    assert.strictEqual(one(samples, `${FAMILY}_bucket`, '0.262144') - one(samples, `${FAMILY}_bucket`, '0.131072'), 6);
    for (const s of samples) assert.strictEqual(s.labels.pid, '24778');
  });

  it('grows from one dump to the next, as the target\'s bursts of stalls came', function () {
    const stalls = dumps.map((d) => {
      const s = render(d);
      const at = (le) => { const f = s.find((x) => x.name === `${FAMILY}_bucket` && x.labels.le === le); return f ? f.value : 0; };
      return at('0.262144') - at('0.131072');
    });
    for (let i = 1; i < stalls.length; i++) assert.ok(stalls[i] >= stalls[i - 1], stalls.join(' '));
    assert.ok(stalls.includes(3), stalls.join(' '));
  });

  it('labels the thread whose loop it is; before the first dump, the families with no series', function () {
    const worker = liveMetricsFor({ role: 'worker', label: 'Worker 1 "stall"', tid: 7 });
    const samples = readExposition(worker.render(dumpTurns(dumps[0]), { labels: [['pid', '5']] }).text);
    assert.ok(samples.every((s) => s.labels.thread === 'Worker 1 "stall"' && s.labels.pid === '5'));
    const main = liveMetricsFor({ role: 'main', label: 'main thread', tid: 5 });
    assert.deepStrictEqual(readExposition(main.render(null, { labels: [] }).text), []);
  });
});
