'use strict';
// The model helpers, the text report and the JSON report, on real captures.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { parse } = require('../lib/aggregation/parse');
const model = require('../lib/aggregation/model');
const units = require('../lib/render/units');
const { summarize } = require('../lib/latency/report/summary');
const { renderText } = require('../lib/latency/report/text');
const latencyJson = require('../lib/latency/report/json');

// The latency report of a parsed capture, as text or as the JSON object.
const renderReport = (parsed, options = {}) => renderText(summarize(parsed, options), options);
const toJSON = (parsed) => latencyJson.toJSON(summarize(parsed));

const FIXTURES = path.join(__dirname, 'fixtures');
const ARTICLE = path.join(__dirname, 'fixtures', 'shared', 'dtrace', 'addon-latency-sqlite3.out');
const LINUX_DTRACE = path.join(__dirname, 'fixtures', 'shared', 'dtrace', 'linux-dtrace-uv-queue-work-sqlite3.out');
const UTILS = path.join(__dirname, 'fixtures', 'shared', 'dtrace', 'dtrace-utils-tests');
const read = (file) => fs.readFileSync(path.isAbsolute(file) ? file : path.join(FIXTURES, file), 'utf8');
const load = (file) => parse(read(file));

const RUN_ARTICLE = 'node_sqlite3.node`node_sqlite3::Statement::Work_BeginRun(node_sqlite3::Statement::Baton*)';
const CLOSE_MANGLED = '_ZN12node_sqlite38Database15Work_BeginCloseEPNS0_5BatonE';
// what `c++filt` printed for it on this machine
const CLOSE_DEMANGLED = 'node_sqlite3::Database::Work_BeginClose(node_sqlite3::Database::Baton*)';

// The block of report lines under a heading, up to the next blank line.
function block(report, heading) {
  const lines = report.split('\n');
  const start = lines.findIndex((line) => line === heading);
  assert.ok(start >= 0, `no heading "${heading}" in:\n${report}`);
  const end = lines.indexOf('', start);
  return lines.slice(start, end === -1 ? undefined : end);
}

describe('a percentile of a tracer\'s histogram, as its bucket (36.6)', function () {
  const { percentileText } = require('../lib/render/histogram');
  const entry = { kind: 'log2', buckets: [{ lo: 32768n, hi: 65536n, count: 10n }, { lo: 65536n, hi: 131072n, count: 1n }] };

  it('prints the bucket that holds the rank, its top capped by the exact max', function () {
    assert.equal(percentileText(entry, 50, 'us'), '33\u201366 ms');
    assert.equal(percentileText(entry, 99, 'us', { limit: 70000 }), '66\u201370 ms');
    assert.equal(percentileText(entry, 99, 'us', { limit: 65536 }), '66 ms', 'max at the bottom of its bucket: one value');
    assert.equal(percentileText(entry, 50, 'us', { ascii: true }), '33-66 ms');
    assert.equal(percentileText({ kind: 'linear', buckets: [{ lo: 1000n, hi: 1001n, count: 1n }] }, 50, 'us'), '1 ms', 'narrower than the digits shown');
    assert.equal(percentileText({ kind: 'log2', buckets: [{ lo: 100n, hi: null, count: 1n }] }, 50, 'us'), '\u2265 100 \u00b5s');
    assert.equal(percentileText(null, 50, 'us'), '-');
  });

  it('gc and loop print it so', function () {
    const { parseGc, renderGcText } = require('../lib/gc/report');
    const gc = parseGc('@pause_us[scavenge]:\n[16K, 32K)   3 |@@@@@|\n[32K, 64K)   1 |@|\n@pause_max_us[scavenge]: 40000\n', { tracer: 'bpftrace' });
    assert.match(renderGcText(gc, { pid: 1 }),
      /count 4, p50 16\u201333 ms, p90 33\u201340 ms, p99 33\u201340 ms, max 40 ms/);
  });
});

