'use strict';
// The programs' arguments by name (lib/tracer/program-arguments.js): every
// program's header names the same arguments in the same order as its table,
// and uses exactly those; plans that give one wrong fail at plan time; the
// dry run says what each one is. And the layouts the latency programs read,
// named in them, equal the one table in JavaScript.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { TABLES, tableOf, programArguments, argumentReference } = require('../lib/tracer/program-arguments');
const { planTracer, renderPlan, SCRIPT_DIR } = require('../lib/tracer/plan');
const { LIBUV_LAYOUT, NODE_LAYOUT } = require('../lib/latency/probe-points');
const { NAME_BYTES, NAMES_KEPT_IN_TRACER } = require('../lib/latency/report/named-kinds');

const PROGRAMS = fs.readdirSync(SCRIPT_DIR).filter((f) => /\.(bt|d)$/.test(f)).sort();
const read = (file) => fs.readFileSync(path.join(SCRIPT_DIR, file), 'utf8');

// The header: the program's first comment.
const headerOf = (text) => text.slice(text.indexOf('/*'), text.indexOf('*/') + 2);
// The program without its comments (a probe's path may hold neither).
const codeOf = (text) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');

describe('program arguments: one table per program, and each program\'s header', function () {
  it('every program in d-scripts/ has a table, and only those', function () {
    assert.deepStrictEqual(Object.keys(TABLES).sort(), PROGRAMS);
  });

  for (const file of PROGRAMS) {
    it(`${file}: its header lists $N NAME as its table does, and it uses exactly those arguments`, function () {
      const text = read(file);
      const listed = [...headerOf(text).matchAll(/^ \*\s+\$(\d+)\s+([A-Z][A-Z0-9_]*)\s/gm)]
        .map((m) => [Number(m[1]), m[2]]);
      assert.deepStrictEqual(listed, tableOf(file).map((e, i) => [i + 1, e.name]));
      if (!listed.length) assert.match(headerOf(text), /ARGUMENTS: none/);
      const used = new Set([...codeOf(text).matchAll(/\$\$?(\d+)/g)].map((m) => Number(m[1])));
      // A table's `each` arguments come once per clause: the example may use them again, a whole clause's more.
      const each = tableOf(file).filter((e) => e.each).length;
      const expected = tableOf(file).map((e, i) => i + 1);
      while (each && used.size > expected.length) expected.push(...Array.from({ length: each },
        (_, j) => expected.length + 1 + j));
      assert.deepStrictEqual([...used].sort((a, b) => a - b), expected, 'the arguments the code uses');
    });
  }

  it('names where -c puts cpid: the PID argument of profile.bt and offcpu.bt', function () {
    assert.strictEqual(argumentReference('profile.bt', 'PID'), '$2');
    assert.strictEqual(argumentReference('offcpu.bt', 'PID'), '$1');
    assert.throws(() => argumentReference('profile.bt', 'NOPE'), /profile\.bt has no argument named NOPE/);
  });
});

