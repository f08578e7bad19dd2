'use strict';
// The DTrace parser against real DTrace output: the article's capture
// (illumos), a DTrace for Linux capture, and DTrace for Linux's own expected
// test outputs (test/fixtures/shared/dtrace/dtrace-utils-tests/*.r).

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { parseDtrace } = require('../lib/aggregation/parse-dtrace');
const { parse } = require('../lib/aggregation/parse');
const { totalCount } = require('../lib/aggregation/model');

const SHARED = path.join(__dirname, 'fixtures', 'shared', 'dtrace');
const UTILS = path.join(SHARED, 'dtrace-utils-tests');

function load(file) {
  return parseDtrace(fs.readFileSync(path.join(SHARED, file), 'utf8'));
}

function loadUtils(name) {
  return parseDtrace(fs.readFileSync(path.join(UTILS, `${name}.r`), 'utf8'));
}

// [lo, hi, count] triples, easier to read in assertions than bucket objects
function triples(entry) {
  return entry.buckets.map((b) => [b.lo, b.hi, b.count]);
}

function entryByKey(aggregation, key) {
  const entry = aggregation.entries.find((e) => e.key.join('|') === key);
  assert.ok(entry, `no entry with key ${key}`);
  return entry;
}

describe('parseDtrace: the article capture (illumos quantize, ns)', function () {
  const model = load('addon-latency-sqlite3.out');

  it('reads one unnamed aggregation of five add-on functions, in printed order', function () {
    assert.equal(model.tracer, 'dtrace');
    assert.equal(model.aggregations.length, 1);
    const [aggregation] = model.aggregations;
    assert.equal(aggregation.name, null);
    assert.equal(aggregation.unit, null);
    assert.deepEqual(
      aggregation.entries.map((e) => /::(Work_\w+)\(/.exec(e.key[0])[1]),
      ['Work_BeginClose', 'Work_BeginExec', 'Work_BeginOpen', 'Work_BeginPrepare', 'Work_BeginRun']
    );
  });

  it('keeps the module`function key whole and reads quantize rows as [N, 2N) buckets', function () {
    const entry = entryByKey(
      model.aggregations[0],
      'node_sqlite3.node`node_sqlite3::Database::Work_BeginExec(node_sqlite3::Database::Baton*)'
    );
    assert.equal(entry.kind, 'log2');
    assert.deepEqual(triples(entry), [
      [2048n, 4096n, 0n],
      [4096n, 8192n, 6018n],
      [8192n, 16384n, 1590n],
      [16384n, 32768n, 302n],
      [32768n, 65536n, 5722n],
      [65536n, 131072n, 156n],
      [131072n, 262144n, 0n],
    ]);
  });

  it('counts every operation of Work_BeginRun', function () {
    const entry = model.aggregations[0].entries[4];
    assert.equal(totalCount(entry), 87884n + 19478n + 8692n + 32160n + 3455n);
  });
});

describe('parseDtrace: DTrace for Linux capture', function () {
  const model = load('linux-dtrace-uv-queue-work-sqlite3.out');

  it('trims the key padding and keeps the unresolved 0x0 key', function () {
    assert.equal(model.aggregations.length, 1);
    assert.deepEqual(model.aggregations[0].entries.map((e) => e.key), [['0x0'], ['node`napi_queue_async_work']]);
  });

  it('reads counts despite trailing spaces, up to the closing empty row', function () {
    const entry = model.aggregations[0].entries[1];
    assert.equal(entry.buckets.length, 12);
    assert.deepEqual(triples(entry)[1], [8192n, 16384n, 930n]);
    assert.deepEqual(triples(entry)[10], [4194304n, 8388608n, 1n]);
    assert.deepEqual(triples(entry)[11], [8388608n, 16777216n, 0n]);
    assert.equal(totalCount(entry), 81459n);
  });
});

describe('parseDtrace: dtrace-utils expected outputs', function () {
  const files = fs.readdirSync(UTILS).filter((f) => f.endsWith('.r'));

  it('parses every file without throwing and finds aggregation output in each', function () {
    assert.ok(files.length >= 40, `expected the whole suite, found ${files.length} files`);
    for (const file of files) {
      const model = parseDtrace(fs.readFileSync(path.join(UTILS, file), 'utf8'));
      const entries = model.aggregations.flatMap((a) => a.entries);
      assert.ok(entries.length > 0, `${file}: no entries`);
      for (const entry of entries) {
        assert.ok(['log2', 'linear', 'loglinear', 'scalar'].includes(entry.kind), `${file}: kind ${entry.kind}`);
        if (entry.buckets) assert.ok(entry.buckets.length > 0, `${file}: empty distribution`);
      }
    }
  });

  it('quantize: negative weights and counts at both ends of the 64-bit range stay exact', function () {
    const [aggregation] = loadUtils('unittest_aggs_tst.negquant').aggregations;
    const oceanview = entryByKey(aggregation, 'm-oceanview');
    assert.equal(oceanview.kind, 'log2');
    assert.deepEqual(triples(oceanview), [
      [0n, 1n, 0n],
      [1n, 2n, -9223372036854775808n],
      [2n, 4n, 9223372036854775807n],
      [4n, 8n, 0n],
      [8n, 16n, 400000n],
      [16n, 32n, 0n],
    ]);
    // bars drawn left of the '|' axis: negative counts on negative values
    assert.deepEqual(triples(entryByKey(aggregation, 'l-taraval')), [
      [-2n, -1n, 0n],
      [-1n, 0n, -123n],
      [0n, 1n, -123n],
      [1n, 2n, 246n],
      [2n, 4n, 0n],
    ]);
    // every bar left of the axis
    assert.deepEqual(triples(entryByKey(aggregation, 'k-ingleside')), [
      [0n, 1n, 0n],
      [1n, 2n, -123n],
      [2n, 4n, 0n],
    ]);
  });

  it('quantize: the whole signed range, -2^62 up to the top bucket [2^62, 2^63)', function () {
    const [entry] = loadUtils('unittest_aggs_tst.allquant').aggregations[0].entries;
    assert.equal(entry.kind, 'log2');
    assert.deepEqual(triples(entry)[0], [-4611686018427387904n, -2305843009213693952n, 5n]);
    assert.deepEqual(triples(entry).slice(-1)[0], [4611686018427387904n, 9223372036854775808n, 3n]);
    const [last] = loadUtils('unittest_aggs_tst.quantlast').aggregations[0].entries;
    assert.deepEqual(triples(last), [
      [2305843009213693952n, 4611686018427387904n, 0n],
      [4611686018427387904n, 9223372036854775808n, 1234n],
    ]);
  });

  it('lquantize: "< 0" and ">= 40" are open buckets', function () {
    const [aggregation] = loadUtils('demo_intro_countdown-multiple').aggregations;
    const linear = entryByKey(aggregation, 'linear quantized firings');
    assert.equal(linear.kind, 'linear');
    assert.equal(linear.buckets.length, 42);
    assert.deepEqual(triples(linear)[0], [null, 0n, 0n]);
    assert.deepEqual(triples(linear)[1], [0n, 1n, 1n]);
    assert.deepEqual(triples(linear)[41], [40n, null, 0n]);
    const log2 = entryByKey(aggregation, 'quantized firings');
    assert.equal(log2.kind, 'log2');
    assert.deepEqual(triples(log2).slice(0, 3), [
      [-1n, 0n, 0n],
      [0n, 1n, 1n],
      [1n, 2n, 1n],
    ]);
  });

  it('lquantize: data only outside the range, with a negative weight', function () {
    const [aggregation] = loadUtils('unittest_aggs_tst.lquantrange').aggregations;
    assert.deepEqual(triples(entryByKey(aggregation, 'Hoover')), [
      [9n, 10n, 0n],
      [10n, null, -100n],
    ]);
    // one finite row: its step, hence its upper bound, is not in the text
    assert.deepEqual(triples(entryByKey(aggregation, 'Nixon')), [
      [null, -10n, 25n],
      [-10n, null, 0n],
    ]);
    assert.deepEqual(triples(entryByKey(aggregation, 'Harding')), [
      [null, -10n, 0n],
      [-10n, -9n, 15n],
      [-9n, -8n, 0n],
    ]);
  });

  it('llquantize: rows 0..9, then steps of 5, 50 and 500 per magnitude', function () {
    const [entry] = loadUtils('unittest_aggs_tst.llquantize').aggregations[0].entries;
    assert.equal(entry.kind, 'loglinear');
    const byLo = new Map(entry.buckets.map((b) => [b.lo, b]));
    assert.deepEqual([byLo.get(-1n).hi, byLo.get(-1n).count], [0n, 0n]);
    assert.deepEqual([byLo.get(9n).hi, byLo.get(9n).count], [10n, 1n]);
    assert.deepEqual([byLo.get(10n).hi, byLo.get(10n).count], [15n, 5n]);
    assert.deepEqual([byLo.get(100n).hi, byLo.get(100n).count], [150n, 50n]);
    assert.deepEqual([byLo.get(1000n).hi, byLo.get(1000n).count], [1500n, 500n]);
    // DTrace's closing empty row: the text does not say where it ends
    assert.deepEqual(triples(entry).slice(-1)[0], [1500n, null, 0n]);
    assert.equal(totalCount(entry), 10n + 18n * 5n + 18n * 50n + 500n);
  });

  it('llquantize with negatives: "<= -16" and ">= 16" are open, "abs() < 27" is the band around zero', function () {
    const basicA = loadUtils('unittest_aggs_tst.llquantize_basic').aggregations[0].entries[0];
    assert.equal(basicA.kind, 'loglinear');
    assert.deepEqual(triples(basicA)[0], [null, -8n, 164n]);
    assert.deepEqual(triples(basicA).slice(-1)[0], [16n, null, 236n]);
    const [step] = loadUtils('unittest_aggs_tst.llquantstep').aggregations[0].entries;
    assert.deepEqual(triples(step).slice(0, 3), [
      [-27n, -26n, 0n],
      [-26n, 27n, 27n],
      [27n, 30n, 3n],
    ]);
    assert.deepEqual(triples(step).slice(-1)[0], [729n, null, 771n]);
  });

  it('llquantize: counts of -1 drawn left of the axis', function () {
    const [entry] = loadUtils('unittest_aggs_tst.llquantneg').aggregations[0].entries;
    assert.deepEqual(
      entry.buckets.slice(0, 4).map((b) => b.count),
      [0n, 1n, -1n, 1n]
    );
    assert.equal(totalCount(entry), 0n);
  });

  it('printa("@x = %@d"): names each aggregation, scalar or histogram', function () {
    const model = loadUtils('unittest_printa_tst.basics');
    assert.deepEqual(
      model.aggregations.map((a) => a.name),
      ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']
    );
    assert.deepEqual(model.aggregations[0].entries, [{ key: [], kind: 'scalar', value: 1n }]);
    assert.deepEqual(triples(model.aggregations[2].entries[0]), [
      [null, 1n, 0n],
      [1n, 2n, 1n],
      [2n, 3n, 0n],
    ]);
    assert.deepEqual(triples(model.aggregations[7].entries[0]), [
      [100n, 200n, 0n],
      [200n, 400n, 8n],
      [400n, null, 0n],
    ]);
    assert.equal(model.aggregations[8].entries[0].value, 5n);
  });

  it('printa("@name[%A] = %@d\\n"): a keyed, named form a D script can use to name its maps', function () {
    // The same layout as unittest_printa_tst.basics.r, with a key: what a D
    // script printing nodetrace's latency maps by name would produce.
    const article = fs.readFileSync(path.join(SHARED, 'addon-latency-sqlite3.out'), 'utf8');
    const named = article.replace(/\n {2}(node_sqlite3\.node`[^\n]*)\n/g, (m, key) => `\n@total_ns[${key}] = \n`);
    const model = parseDtrace(named + '@max_ns[node_sqlite3.node`f(int, char*)] = 130000\n');
    assert.deepEqual(model.aggregations.map((a) => [a.name, a.unit, a.entries.length]), [
      ['total_ns', 'ns', 5],
      ['max_ns', 'ns', 1],
    ]);
    assert.deepEqual(model.aggregations[0].entries[1].key, ['node_sqlite3.node`node_sqlite3::Database::Work_BeginExec(node_sqlite3::Database::Baton*)']);
    assert.deepEqual(triples(model.aggregations[0].entries[1]), triples(load('addon-latency-sqlite3.out').aggregations[0].entries[1]));
    assert.deepEqual(model.aggregations[1].entries, [{ key: ['node_sqlite3.node`f(int, char*)'], kind: 'scalar', value: 130000n }]);
  });

  it('a "@name" line before printa(@name) names the aggregation that follows (d-scripts/addon-latency.d)', function () {
    // addon-latency.d ends with printf("\n@total_ns\n"); printa(@total_ns); ... printf("\n@max_ns\n"); printa(@max_ns);
    const article = fs.readFileSync(path.join(SHARED, 'addon-latency-sqlite3.out'), 'utf8');
    const linux = fs.readFileSync(path.join(SHARED, 'linux-dtrace-uv-queue-work-sqlite3.out'), 'utf8');
    const text = `\n@total_ns\n${article}\n@queue_wait_ns\n${linux}\n@max_ns\n\n  node\`napi_queue_async_work                              4194305\n`;
    const model = parse(text);
    assert.equal(model.tracer, 'dtrace');
    assert.deepEqual(model.aggregations.map((a) => [a.name, a.unit, a.entries.map((e) => e.key[0].split('`')[0])]), [
      ['total_ns', 'ns', Array(5).fill('node_sqlite3.node')],
      ['queue_wait_ns', 'ns', ['0x0', 'node']],
      ['max_ns', 'ns', ['node']],
    ]);
    assert.equal(model.aggregations[2].entries[0].value, 4194305n);
  });

  it('plain scalar aggregations: one blank-separated aggregation each, then the histogram', function () {
    const model = loadUtils('unittest_aggs_tst.reset');
    const firstFive = model.aggregations.slice(0, 5);
    assert.deepEqual(
      firstFive.slice(0, 4).map((a) => a.entries.map((e) => [e.key, e.value])),
      [[[[], 150n]], [[[], 14n]], [[[], 5n]], [[[], 30n]]]
    );
    assert.deepEqual(triples(firstFive[4].entries[0])[1], [8n, 16n, 1n]);
    assert.equal(model.aggregations.length, 25);
  });

  it('unkeyed scalars printed back to back are separate aggregations', function () {
    const model = loadUtils('unittest_aggs_tst.multiaggs2');
    assert.deepEqual(
      model.aggregations.map((a) => (a.entries[0].kind === 'scalar' ? a.entries[0].value : a.entries[0].kind)),
      [450n, 4500n, 0n, 900n, 'log2', 'linear']
    );
  });

  it('keyed scalar rows: key fields, then the value (negative sums included)', function () {
    const model = loadUtils('unittest_aggs_tst.negorder');
    // sections: quantize, lquantize, sum, max, min, each after a line of prose
    const sum = model.aggregations.find((a) => a.entries[0].kind === 'scalar');
    assert.deepEqual(sum.entries.slice(0, 3).map((e) => [e.key, e.value]), [
      [['2'], -12n],
      [['4'], -11n],
      [['6'], -10n],
    ]);
    assert.equal(sum.entries.length, 24);
    const many = loadUtils('unittest_multiaggs_tst.many');
    assert.deepEqual(many.aggregations[0].entries.map((e) => [e.key, e.value]), [
      [['0', '0'], 0n],
      [['1', '0'], 1n],
    ]);
  });

  it('skips probe trace lines and prose; two blank lines end an aggregation', function () {
    const model = loadUtils('demo_intro_countdown-multiple');
    const keys = model.aggregations.flatMap((a) => a.entries.map((e) => e.key.join(' ')));
    assert.deepEqual(keys, ['quantized firings', 'linear quantized firings']);
    const cleared = loadUtils('unittest_aggs_tst.clearlquantize');
    assert.equal(cleared.aggregations.length, 10);
    assert.deepEqual(
      cleared.aggregations.slice(0, 2).map((a) => [a.entries[0].key[0], a.entries[0].kind]),
      [
        ['linear', 'linear'],
        ['exp', 'log2'],
      ]
    );
  });

  it('parse() detects DTrace output and dispatches to this parser', function () {
    const text = fs.readFileSync(path.join(SHARED, 'addon-latency-sqlite3.out'), 'utf8');
    assert.deepEqual(parse(text), parseDtrace(text));
    const printa = fs.readFileSync(path.join(UTILS, 'unittest_printa_tst.basics.r'), 'utf8');
    assert.equal(parse(printa).tracer, 'dtrace');
  });
});

describe('parseDtrace: a key holding U+2028 (dtrace-u2028-keys.out, DTrace for Linux)', function () {
  it('keeps the entry, its key whole (JavaScript\'s `.` stops at U+2028: the entry was lost)', function () {
    const model = parseDtrace(fs.readFileSync(path.join(__dirname, 'fixtures', 'dtrace-u2028-keys.out'), 'utf8'));
    const [k] = model.aggregations;
    assert.deepEqual(k.entries.map((e) => [e.key, e.value]), [[['a\u2028b'], 1n], [['c'], 2n]]);
  });
});

describe('parseDtrace: keys holding whitespace other than ASCII spaces (DTrace for Linux)', function () {
  // DTrace pads key fields with ASCII spaces only; JavaScript's \s and trim()
  // take tabs, \v, \f, \r, U+00A0 and more, which a key (the target's text)
  // may hold: such a key was split into more fields, or lost its ends.
  const read = (file) => parseDtrace(fs.readFileSync(path.join(__dirname, 'fixtures', file), 'utf8'));
  const countOf = (e) => (e.value === undefined ? totalCount(e) : e.value);
  const keysOf = (aggregation) => aggregation.entries.map((e) => [e.key, countOf(e)]);

  it('keeps string keys whole: tabs, \\v, \\f, \\r inside, a tab in front (dtrace-whitespace-keys.out)', function () {
    const [k, two, h] = read('dtrace-whitespace-keys.out').aggregations;
    assert.deepEqual(keysOf(k), [
      [['\tlead'], 1n], [['c\t\td'], 1n], [['e\v\vf'], 1n], [['g\f\fh'], 1n], [['i\r\rj'], 1n], [['plain'], 2n],
    ]);
    assert.equal(k.name, 'k');
    // a key of two fields keeps its second field in its place
    assert.deepEqual(keysOf(two), [[['x\t\ty', '7'], 1n], [['z', '8'], 1n]]);
    assert.deepEqual(keysOf(h), [[['p\t\tq'], 1n], [['r'], 1n]]);
  });

  // ufunc() keys, as addon-latency.d's
  it('keeps function names whole: U+00A0 twice, two tabs, ", " (dtrace-ufunc-whitespace-keys.out)', function () {
    const [calls, lat] = read('dtrace-ufunc-whitespace-keys.out').aggregations;
    const names = [['syms`f\u00a0\u00a0g'], ['syms`k\t\tl'], ['syms`a, b'], ['syms`plain']];
    assert.deepEqual(keysOf(calls), names.map((key) => [key, 10n]));
    assert.deepEqual(keysOf(lat), names.map((key) => [key, 10n]));
  });
});