// gc's text report where one Worker did all the collecting (the trace's
// JSON, its thread by its identity, is test/gc.test.js's).
describe('gc: the pauses of one Worker only, said as its own', function () {
  it('names the Worker, its thread id and TID, and says the main thread did not pause', function () {
    const { parseGc, renderGcText } = require('../lib/gc/report');
    const text = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-gc-worker.out'), 'utf8');
    const gc = parseGc(text, { tracer: 'bpftrace' });
    const identityOf = (tid) => (tid === 27866 ? { role: 'worker', worker: { threadId: 1, name: 'churn' } } : undefined);
    assert.match(renderGcText(gc, { pid: 27848, identityOf }),
      /^All of them in Worker 1 "churn" \(TID 27866\), which collects its own heap: the main thread did not pause\.$/m);
  });
});

describe('units', function () {
  it('shows each bucket in the unit that keeps its numbers small', function () {
    assert.equal(units.formatRange(4096n, 8192n, 'ns'), '4.1\u20138.2 \u00b5s');
    assert.equal(units.formatRange(1024n, 2048n, 'us'), '1\u20132 ms');
    assert.equal(units.formatRange(2147483648n, 4294967296n, 'ns'), '2.1\u20134.3 s');
    assert.equal(units.formatRange(512n, 1024n, 'ns'), '512\u20131024 ns');
    assert.equal(units.formatRange(null, 0n, 'us'), '< 0 ns');
    assert.equal(units.formatRange(100n, null, 'ms'), '\u2265 100 ms');
  });

  it('has an ASCII form for terminals without UTF-8', function () {
    assert.equal(units.formatRange(4096n, 8192n, 'ns', { ascii: true }), '4.1-8.2 us');
    assert.equal(units.formatRange(100n, null, 'ms', { ascii: true }), '>= 100 ms');
  });

  it('formats single values, and unitless values the way bpftrace does', function () {
    assert.equal(units.formatDuration(7630.3, 'ns'), '7.6 \u00b5s');
    assert.equal(units.formatDuration(3099, 'us'), '3.1 ms');
    assert.equal(units.formatDuration(null, 'us'), '-');
    assert.equal(units.formatPlain(16384), '16K');
    assert.equal(units.formatRange(8192n, 16384n, null), '8K\u201316K');
  });
});

