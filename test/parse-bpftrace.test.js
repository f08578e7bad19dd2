'use strict';
// The bpftrace parsers against real bpftrace 0.17 output: the shared capture
// of uv_queue_work latency keyed by usym(), nodetrace's own latency program
// (text and -f json), and captures made for these tests with fixed values
// (test/fixtures/bpftrace-*.out; each .out.cmd holds the command).

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { parseBpftraceText, parseBpftraceJson, parseBucketLabel } = require('../lib/aggregation/parse-bpftrace');
const { parse, detectFormat } = require('../lib/aggregation/parse');
const { mergeEntriesByName, totalCount } = require('../lib/aggregation/model');

const FIXTURES = path.join(__dirname, 'fixtures');
const read = (file) => fs.readFileSync(path.isAbsolute(file) ? file : path.join(FIXTURES, file), 'utf8');
const SHARED_USYM = path.join(__dirname, 'fixtures', 'shared', 'bpftrace', 'sqlite3-uv-queue-work-by-caller.out');
const FOLD_NOTE = 'bpftrace<0.20 folds values >= 4G into [2G,4G)';

function triples(entry) {
  return entry.buckets.map((b) => [b.lo, b.hi, b.count]);
}

function byName(model) {
  return Object.fromEntries(model.aggregations.map((a) => [a.name === null ? '@' : a.name, a]));
}

describe('parseBpftraceText: hist() keyed by usym() (shared capture)', function () {
  const model = parseBpftraceText(read(SHARED_USYM));

  it('keeps both printings of @lat[napi_queue_async_work] as printed', function () {
    assert.equal(model.tracer, 'bpftrace');
    assert.equal(model.aggregations.length, 1);
    const [lat] = model.aggregations;
    assert.equal(lat.name, 'lat');
    assert.equal(lat.unit, null);
    assert.deepEqual(lat.entries.map((e) => e.key), [['napi_queue_async_work'], ['napi_queue_async_work']]);
    assert.deepEqual(triples(lat.entries[0])[0], [8192n, 16384n, 19996n]);
    assert.deepEqual(triples(lat.entries[1]).slice(-1)[0], [8388608n, 16777216n, 1n]);
  });

  it('mergeEntriesByName adds the two call sites bucket by bucket', function () {
    const merged = mergeEntriesByName(model.aggregations[0]);
    assert.equal(merged.entries.length, 1);
    const [entry] = merged.entries;
    assert.equal(entry.kind, 'log2');
    assert.deepEqual(triples(entry), [
      [8192n, 16384n, 19996n + 20249n],
      [16384n, 32768n, 31119n + 31994n],
      [32768n, 65536n, 9724n + 9818n],
      [65536n, 131072n, 3532n + 3101n],
      [131072n, 262144n, 6617n + 6453n],
      [262144n, 524288n, 108n + 181n],
      [524288n, 1048576n, 5n + 8n],
      [1048576n, 2097152n, 9n + 32n],
      [2097152n, 4194304n, 5n + 2n],
      [4194304n, 8388608n, 13n + 0n],
      [8388608n, 16777216n, 1n],
    ]);
    assert.equal(totalCount(entry), 142967n);
  });
});

describe('parseBpftraceText: hist() edge buckets (bpftrace-hist.out)', function () {
  const maps = byName(parseBpftraceText(read('bpftrace-hist.out')));

  it('reads (..., 0), [0], [1] and K/M/G suffixed bounds as powers of 1024', function () {
    const [h] = maps.h.entries;
    assert.equal(h.kind, 'log2');
    assert.equal(h.buckets.length, 34);
    assert.deepEqual(triples(h).slice(0, 4), [
      [null, 0n, 1n],
      [0n, 1n, 1n],
      [1n, 2n, 1n],
      [2n, 4n, 2n],
    ]);
    const nonEmpty = triples(h).filter(([, , count]) => count > 0n).slice(4);
    assert.deepEqual(nonEmpty, [
      [2048n, 4096n, 2n],
      [1048576n, 2097152n, 1n],
      [2147483648n, 4294967296n, 1n],
    ]);
  });

  it('flags a non-empty [2G, 4G) bucket: 5000000000 was folded into it', function () {
    assert.equal(maps.h.entries[0].note, FOLD_NOTE);
    assert.deepEqual(triples(maps.only_big_ns.entries[0]), [[2147483648n, 4294967296n, 1n]]);
    assert.equal(maps.only_big_ns.entries[0].note, FOLD_NOTE);
    assert.equal(maps.only_big_ns.unit, 'ns');
  });

  it('keeps string keys with spaces and colons whole; the _us suffix gives the unit', function () {
    assert.equal(maps.by_route_us.unit, 'us');
    assert.deepEqual(
      maps.by_route_us.entries.map((e) => [e.key, triples(e)]),
      [
        [['PUT /api: items'], [[16384n, 32768n, 1n]]],
        [['GET /api: users'], [[64n, 128n, 1n], [128n, 256n, 1n]]],
      ]
    );
    assert.equal(maps.by_route_us.entries[1].note, undefined);
  });
});

