'use strict';
// The pure parts of latency --paths / --hosts: the names the program prints
// (a real capture, test/fixtures/bpftrace-addon-latency-names.out, with a
// hostile path and one longer than the program reads), kept beside the
// kind and never in its key, folded beyond the few shown, and never reaching
// a terminal raw; the plan's choices; the program's libuv offsets against
// the one table that holds them.
const assert = require('assert');
const { splitAtEndMarker } = require('../lib/tracer/output-formats');
const fs = require('fs');
const path = require('path');
const { parseNameLine, namesFromLines, foldNamedKinds, namesMask, NAME_BYTES, NAMES_SHOWN } = require('../lib/latency/report/named-kinds');
const { buildModel } = require('../lib/latency/report/build-model');
const { summarize } = require('../lib/latency/report/summary');
const { renderText } = require('../lib/latency/report/text');
const { renderJson } = require('../lib/latency/report/json');
const { makeAggregation } = require('../lib/aggregation/model');
const { buildKinds } = require('../lib/latency/report/kinds');
const { readScript } = require('../lib/tracer/plan');
const { withoutOptional } = require('../lib/tracer/template');
const { plan } = require('../lib/commands/latency');
const { EXIT } = require('../lib/errors');

const text = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-addon-latency-names.out'), 'utf8');
// What the target of the capture used (its .cmd file).
const HOSTILE = '/tmp/no",pe\n\u001b[2J\u001b]0;x\u0007\u009b2J é';
const LONG = '/nonexistent/' + 'x'.repeat(200);
const TARGETS = '/work/wt-names/test/targets';

describe('latency --paths / --hosts: the names the program printed', function () {
  it('decodes each NAME line (16 little-endian words) into the kind and the name, byte for byte', function () {
    const names = [...namesFromLines(splitAtEndMarker(text.split('\n')).during).values()];
    const named = (key, s) => names.some((n) => n.key === key && n.subject.text === s);
    assert.strictEqual(names.length, 7);
    assert(named('0x106', TARGETS) && named('0x106', `${TARGETS}/pool-names.js`), 'fs.stat of both paths');
    assert(named('0x101', `${TARGETS}/pool-names.js`), 'fs.open');
    assert(named('uv__getaddrinfo_work', 'localhost') && named('uv__getaddrinfo_work', 'vm'), 'both host names');
    assert(named('0x106', HOSTILE), 'the hostile path whole: quote, comma, newline, escapes, C1, UTF-8');
    const long = names.find((n) => n.subject.text.startsWith('/nonexistent/'));
    assert.deepStrictEqual(long.subject, { field: 'path', text: LONG.slice(0, NAME_BYTES - 1), cut: true });
  });

  it('takes only lines of exactly its shape', function () {
    const words = ' 0'.repeat(16);
    assert(parseNameLine(`NAME 1 262${words}`));
    assert.strictEqual(parseNameLine(`NAME 1 262${words} x`), null);
    assert.strictEqual(parseNameLine(`NAME 1 262${' 0'.repeat(15)}`), null);
    assert.strictEqual(parseNameLine(`NAME 1 99${words}`), null, 'no such kind code');
    assert.strictEqual(parseNameLine(`@NAME 1 262${words}`), null);
  });
});