describe('model helpers', function () {
  const article = load(ARTICLE).aggregations[0];
  const run = article.entries.find((e) => e.key[0] === RUN_ARTICLE);

  it('percentile interpolates inside the bucket holding the rank', function () {
    // 151669 values; rank 75834.5 falls in [4096, 8192) holding the first 87884
    assert.ok(Math.abs(model.percentile(run, 50) - (4096 + (75834.5 / 87884) * 4096)) < 1e-6);
    // rank 136502.1: 116054 below [32768, 65536), which holds 32160
    assert.ok(Math.abs(model.percentile(run, 90) - (32768 + ((136502.1 - 116054) / 32160) * 32768)) < 1e-3);
    assert.equal(model.percentile(run, 100), 131072);
  });

  it('percentile capped by the exact max comes close to the true percentiles', function () {
    // bpftrace-latency-one-kind.out was fed total_us = 40 + 3i for i in 0..39, max 157
    const [total] = load('bpftrace-latency-one-kind.out').aggregations.find((a) => a.name === 'total_us').entries;
    const values = Array.from({ length: 40 }, (_, i) => 40 + 3 * i);
    const exact = (p) => values[Math.ceil((p / 100) * values.length) - 1];
    for (const p of [50, 90, 99]) {
      const estimate = model.percentile(total, p, 157);
      assert.ok(Math.abs(estimate - exact(p)) / exact(p) < 0.03, `p${p}: ${estimate} vs ${exact(p)}`);
    }
    // without the cap the [128, 256) bucket puts p99 far above the real max
    assert.ok(model.percentile(total, 99) > 250);
  });

  it('percentile answers an open bucket with its finite bound, and null without data', function () {
    const lhist = load('bpftrace-lhist.out').aggregations[0].entries[0];
    assert.equal(model.percentile(lhist, 99), 100); // in [100, ...)
    assert.equal(model.percentile(lhist, 1), 0); // in (..., 0)
    const allZero = parse(read(path.join(UTILS, 'unittest_aggs_tst.negquant.r'))).aggregations[0].entries[1];
    assert.deepEqual(allZero.key, ['j-church']);
    assert.equal(model.percentile(allZero, 50), null);
    const negative = parse(read(path.join(UTILS, 'unittest_aggs_tst.negquant.r'))).aggregations[0].entries[2];
    assert.equal(model.percentile(negative, 50), null, 'negative weights have no percentiles');
  });

  it('trimEmptyBuckets keeps one empty bucket each side, which DTrace already does', function () {
    const trimmed = model.trimEmptyBuckets({
      key: [],
      kind: 'log2',
      buckets: [0n, 0n, 5n, 0n, 7n, 0n, 0n]
        .map((count, i) => ({ lo: BigInt(2 ** i), hi: BigInt(2 ** (i + 1)), count })),
    });
    assert.deepEqual(trimmed.buckets.map((b) => [b.lo, b.count]), [
      [2n, 0n],
      [4n, 5n],
      [8n, 0n],
      [16n, 7n],
      [32n, 0n],
    ]);
    for (const file of fs.readdirSync(UTILS).filter((f) => f.endsWith('.r'))) {
      for (const entry of parse(read(path.join(UTILS, file))).aggregations.flatMap((a) => a.entries)) {
        if (entry.buckets) assert.deepEqual(model.trimEmptyBuckets(entry), entry, file);
      }
    }
  });

  it('displayKey splits module`function, offsets and unresolved addresses', function () {
    assert.deepEqual(model.displayKey('node_sqlite3.node`node_sqlite3::Database::Work_BeginExec(node_sqlite3::Database::Baton*)'), {
      module: 'node_sqlite3.node',
      func: 'node_sqlite3::Database::Work_BeginExec(node_sqlite3::Database::Baton*)',
      offset: null,
      raw: 'node_sqlite3.node`node_sqlite3::Database::Work_BeginExec(node_sqlite3::Database::Baton*)',
      unresolved: false,
    });
    assert.equal(model.displayKey('0x0').unresolved, true);
    assert.equal(model.displayKey('0x7f12abcd').unresolved, true);
    const offset = model.displayKey(`node_sqlite3.node\`${CLOSE_MANGLED}+0x1a`);
    assert.deepEqual([offset.module, offset.func, offset.offset], ['node_sqlite3.node', CLOSE_MANGLED, '+0x1a']);
    assert.equal(model.displayKey('operator+(A, B)').func, 'operator+(A, B)');
  });

  it('splitKeyList keeps C++ signatures whole', function () {
    assert.deepEqual(model.splitKeyList('f(int, char*), node', ', '), ['f(int, char*)', 'node']);
    assert.deepEqual(model.splitKeyList('std::map<int, int>::find,7', ','), ['std::map<int, int>::find', '7']);
    assert.deepEqual(model.splitKeyList('operator<(a, b), x', ', '), ['operator<(a, b)', 'x']);
  });

  it('mergeEntriesByName adds stats and scalars of the same key', function () {
    const scalars = load('bpftrace-scalars.out');
    const doubled = { name: 'st', unit: null, entries: [...scalars.aggregations.find((a) => a.name === 'st').entries, ...scalars.aggregations.find((a) => a.name === 'st').entries] };
    assert.deepEqual(model.mergeEntriesByName(doubled).entries[0].stats, { count: 4n, average: 15n, total: 62n });
    const x = scalars.aggregations.find((a) => a.name === 'x');
    assert.equal(model.mergeEntriesByName({ ...x, entries: [...x.entries, x.entries[0]] }).entries[0].value, 2n);
  });

  it('mangledNames lists names for c++filt, applyDemangled puts the answers back', function () {
    const convention = load('bpftrace-latency-convention.out');
    assert.deepEqual(model.mangledNames(convention), [CLOSE_MANGLED]);
    const demangled = model.applyDemangled(convention, new Map([[CLOSE_MANGLED, CLOSE_DEMANGLED]]));
    assert.deepEqual(model.mangledNames(demangled), []);
    assert.deepEqual(
      demangled.aggregations.find((a) => a.name === 'total_us').entries.slice(-2).map((e) => e.key[0]),
      [CLOSE_DEMANGLED, 'node_sqlite3::Statement::Work_BeginRun(Baton*)']
    );
    // the original is untouched and a module prefix or offset survives
    assert.deepEqual(model.mangledNames(convention), [CLOSE_MANGLED]);
    const prefixed = { tracer: 'dtrace', aggregations: [{ name: null, unit: null, entries: [{ key: [`m.node\`${CLOSE_MANGLED}+0x1a`], kind: 'scalar', value: 1n }] }] };
    assert.deepEqual(model.applyDemangled(prefixed, { [CLOSE_MANGLED]: CLOSE_DEMANGLED }).aggregations[0].entries[0].key, [`m.node\`${CLOSE_DEMANGLED}+0x1a`]);
  });
});