describe('parseBpftraceText: lhist() (bpftrace-lhist.out)', function () {
  const maps = byName(parseBpftraceText(read('bpftrace-lhist.out')));

  it('reads values below min as (..., 0) and above max as [100, ...)', function () {
    const [l] = maps.l.entries;
    assert.equal(l.kind, 'linear');
    assert.deepEqual(triples(l), [
      [null, 0n, 1n],
      [0n, 10n, 1n],
      [10n, 20n, 0n],
      [20n, 30n, 0n],
      [30n, 40n, 0n],
      [40n, 50n, 0n],
      [50n, 60n, 2n],
      [60n, 70n, 0n],
      [70n, 80n, 0n],
      [80n, 90n, 0n],
      [90n, 100n, 0n],
      [100n, null, 2n],
    ]);
  });

  it('a keyed lhist() is linear for every key, even one with a single open bucket', function () {
    assert.equal(maps.wide_ms.unit, 'ms');
    assert.deepEqual(
      maps.wide_ms.entries.map((e) => [e.key, e.kind, triples(e)]),
      [
        [['2'], 'linear', [[5000n, null, 1n]]],
        [['1'], 'linear', [[1000n, 2000n, 1n], [2000n, 3000n, 0n], [3000n, 4000n, 0n], [4000n, 5000n, 1n]]],
      ]
    );
  });

  it('an lhist() entry whose only bucket looks like hist()\'s is linear like the rest of its map', function () {
    assert.deepEqual(
      maps.pow.entries.map((e) => [e.key, e.kind, triples(e)]),
      [
        [['1'], 'linear', [[64n, 128n, 1n]]],
        [['2'], 'linear', [[0n, 64n, 1n], [64n, 128n, 0n], [128n, 192n, 0n], [192n, 256n, 1n]]],
      ]
    );
  });
});

describe('parseBpftraceText: count/sum/avg/min/max/stats (bpftrace-scalars.out, stderr included)', function () {
  const model = parseBpftraceText(read('bpftrace-scalars.out'));
  const maps = byName(model);

  it('reads one scalar per map line and ignores the RLIMIT_MEMLOCK and Attaching lines', function () {
    assert.deepEqual(
      ['c', 's', 'a', 'mn', 'mx', '@'].map((name) => [name, maps[name].entries[0].value]),
      [
        ['c', 3n],
        ['s', 12n],
        ['a', 3n],
        ['mn', -2n],
        ['mx', 9n],
        ['@', 2n],
      ]
    );
    assert.equal(maps['@'].name, null);
    assert.equal(model.aggregations.length, 10);
  });

  it('keeps sums past 2^53 exact', function () {
    assert.equal(maps.big.entries[0].value, 9007199254740993n);
  });

  it('reads stats() as count, average and total', function () {
    assert.deepEqual(maps.st.entries, [{ key: [], kind: 'stats', stats: { count: 2n, average: 15n, total: 31n } }]);
  });

  it('splits multi-key maps @x[pid, comm] into fields', function () {
    assert.deepEqual(
      maps.x.entries.map((e) => [e.key, e.value]),
      [
        [['1', 'init'], 1n],
        [['4466', 'bpftrace'], 1n],
      ]
    );
    // a string key containing ", " cannot be told from two keys: documented limit
    assert.deepEqual(maps.names.entries.map((e) => e.key), [['GET /x: y', 'a b'], ['plain', 'c', 'd']]);
  });
});