describe('program arguments: built by name, in the program\'s order', function () {
  const latency = (more = {}) => ({
    NAPI_FILE: '/n', PID: 7, UV_FILE: '/u', QUEUE_WORK: '0x1', QUEUE_DONE: '0x2', WRAP_START: 0, WRAP_END: 0, ...more,
  });
  const pool = {
    SUBMIT: 's', FS_WORK_AT: 9, FS_WORK: 'fw', DNS_WORK: 'dw', NAME_WORK: 'nw', RANDOM_WORK: 'rw',
    FS_DONE: 'fd', DNS_DONE: 'dd', NAME_DONE: 'nd', RANDOM_DONE: 'rd', QUEUE_WORK_AT: 18,
  };

  it('puts each value in its place whatever the order it is given in', function () {
    const args = programArguments('addon-latency.bt', { NAMES: 3, DNS_WORK_AT: 19, ...pool, ...latency() });
    assert.deepStrictEqual(args.map((a) => a.value), ['/n', 7, '/u', '0x1', '0x2', 0, 0, 's', 9, 'fw', 'dw', 'nw', 'rw', 'fd', 'dd', 'nd', 'rd', 18, 19, 3]);
    assert.deepStrictEqual(args[8], { position: 9, name: 'FS_WORK_AT', meaning: 'where uv__fs_work lies in the process\'s memory', value: 9 });
  });

  it('refuses an argument missing, unknown or given for a part left out, and a part that would leave a hole', function () {
    assert.throws(() => programArguments('addon-latency.bt', latency()), /addon-latency\.bt: missing SUBMIT \(\$8\), FS_WORK_AT \(\$9\).* NAMES \(\$20\)/);
    assert.throws(() => programArguments('addon-latency.bt', latency({ FS_WORKAT: 1 })), /takes no argument named FS_WORKAT/);
    assert.throws(() => programArguments('addon-latency.bt', latency({ SUBMIT: 's' }), { without: ['pool', 'names'] }), /SUBMIT \(\$8\) is given, but its part @pool is left out/);
    assert.throws(() => programArguments('addon-latency.bt', latency(), { without: ['pool'] }), /leaving out @pool leaves a hole before DNS_WORK_AT \(\$19\)/);
    assert.throws(() => programArguments('loop.bt', { PID: 1, OVER_US: NaN, STACKS: 0, TID: 1 }), /OVER_US \(\$2\) is NaN/);
    assert.throws(() => programArguments('nope.bt', {}), /no argument table for nope\.bt/);
    assert.strictEqual(programArguments('addon-latency.bt', latency(), { without: ['pool', 'names'] }).length, 7);
  });

  it('fills a group, and leaves optional arguments off the end only', function () {
    const snoop = (pids) => programArguments('log-snoop.bt', { LIBRARY: '/l', PROBES: ['log-*', 'none*', 'none*', 'none*', 'none*', 'none*'], ...(pids ? { PIDS: pids } : {}) });
    assert.strictEqual(snoop().length, 7, 'no PIDs: every process, none passed');
    assert.deepStrictEqual(snoop([4, 5]).slice(7).map((a) => a.value), [4, 5, 0, 0, 0, 0, 0, 0]);
    assert.throws(() => snoop([1, 2, 3, 4, 5, 6, 7, 8, 9]), /PIDS takes an array of at most 8 values/);
    assert.throws(() => programArguments('log-snoop.bt', { LIBRARY: '/l', PROBES: ['log-*'] }), /missing PROBE2 \(\$3\)/);
    // log-snoop.d: more PIDs only as given (its defaultargs reads the rest as 0).
    assert.deepStrictEqual(programArguments('log-snoop.d', { TARGET: 4, PROBES: 'log-*', MORE_PIDS: [5] }).map((a) => a.value), [4, 'log-*', 5]);
    const ebadf = programArguments('ebadf-stop-gcore.bt', { PID: 4, NAME: '-', ERRNO: 9, HITS: 1, MORE_ERRNOS: [32] });
    assert.deepStrictEqual(ebadf.map((a) => a.value), [4, '-', 9, 1, 32, 0, 0], 'REPORT_ONLY left off: the program\'s own default');
  });

  it('a plan takes them by name only, and the dry run says what each one is', function () {
    const bpftrace = { name: 'bpftrace', path: '/usr/bin/bpftrace', version: '0.17.0' };
    assert.throws(() => planTracer(bpftrace, { script: 'loop', positional: [1, 2, 3] }), /by name \(o\.args\)/);
    const plan = planTracer(bpftrace, { script: 'loop', args: { PID: 42, OVER_US: 100000, STACKS: 0, TID: 42 } });
    assert.deepStrictEqual(plan.argv.slice(-4), ['42', '100000', '0', '42']);
    const lines = renderPlan(plan).split('\n');
    const command = lines.findIndex((l) => l.includes('/usr/bin/bpftrace'));
    assert.deepStrictEqual(lines.slice(command - 4, command), [
      '# $1 PID the Node process',
      '# $2 OVER_US a stall is a turn busy for longer than this (microseconds)',
      '# $3 STACKS 1: sample the loop\'s user stack during stalls; 0: no sampling',
      '# $4 TID the thread whose event loop is measured: the PID (the main thread) or a Worker\'s thread',
    ]);
    assert.throws(() => planTracer(bpftrace, { script: 'addon-latency', programText: '/* @pool */\n', without: ['pool'], args: latency() }),
      /addon-latency\.bt: the program still has its @pool part/);
  });
});