describe('renderReport: the article capture (DTrace, no latency names)', function () {
  const text = read(ARTICLE);
  const report = renderReport(parse(text));

  it('heads each histogram with the function and its module', function () {
    assert.deepEqual(block(report, 'node_sqlite3::Statement::Work_BeginRun(node_sqlite3::Statement::Baton*)  [node_sqlite3.node]').slice(1, 4), [
      '       value  ------------- Distribution ------------- count',
      '    2\u20134.1 \u00b5s |                                         0',
      '  4.1\u20138.2 \u00b5s |@@@@@@@@@@@@@@@@@@@@@@@                  87884',
    ]);
  });

  it('draws the same bars DTrace drew, row for row', function () {
    const barsOf = (rows) => rows.map((row) => (row.split('|')[1].match(/@/g) || []).length);
    const dtraceBlocks = text.split('\n\n').filter((b) => b.includes('Distribution'));
    assert.equal(dtraceBlocks.length, 5);
    for (const dtraceBlock of dtraceBlocks) {
      const [keyLine, , ...rows] = dtraceBlock.trim().split('\n');
      const func = keyLine.trim().split('`')[1];
      const ours = block(report, `${func}  [node_sqlite3.node]`).slice(2, 2 + rows.length);
      assert.deepEqual(barsOf(ours), barsOf(rows), func);
      assert.deepEqual(ours.map((l) => l.trim().split(/\s+/).pop()), rows.map((l) => l.trim().split(/\s+/).pop()),
        func);
    }
  });

  it('prints count and p50/p90/p99 in human units under each histogram', function () {
    const lines = block(report, 'node_sqlite3::Statement::Work_BeginRun(node_sqlite3::Statement::Baton*)  [node_sqlite3.node]');
    // Each percentile as the bucket that holds it: what DTrace's quantize() says of it.
    assert.equal(lines[lines.length - 1], '  count 151669, p50 4.1\u20138.2 \u00b5s, p90 33\u201366 \u00b5s, p99 66\u2013131 \u00b5s');
    assert.doesNotMatch(report, /queue wait/, 'no breakdown without latency names');
  });

  it('sorts by estimated total time, by count or by name', function () {
    const headings = (r) => r.split('\n').filter((l) => l.endsWith('[node_sqlite3.node]')).map((l) => /::(Work_\w+)\(/.exec(l)[1]);
    assert.deepEqual(headings(report), ['Work_BeginRun', 'Work_BeginPrepare', 'Work_BeginOpen', 'Work_BeginExec', 'Work_BeginClose']);
    assert.deepEqual(headings(renderReport(parse(text), { sort: 'count' })).slice(0, 2), ['Work_BeginRun', 'Work_BeginPrepare']);
    assert.deepEqual(headings(renderReport(parse(text), { sort: 'name' })), ['Work_BeginClose', 'Work_BeginExec', 'Work_BeginOpen', 'Work_BeginPrepare', 'Work_BeginRun']);
  });

  it('takes another unit for unnamed aggregations, and an ASCII mode', function () {
    const asUs = renderReport(parse(text), { unit: 'us', ascii: true });
    assert.match(asUs, / {2}4\.1-8\.2 ms \|@{23} +87884\n/);
    assert.doesNotMatch(asUs, /[\u00b5\u2013\u2265]/);
  });
});

describe('renderReport: the latency convention (nodetrace latency, bpftrace)', function () {
  const latency = load('bpftrace-addon-latency-sqlite3.out');
  const report = renderReport(latency);
  const RUN = 'node_sqlite3::Statement::Work_BeginRun(node_sqlite3::Statement::Baton*)';

  it('shows total_us as the histogram, with max from max_us and one line per phase', function () {
    const lines = block(report, RUN);
    assert.equal(lines[1], '        value  ------------- Distribution ------------- count');
    assert.equal(lines[2], '     32\u201364 \u00b5s |@@@@@@                                   3104');
    assert.match(lines[lines.length - 4],
      /^ {2}count 20257, p50 64–128 µs, p90 64–128 µs, p99 128–256 µs, max 3\.1 ms$/);
    assert.match(lines[lines.length - 3],
      /^ {4}queue wait {2}p50 32–64 µs {2}p90 32–64 µs {2}p99 64–128 µs {2}\d+% of time$/);
    assert.deepEqual(lines.slice(-3).map((l) => l.trim().split(/\s+/)[0]), ['queue', 'run', 'loop']);
    const shares = lines.slice(-3).map((l) => Number(/(\d+)% of time$/.exec(l)[1]));
    assert.ok(Math.abs(shares.reduce((a, b) => a + b, 0) - 100) <= 2, `shares ${shares} should add up to about 100%`);
  });

  it('shows every kind once, napi_queue_async_work included, and the legend once at the end', function () {
    for (const kind of ['Work_BeginRun', 'Work_BeginPrepare', 'Work_BeginOpen', 'Work_BeginExec', 'Work_BeginClose']) {
      assert.equal(report.split('\n').filter((l) => l.startsWith('node_sqlite3::') && l.includes(kind)).length, 1, kind);
    }
    assert.ok(report.includes('\nnapi_queue_async_work\n'));
    assert.equal(report.match(/queue wait = waiting for a thread-pool thread/g).length, 1);
    assert.ok(report.trimEnd().endsWith('loop wait = waiting for the event loop to run the completion callback'));
    assert.doesNotMatch(report, /@max_us|@queue_wait_us/, 'the phase maps are folded into their kind');
  });

  it('draws each phase as its own histogram with breakdownHistograms', function () {
    const detailed = renderReport(latency, { breakdownHistograms: true });
    const lines = block(detailed, RUN);
    const queue = lines.findIndex((l) => /^ {2}queue wait \(\d+% of time\):$/.test(l));
    assert.ok(queue > 0, lines.join('\n'));
    assert.equal(lines[queue + 1].trim(), 'value  ------------- Distribution ------------- count');
    assert.ok(lines.some((l) => /^ {2}run \(\d+% of time\):$/.test(l)));
    assert.ok(lines.some((l) => /^ {2}loop wait \(\d+% of time\):$/.test(l)));
  });

  it('shows at most maxUnresolved addresses, lumping the rest', function () {
    const convention = load('bpftrace-latency-convention.out');
    const three = renderReport(convention);
    assert.equal(three.split('\n').filter((l) => /^0x[0-9a-f]+$/.test(l)).length, 3);
    // 0x7f12abcd (900 us, max 900) and 0x5581ad40 (500 us, max 500) are lumped, phases and all
    const lump = block(three, '(2 unresolved addresses)');
    // The top bucket capped by the exact max: 512-900 us, not 512-1024.
    assert.equal(lump[lump.length - 4], '  count 2, p50 256\u2013512 \u00b5s, p90 512\u2013900 \u00b5s, p99 512\u2013900 \u00b5s, max 900 \u00b5s');
    assert.match(lump[lump.length - 3],
      /^ {4}queue wait {2}p50 256–512 µs {2}p90 512–1024 µs {2}p99 512–1024 µs {2}83% of time$/);
    assert.match(lump[lump.length - 2], /^ {4}run {9}p50 128–256 µs/);
    const none = renderReport(convention, { maxUnresolved: 0 });
    assert.doesNotMatch(none, /^0x/m);
    // three of the five have no max_us: the lump has no max either
    assert.match(block(none, '(5 unresolved addresses)')[4], /^ {2}count 5, p50 [^,]+, p90 [^,]+, p99 [^,]+$/);
    const linux = renderReport(load(LINUX_DTRACE), { maxUnresolved: 0 });
    assert.ok(linux.includes('\n(1 unresolved address)\n'));
  });

  it('sorts by sum_<unit> when the program kept one, and caps percentiles by a max in another unit', function () {
    // kind_a: 10 x 128 us (bucket [128, 256)); kind_b: 15 x 127 us ([64, 128)).
    // Bucket midpoints say kind_a took longer (10 x 192 > 15 x 96); the sums say kind_b (1905 > 1280).
    const withSum = load('bpftrace-latency-sum.out');
    const headings = (m) => renderReport(m).split('\n').filter((l) => /^kind_/.test(l));
    assert.deepEqual(headings(withSum), ['kind_b', 'kind_a']);
    const withoutSum = { ...withSum, aggregations: withSum.aggregations.filter((a) => a.name !== 'sum_us') };
    assert.deepEqual(headings(withoutSum), ['kind_a', 'kind_b']);
    // max_ns 128000 is 128 us: every kind_a value sits at the bottom of its bucket
    const json = toJSON(withSum);
    assert.deepEqual(json.kinds.map((k) => [k.name, k.unit, k.p50, k.max]), [
      ['kind_b', 'us', 95.5, 127],
      ['kind_a', 'us', 128, 128],
    ]);
    assert.match(renderReport(withSum), /p99 128 µs, max 128 µs\n/);
  });

  it('shows demangled names once the CLI applied them', function () {
    const convention = load('bpftrace-latency-convention.out');
    const report2 = renderReport(model.applyDemangled(convention, { [CLOSE_MANGLED]: CLOSE_DEMANGLED }));
    assert.doesNotMatch(report2, /_ZN/);
    const lines = block(report2, CLOSE_DEMANGLED);
    assert.match(lines[lines.length - 4], /max 7\.9 ms$/);
  });
});

describe('renderReport: other aggregations', function () {
  it('tables scalars and stats under their map name', function () {
    const report = renderReport(load('bpftrace-scalars.out'));
    assert.deepEqual(block(report, '@x'), ['@x', '  1, init         1', '  4466, bpftrace  1']);
    assert.ok(report.includes('\n  @st  count 2, average 15, total 31\n'));
    assert.ok(report.includes('\n  @big  9007199254740993\n'));
  });

  it('notes the 4G fold under a bpftrace histogram', function () {
    const report = renderReport(load('bpftrace-hist.out'));
    const lines = block(report, '@only_big_ns');
    assert.deepEqual(lines.slice(2), [
      '  2.1\u20134.3 s |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1',
      '  count 1, p50 2.1\u20134.3 s, p90 2.1\u20134.3 s, p99 2.1\u20134.3 s',
      '  note: bpftrace<0.20 folds values >= 4G into [2G,4G)',
    ]);
  });

  it('merges a usym() name printed twice before drawing it', function () {
    const report = renderReport(parse(read(path.join(__dirname, 'fixtures', 'shared', 'bpftrace', 'sqlite3-uv-queue-work-by-caller.out'))));
    assert.equal(report.split('\n').filter((l) => l === 'napi_queue_async_work').length, 1);
    assert.ok(report.includes('\n  count 142967, p50 16K\u201332K, p90 64K\u2013128K, p99 128K\u2013256K\n'));
  });
});

describe('toJSON', function () {
  it('describes each kind of nodetrace latency with its breakdown (from the -f json capture)', function () {
    const json = toJSON(load('bpftrace-addon-latency-sqlite3.json'));
    assert.deepEqual([json.version, json.tracer, json.unit, json.kinds.length, json.other], [1, 'bpftrace', 'us', 6, []]);
    const [run] = json.kinds;
    assert.equal(run.name, 'node_sqlite3::Statement::Work_BeginRun(node_sqlite3::Statement::Baton*)');
    assert.deepEqual([run.module, run.aggregation, run.count, run.unit, run.max], [null, 'total_us', 17256, 'us', 2721]);
    assert.equal(run.histogram.reduce((sum, b) => sum + b.count, 0), run.count);
    assert.deepEqual(run.histogram[1], { lo: 64, hi: 128, count: 15715 });
    assert.deepEqual(Object.keys(run.breakdown), ['queue_wait', 'run', 'loop_wait']);
    assert.ok(run.p50 < run.p90 && run.p90 < run.p99);
    assert.deepEqual(JSON.parse(JSON.stringify(json)), json, 'nothing JSON cannot carry (BigInt, undefined)');
  });

  it('makes every distribution a kind when there are no latency names (DTrace article)', function () {
    const json = toJSON(load(ARTICLE));
    assert.deepEqual([json.tracer, json.unit, json.kinds.length], ['dtrace', 'ns', 5]);
    assert.deepEqual(
      json.kinds.map((k) => [k.module, k.breakdown, k.max]),
      Array(5).fill(['node_sqlite3.node', null, null])
    );
    assert.equal(json.kinds[0].count, 151669);
    assert.equal(json.kinds[0].p50, Math.round((4096 + (75834.5 / 87884) * 4096) * 1000) / 1000);
  });

  it('writes integers beyond 2^53 as strings and keeps open bounds as null', function () {
    const scalars = toJSON(load('bpftrace-scalars.out'));
    assert.equal(scalars.kinds.length, 0);
    assert.deepEqual(scalars.other.find((a) => a.name === 'big').entries, [{ key: [], kind: 'scalar', value: '9007199254740993' }]);
    const negquant = toJSON(parse(read(path.join(UTILS, 'unittest_aggs_tst.negquant.r'))));
    const oceanview = negquant.kinds.find((k) => k.name === 'm-oceanview');
    assert.deepEqual(oceanview.histogram[1], { lo: 1, hi: 2, count: '-9223372036854775808' });
    assert.equal(oceanview.p50, null);
    const lhist = toJSON(load('bpftrace-lhist.out'));
    assert.deepEqual(lhist.kinds[0].histogram.slice(-1)[0], { lo: 100, hi: null, count: 2 });
  });

  it('matches the example in docs/json-format.md, generated from a real capture', function () {
    const doc = fs.readFileSync(path.join(__dirname, '..', 'docs', 'json-format.md'), 'utf8');
    const example = /```json\n([\s\S]*?)\n```/.exec(doc);
    assert.ok(example, 'docs/json-format.md has a json example');
    assert.deepEqual(JSON.parse(example[1]), toJSON(load('bpftrace-latency-one-kind.out')));
  });
});