describe('parseBpftraceText: ustack() keys span lines (bpftrace-ustack-keys.out)', function () {
  const maps = byName(parseBpftraceText(read('bpftrace-ustack-keys.out')));

  it('joins the frames of a stack key, one frame per line, and reads the fields after it', function () {
    assert.equal(maps.calls.entries.length, 7);
    assert.deepEqual(maps.calls.entries[0], { key: ['0x18ac3a0\n0xc68104', 'node'], kind: 'scalar', value: 1n });
    assert.deepEqual(maps.calls.entries[6], { key: ['0x18ac3a0\n0xd069e1', 'node'], kind: 'scalar', value: 2n });
  });

  it('reads the histogram after a stack key, and skips the traced program\'s own output', function () {
    assert.deepEqual(maps.lat_ns.entries.map((e) => [e.key, triples(e)]), [[['0x18ac3a0'], [[1024n, 2048n, 8n]]]]);
    assert.deepEqual(Object.keys(maps).sort(), ['calls', 'lat_ns']);
  });
});

describe('parseBpftraceJson: -f json output (bpftrace-json.out)', function () {
  const maps = byName(parseBpftraceJson(read('bpftrace-json.out')));

  it('reads hist buckets as [min, max + 1), with open ends for lhist', function () {
    assert.equal(maps.h.entries[0].kind, 'log2');
    assert.deepEqual(triples(maps.h.entries[0]).slice(0, 3), [
      [null, 0n, 1n],
      [0n, 1n, 1n],
      [1n, 2n, 1n],
    ]);
    assert.equal(maps.l.entries[0].kind, 'linear');
    assert.deepEqual(triples(maps.l.entries[0]).slice(-2), [
      [90n, 100n, 0n],
      [100n, null, 1n],
    ]);
    assert.deepEqual(triples(maps.l.entries[0])[6], [50n, 60n, 1n]);
  });

  it('repairs the [2G, 4G) bucket that bpftrace 0.17 prints as {min: -2147483648, max: 0}', function () {
    assert.deepEqual(triples(maps.h.entries[0]).slice(-2), [
      [1073741824n, 2147483648n, 0n],
      [2147483648n, 4294967296n, 1n],
    ]);
    assert.deepEqual(triples(maps.only_big.entries[0]), [[2147483648n, 4294967296n, 1n]]);
    assert.equal(maps.only_big.entries[0].note, FOLD_NOTE);
  });

  it('reads count, sum (exact past 2^53), avg (typed "stats" by bpftrace) and stats', function () {
    assert.equal(maps.c.entries[0].value, 2n);
    assert.equal(maps.s.entries[0].value, 9007199254740993n);
    assert.deepEqual(maps.a.entries, [{ key: [], kind: 'scalar', value: 3n }]);
    assert.deepEqual(maps.st.entries[0].stats, { count: 2n, average: 15n, total: 31n });
    assert.deepEqual(maps['@'].entries, [{ key: [], kind: 'scalar', value: 1n }]);
  });

  it('skips a line cut short (bpftrace killed mid-print) and keeps the others', function () {
    const lines = read('bpftrace-json.out').split('\n');
    const hLine = lines.findIndex((l) => l.includes('"@h"'));
    lines[hLine] = lines[hLine].slice(0, 120);
    const cut = byName(parseBpftraceJson(lines.join('\n')));
    assert.equal(cut.h, undefined);
    assert.equal(cut.c.entries[0].value, 2n);
    assert.deepEqual(Object.keys(cut).length, Object.keys(maps).length - 1);
  });

  it('splits JSON keys joined with "," and keeps keys with colons whole', function () {
    assert.deepEqual(maps.kc.entries, [{ key: ['a b', '7'], kind: 'scalar', value: 1n }]);
    assert.deepEqual(maps.ks.entries, [{ key: ['x:y'], kind: 'stats', stats: { count: 1n, average: 5n, total: 5n } }]);
    assert.deepEqual(maps.kh.entries.map((e) => [e.key, triples(e)]), [[['GET /api: users'], [[64n, 128n, 1n]]]]);
  });
});