describe('27.1: values that land in a probe description are of a strict set', function () {
  const latency = (more = {}) => ({
    NAPI_FILE: '/proc/7/map_files/55d0-66e0', PID: 7, UV_FILE: '/proc/7/map_files/55d0-66e0', QUEUE_WORK: 'uv__queue_work',
    QUEUE_DONE: '0x1f0', WRAP_START: 0, WRAP_END: 0, ...more,
  });
  const without = { without: ['pool', 'names'] };
  const CLAUSE = '/home/m/x*/tick-1s{printf("INJECTED");}/*/node';

  it('takes what nodetrace gives: map_files, a library path, a link glob of its own, symbols, addresses, probe names', function () {
    assert.strictEqual(programArguments('addon-latency.bt', latency(), without).length, 7);
    assert.strictEqual(programArguments('gc.bt', { OBJECT: '/proc/9/map_files/7f00-7f80', PID: 9 }).length, 2);
    assert.strictEqual(programArguments('http.bt', { LIBRARY: { temp: '*.so' }, PID: 0, MIN_US: 0 }).length, 10);
    const libs = '/home/user_1/.cache/nodetrace/usdt/nodetrace-0f1e2d3c4b5a6978.so';
    assert.strictEqual(programArguments('log-snoop.bt', { LIBRARY: libs, PROBES: ['log-*', 'none*', 'none*', 'none*', 'none*', 'none*'] }).length, 7);
  });

  for (const [what, program, values] of [
    ['a clause in a path (gc)', 'gc.bt', { OBJECT: CLAUSE, PID: 9 }],
    ['a clause in a path (latency)', 'addon-latency.bt', latency({ UV_FILE: CLAUSE })],
    ['a comma: another probe', 'http.bt', { LIBRARY: '/a.so,uprobe:/bin/sh', PID: 0, MIN_US: 0 }],
    ['a colon: another field of the probe', 'gc.bt', { OBJECT: '/lib/x.so:main', PID: 9 }],
    ['a glob in a path', 'http-batched.bt', { LIBRARY: '/home/*/lib.so', PID: 0, MIN_US: 0 }],
    ['a newline', 'gc.bt', { OBJECT: '/a\nBEGIN{}', PID: 9 }],
    ['a path that climbs', 'gc.bt', { OBJECT: '/proc/9/root/../../etc/x', PID: 9 }],
    ['a relative path', 'gc.bt', { OBJECT: 'node', PID: 9 }],
    ['a clause in a function', 'addon-latency.bt', latency({ QUEUE_WORK: 'f{printf("x")}' })],
    ['a glob in a function', 'addon-latency.bt', latency({ QUEUE_DONE: 'uv_*' })],
    ['a brace in a probe name', 'log-snoop.bt', { LIBRARY: '/l.so', PROBES: ['log-*{', 'none*', 'none*', 'none*', 'none*', 'none*'] }],
    ['a private file that is not a plain name', 'http.bt', { LIBRARY: { temp: '../x,y' }, PID: 0, MIN_US: 0 }],
    ['a PID that is not a number in DTrace\'s pid$1', 'gc.d', { PID: '1:::entry{' }],
  ]) {
    it(`refuses ${what}, in one line saying why`, function () {
      const { UserError } = require('../lib/errors');
      assert.throws(() => programArguments(program, values, program === 'addon-latency.bt' ? without : {}), (err) => {
        assert(err instanceof UserError, err.stack);
        assert.match(err.message,
          /^refusing to trace: a (path|function|probe name|PID) for a probe of \S+ \([A-Z_0-9]+, \$\d+\) holds characters/);
        assert(!/\n/.test(err.message));
        return true;
      });
    });
  }

  it('DTrace: what a D program reads as $N is a number or a name; strings only where it reads $$N', function () {
    assert.deepStrictEqual(programArguments('ebadf-abort.d', { PID: 0, NAME: 'my app}{', ERRNO: 'EBADF', HITS: 1, MORE_ERRNOS: [] }).map((a) => a.value),
      [0, 'my app}{', 'EBADF', 1, 0, 0, 0]);
    assert.strictEqual(programArguments('log-snoop.d', { TARGET: '*', PROBES: 'log-[ef]*' }).length, 2);
    assert.throws(() => programArguments('ebadf-abort.d', { PID: 0, NAME: 'x', ERRNO: 'EBADF; exit(0)', HITS: 1 }),
      /refusing to trace: ebadf-abort\.d reads ERRNO \(\$3\) as a number or a name/);
  });

  it('the dry run\'s comments hold one line each: a name from a target starts no line a shell runs', function () {
    const bpftrace = { name: 'bpftrace', path: '/usr/bin/bpftrace', version: '0.17.0' };
    const plan = planTracer(bpftrace, {
      script: 'loop', args: { PID: 42, OVER_US: 100000, STACKS: 0, TID: 42 },
      describe: 'PID 42 (ev\nil; touch /tmp/pwned)', notes: ['a path /x\nrm -rf /\r\u001b[2J'],
    });
    const lines = renderPlan(plan).split('\n');
    const command = lines.findIndex((l) => l.includes('/usr/bin/bpftrace'));
    assert(command > 0);
    for (const line of lines.slice(0, command)) assert.match(line, /^(# |tmp=)/, line);
    assert(lines.some((l) => l.includes('(ev\\x0ail; touch /tmp/pwned)')));
    assert(lines.some((l) => l === '# a path /x\\x0arm -rf /\\x0d\\x1b[2J'));
  });
});

describe('the latency programs\' layouts: named in the programs, valued in one table', function () {
  // STRUCT_FIELD -> offset, from LIBUV_LAYOUT and NODE_LAYOUT.
  const expected = {};
  for (const [struct, fields] of Object.entries(LIBUV_LAYOUT)) {
    if (struct === 'verifiedOn') continue;
    for (const [field, offset] of Object.entries(fields)) expected[`${struct}_${field}`.toUpperCase()] = offset;
  }
  for (const [struct, fields] of Object.entries(NODE_LAYOUT)) {
    for (const [field, offset] of Object.entries(fields)) expected[`node_${struct}_${field}`.toUpperCase()] = offset;
  }
  const constants = (text) => Object.fromEntries([
    ...[...text.matchAll(/^#define ([A-Z][A-Z0-9_]*) (\d+)$/gm)],
    ...[...text.matchAll(/^inline int ([A-Z][A-Z0-9_]*) = (\d+);$/gm)],
  ].map((m) => [m[1], Number(m[2])]));

  for (const file of ['addon-latency.bt', 'addon-latency.d']) {
    it(`${file}: every layout constant it defines is the table's, every one it uses is defined, and no offset is a bare number`, function () {
      const text = read(file);
      const defined = constants(text);
      const layout = Object.keys(defined).filter((name) => /^(UV|NODE)_/.test(name));
      assert.ok(layout.length >= 5, layout.join(' '));
      for (const name of layout) assert.strictEqual(defined[name], expected[name], `${name}: ${defined[name]} in ${file}, ${expected[name]} in the table`);
      const code = codeOf(text).replace(/^(#define|inline int) .*$/gm, '');
      for (const [, name] of code.matchAll(/\b((?:UV|NODE)_[A-Z0-9_]+)\b/g)) assert.ok(name in defined, `${name} is used but not defined`);
      assert.deepStrictEqual(code.match(/(arg1|this->w|this->vtable|uptr\(arg1 - [A-Z_]+\))\s*[-+]\s*\d+/g), null, 'an offset as a bare number');
    });
  }

  it('addon-latency.bt reads every field of the table, and names as long and as many as the report says', function () {
    const defined = constants(read('addon-latency.bt'));
    assert.deepStrictEqual(Object.keys(expected).filter((name) => !(name in defined)), []);
    assert.strictEqual(defined.NAME_BYTES, NAME_BYTES);
    assert.strictEqual(defined.NAMES_KEPT, NAMES_KEPT_IN_TRACER);
    assert.ok(read('addon-latency.bt').includes('str($at, NAME_BYTES)') && read('addon-latency.bt').includes('@names_kept < NAMES_KEPT'));
  });
});
