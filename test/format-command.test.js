'use strict';
// `nodetrace format` renders raw tracer output from stdin as latency does.
const assert = require('assert');
const { splitAtEndMarker } = require('../lib/tracer/output-formats');
const fs = require('fs');
const path = require('path');
const { nodetrace } = require('./support/harness');

const ARTICLE = path.join(__dirname, 'fixtures', 'shared', 'dtrace', 'addon-latency-sqlite3.out');
const OURS = path.join(__dirname, 'fixtures', 'bpftrace-addon-latency-sqlite3.out');

describe('nodetrace format', function () {
  it('renders the article\'s raw dtrace output with human units and percentiles', async function () {
    const r = await nodetrace(['format'], { input: fs.readFileSync(ARTICLE, 'utf8') });
    assert.strictEqual(r.code, 0, r.stderr);
    for (const kind of ['Work_BeginOpen', 'Work_BeginExec', 'Work_BeginClose', 'Work_BeginPrepare', 'Work_BeginRun']) {
      assert.match(r.stdout, new RegExp(kind));
    }
    assert.match(r.stdout, /count 151669/); // Work_BeginRun's operations, all of them
    assert.match(r.stdout, /µs/);
  });

  it('renders a real bpftrace capture of addon-latency.bt as latency does: histograms with human units, percentiles and the breakdown', async function () {
    const r = await nodetrace(['format'], { input: fs.readFileSync(OURS, 'utf8') });
    assert.strictEqual(r.code, 0, r.stderr);
    const text = r.stdout;
    for (const kind of ['Work_BeginOpen', 'Work_BeginExec', 'Work_BeginClose', 'Work_BeginPrepare', 'Work_BeginRun']) assert(text.includes(kind), `text output lacks ${kind}`);
    assert.match(text, /µs/);
    assert.match(text, /p50/);
    assert.match(text, /p99/);
    assert.match(text, /queue wait/i);
    assert.match(text, /loop wait/i);
    assert.match(text, /@@@/);
  });

  it('renders a real bpftrace capture of addon-latency.bt the same way latency does, also as JSON', async function () {
    const r = await nodetrace(['format', '--json'], { input: fs.readFileSync(OURS, 'utf8') });
    assert.strictEqual(r.code, 0, r.stderr);
    const kinds = JSON.parse(r.stdout).kinds;
    const run = kinds.find((k) => k.name.includes('Work_BeginRun'));
    assert(run && run.count > 0 && run.breakdown.run.p50 > 0);
  });

  it('says so, and fails, when stdin holds no aggregation', async function () {
    const r = await nodetrace(['format'], { input: 'hello\n' });
    assert.strictEqual(r.code, 1);
    assert.match(r.stderr, /no aggregation output/);
  });
});

describe('merging keys that print the same name (real capture)', function () {
  const { buildModel } = require('../lib/latency/report/build-model');
  const { summarize } = require('../lib/latency/report/summary');
  const { toJSON } = require('../lib/latency/report/json');
  const text = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-addon-latency-duplicate-keys.out'), 'utf8');
  const printedMaxes = (kind) => [...text.matchAll(/^@max_us\[(.*)\]: (\d+)$/gm)]
    .filter((m) => m[1].includes(kind)).map((m) => Number(m[2]));

  it('keeps the largest of a max() map\'s duplicates, and adds up the histograms', function () {
    const json = toJSON(summarize(buildModel(splitAtEndMarker(text.split('\n')), { tracer: 'bpftrace' })));
    const run = json.kinds.find((k) => k.name.includes('Work_BeginRun'));
    const maxes = printedMaxes('Work_BeginRun');
    assert(maxes.length > 1, 'the capture prints Work_BeginRun under several addresses');
    assert.strictEqual(run.max, Math.max(...maxes));
    const printedCounts = [...text.matchAll(/^@total_us\[node_sqlite3::Statement::Work_BeginRun[^\]]*\]: \n((?:\[.*\n)+)/gm)]
      .flatMap((m) => m[1].trim().split('\n').map((l) => Number(l.split(/\s+/)[2])));
    assert.strictEqual(run.count, printedCounts.reduce((a, b) => a + b, 0));
  });
});