describe("nodetrace's own latency program (bpftrace-addon-latency-sqlite3.out / .json)", function () {
  const text = byName(parse(read('bpftrace-addon-latency-sqlite3.out')));
  const json = byName(parse(read('bpftrace-addon-latency-sqlite3.json')));
  const RUN = 'node_sqlite3::Statement::Work_BeginRun(node_sqlite3::Statement::Baton*)';

  it('finds the five latency maps in µs, from text and from JSON alike', function () {
    const names = ['loop_wait_us', 'max_us', 'queue_wait_us', 'run_us', 'total_us'];
    assert.deepEqual(Object.keys(text).sort(), names);
    assert.deepEqual(Object.keys(json).sort(), names);
    for (const name of names) assert.equal(text[name].unit, 'us');
  });

  it('reads the text capture: Work_BeginRun total histogram and max', function () {
    const total = text.total_us.entries.find((e) => e.key[0] === RUN);
    assert.equal(totalCount(total), 20257n);
    assert.deepEqual(triples(total)[0], [32n, 64n, 3104n]);
    const max = text.max_us.entries.find((e) => e.key[0] === RUN);
    assert.equal(max.value, 3099n);
  });

  it('reads the JSON capture: same kinds, its own counts', function () {
    const total = json.total_us.entries.find((e) => e.key[0] === RUN);
    assert.equal(totalCount(total), 17256n);
    assert.deepEqual(triples(total)[1], [64n, 128n, 15715n]);
    assert.equal(json.max_us.entries.find((e) => e.key[0] === RUN).value, 2721n);
    const keys = (maps) => maps.total_us.entries.map((e) => e.key[0]).sort();
    assert.deepEqual(keys(json), keys(text));
  });
});

describe('parse(): which tracer printed it', function () {
  it('tells bpftrace text, bpftrace JSON and DTrace apart', function () {
    assert.equal(detectFormat(read('bpftrace-scalars.out')), 'bpftrace');
    assert.equal(detectFormat(read('bpftrace-ustack-keys.out')), 'bpftrace');
    assert.equal(detectFormat(read('bpftrace-json.out')), 'bpftrace-json');
    assert.equal(detectFormat(read(path.join(__dirname, 'fixtures', 'shared', 'dtrace', 'addon-latency-sqlite3.out'))), 'dtrace');
    assert.equal(detectFormat('Attaching 1 probe...\n'), null);
  });

  it('dispatches on the detected format unless told the tracer', function () {
    assert.deepEqual(parse(read(SHARED_USYM)), parseBpftraceText(read(SHARED_USYM)));
    assert.deepEqual(parse(read('bpftrace-json.out'), { tracer: 'bpftrace' }), parseBpftraceJson(read('bpftrace-json.out')));
    assert.deepEqual(parse('', { tracer: 'bpftrace' }), { tracer: 'bpftrace', aggregations: [] });
    assert.throws(() => parse('', { tracer: 'systemtap' }), /unknown tracer/);
  });
});

describe('parseBucketLabel', function () {
  it('reads every label form bpftrace prints', function () {
    assert.deepEqual(parseBucketLabel('(..., 0)'), { lo: null, hi: 0n });
    assert.deepEqual(parseBucketLabel('[0]'), { lo: 0n, hi: 1n });
    assert.deepEqual(parseBucketLabel('[512, 1K)'), { lo: 512n, hi: 1024n });
    assert.deepEqual(parseBucketLabel('[2G, 4G)'), { lo: 2n ** 31n, hi: 2n ** 32n });
    assert.deepEqual(parseBucketLabel('[100000, ...)'), { lo: 100000n, hi: null });
    assert.equal(parseBucketLabel('[pid, 4)'), null);
  });
});

describe('parseBpftraceText: keys holding U+2028 and U+2029 (bpftrace-u2028-keys.out)', function () {
  // A key is the target's text (a path, a function's name): JavaScript's `.`
  // stops at these two, and the parser once took such a line for a key that
  // goes on, merging it with the next map line: entries lost, keys forged.
  const maps = byName(parseBpftraceText(read('bpftrace-u2028-keys.out')));

  it('keeps each entry, its key whole, and the histogram after one', function () {
    assert.deepEqual(maps.paths.entries.map((e) => [e.key, e.value]), [
      [['/app/a\u2028b.txt', 'fs.open'], 1n],
      [['/app/c\u2029d', 'fs.open'], 1n],
      [['/app/plain', 'fs.open'], 2n],
    ]);
    assert.deepEqual(maps.lat.entries.map((e) => [e.key, triples(e)]), [[['x\u2028y'], [[4n, 8n, 1n]]]]);
  });
});