describe('latency --paths / --hosts: the report', function () {
  const model = buildModel(splitAtEndMarker(text.split('\n')), { tracer: 'bpftrace', traceNs: 60e9 });

  it('shows each name as its own kind with the count the target made (3 rounds), the name beside the kind in JSON', function () {
    const out = JSON.parse(renderJson(summarize(model)));
    const kind = (name, field, value) => out.kinds.find((k) => k.name === name && k[field] === value);
    for (const [name, field, value] of [['fs.stat', 'path', TARGETS], ['fs.stat', 'path', HOSTILE], ['fs.open', 'path', `${TARGETS}/pool-names.js`],
      ['dns.lookup', 'host', 'localhost'], ['dns.lookup', 'host', 'vm']]) {
      const k = kind(name, field, value);
      assert(k, `${name} ${JSON.stringify(value)} in ${out.kinds.map((x) => `${x.name} ${x.path || x.host}`).join('; ')}`);
      assert.strictEqual(k.count, 3, `${name} ${value}`);
      assert(k.breakdown && k.breakdown.run.count === 3, 'with its breakdown');
    }
    assert.deepStrictEqual(kind('fs.stat', 'path', HOSTILE).symbols, ['uv__fs_work UV_FS_STAT']);
    const long = out.kinds.find((k) => k.path && k.path.startsWith('/nonexistent/'));
    assert.strictEqual(long.name_cut, true);
    // fs.close works on a file descriptor: no path, its plain kind.
    const close = out.kinds.find((k) => k.name === 'fs.close');
    assert(close && !('path' in close) && close.count === 3);
  });

  it('never lets a name reach the terminal raw: one line each, controls shown, in text and in JSON', function () {
    const report = renderText(summarize(model));
    // eslint-disable-next-line no-control-regex
    assert(!/[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(report), 'no control character in the text report');
    assert(report.split('\n').includes('fs.stat /tmp/no",pe\\x0a\\x1b[2J\\x1b]0;x\\x07\\u009b2J é'), 'the hostile path on one line, readable');
    assert(report.includes(`fs.stat ${LONG.slice(0, NAME_BYTES - 1)}\u2026\n`), 'a cut name says so');
    const json = renderJson(summarize(model));
    // eslint-disable-next-line no-control-regex
    assert(!/[\x00-\x09\x0b-\x1f\x7f-\x9f]/.test(json), 'JSON escapes C1 and DEL too');
    assert(JSON.parse(json).kinds.some((k) => k.path === HOSTILE), 'and still carries the name exactly');
  });
});

describe('latency --paths / --hosts: a flood of names', function () {
  // One kind (fs.stat, 0x106) on `n` paths, path i taking (i + 1) x 100 µs
  // once, plus `plain` operations the program kept under the plain kind
  // (names beyond its 1,024).
  function flood(n, plain = 0) {
    const hist = (us, count = 1) => ({ kind: 'log2', buckets: [{ lo: BigInt(us), hi: BigInt(us * 2), count: BigInt(count) }] });
    const roles = ['total_us', 'queue_wait_us', 'run_us', 'loop_wait_us'];
    const aggregations = roles.map((r) => makeAggregation(r, []));
    const max = makeAggregation('max_us', []);
    for (let i = 0; i < n; i++) {
      const subject = { field: 'path', text: `/p/${i}` };
      for (const a of aggregations) a.entries.push({ key: ['fs.stat'], subject, ...hist((i + 1) * 100) });
      max.entries.push({ key: ['fs.stat'], subject, kind: 'scalar', value: BigInt((i + 1) * 150) });
    }
    if (plain) for (const a of aggregations) a.entries.push({ key: ['fs.stat'], ...hist(50, plain) });
    for (const a of aggregations) a.entries.push({ key: ['fs.read'], ...hist(10, 7) });
    return { tracer: 'bpftrace', aggregations: [...aggregations, max] };
  }

  it('keeps the names that took the most time and folds the rest, with the plain kind, into "(other paths)"', function () {
    const folded = foldNamedKinds(flood(25, 4), 10);
    const kinds = buildKinds(folded).kinds;
    const stat = kinds.filter((k) => k.key[0] === 'fs.stat');
    assert.deepStrictEqual(stat.filter((k) => k.subject.text !== null).map((k) => k.subject.text).sort(),
      Array.from({ length: 10 }, (_, i) => `/p/${15 + i}`).sort(), 'the 10 slowest paths');
    const other = stat.find((k) => k.subject.text === null);
    assert.strictEqual(other.count, 15n + 4n, 'the other 15 names and the 4 unnamed operations');
    assert.strictEqual(other.subject.folded, 15);
    for (const phase of ['queue_wait', 'run', 'loop_wait']) {
      assert.strictEqual(other.breakdown[phase].entry.buckets.reduce((s, b) => s + b.count, 0n), 19n, phase);
    }
    assert.strictEqual(other.max.value, 15n * 150n, 'the largest max of those folded');
    assert.strictEqual(stat.reduce((s, k) => s + k.count, 0n), 25n + 4n, 'nothing lost');
    const read = kinds.find((k) => k.key[0] === 'fs.read');
    assert(read && !read.subject, 'a kind without names stays as it is');
    const json = JSON.parse(renderJson(summarize({ ...folded, symbols: new Map() })));
    assert.deepStrictEqual(json.kinds.filter((k) => k.path === null).map((k) => [k.name, k.count, k.folded_names]), [['fs.stat', 19, 15]]);
    assert.match(renderText(summarize(folded)), /^fs\.stat \(other paths\)$/m);
  });

  it('shows a few names as they are', function () {
    const kinds = buildKinds(foldNamedKinds(flood(3), NAMES_SHOWN)).kinds;
    assert.deepStrictEqual(kinds.filter((k) => k.key[0] === 'fs.stat').map((k) => k.subject.text).sort(), ['/p/0', '/p/1', '/p/2']);
  });
});

describe('latency --paths / --hosts: the program and the plan', function () {
  const script = readScript('addon-latency', 'bpftrace');

  it('reads uv_fs_t.path, uv_fs_t.fs_type and uv_getaddrinfo_t.hostname from the request\'s work_req (values: test/program-arguments.test.js)', function () {
    assert(script.includes('*(uint64 *)uptr(arg1 - UV_FS_T_WORK_REQ + UV_FS_T_PATH)'), 'path');
    assert(script.includes('*(int32 *)uptr(arg1 - UV_FS_T_WORK_REQ + UV_FS_T_FS_TYPE)'), 'fs_type');
    assert(script.includes('*(uint64 *)uptr(arg1 - UV_GETADDRINFO_T_WORK_REQ + UV_GETADDRINFO_T_HOSTNAME)'), 'hostname');
  });

  it('needs bpftrace (a usage error with DTrace), and reads names only when asked', function () {
    assert.throws(() => plan({ pid: String(process.pid), paths: true }, { name: 'dtrace', version: '2.0', path: '/usr/sbin/dtrace' }),
      (err) => err.exitCode === EXIT.USAGE && /--paths and --hosts need bpftrace/.test(err.message));
    assert.strictEqual(namesMask({ paths: true }), 1);
    assert.strictEqual(namesMask({ hosts: true }), 2);
    assert.strictEqual(namesMask({ paths: true, hosts: true }), 3);
  });

  it('passes which names to read as $20 (0 without the flags), with strings long enough on 0.17', function () {
    if (process.getuid() !== 0) this.skip();   // reads this process's own memory map through /proc/PID/map_files
    const bpftrace = (version) => ({ name: 'bpftrace', version, path: '/usr/bin/bpftrace' });
    const pid = String(process.pid);
    const plain = plan({ pid }, bpftrace('0.17.0'));
    if (plain.unseen) this.skip();   // this node's libuv has no pool symbols (Debian's)
    assert.strictEqual(plain.argv[plain.argv.length - 1], '0', 'no names read unless asked');
    // The script as it is but for the part nodetrace opens its window instead of (docs/programs.md, "The window"),
    // and the functions it names given by address, each said in a comment on top.
    const named = new Map();
    const byName = plain.programText
      .replace(/^\/\* (0x[0-9a-f]+) is (\w+) \*\/\n/gm, (line, at, fn) => { named.set(at, fn); return ''; })
      .replace(/^\/\* instantiated by nodetrace latency: each function by its address in \w+, where bpftrace finds it at once \*\/\n/gm, '')
      .replace(/^(uprobe:\$[13]:)(0x[0-9a-f]+)$/gm, (line, probe, at) => probe + named.get(at));
    assert.strictEqual(named.size, 4, 'napi_create_async_work, napi_queue_async_work, uv_queue_work, uv_async_send');
    assert.strictEqual(byName, withoutOptional(readScript('addon-latency', 'bpftrace'), 'byhand'), 'the script as it is');
    assert.strictEqual(plain.env.BPFTRACE_STRLEN, undefined);
    const both = plan({ pid, paths: true, hosts: true }, bpftrace('0.17.0'));
    assert.strictEqual(both.argv[both.argv.length - 1], '3');
    assert.strictEqual(both.env.BPFTRACE_STRLEN, String(NAME_BYTES));
    assert(/@named_total_us/.test(both.programText || fs.readFileSync(both.scriptFile, 'utf8')), 'the program with its @names part');
    assert.strictEqual(plan({ pid, hosts: true }, bpftrace('0.27.1')).env.BPFTRACE_MAX_STRLEN, String(NAME_BYTES));
  });
});
