'use strict';
// The Linux USDT provider against a real bpftrace: listing, argument values,
// callbacks only while attached, enable/disable, many probes, processes
// started later, worker threads, garbage collection.
//
// bpftrace prints "Attaching N probes..." before the probes are live, so
// after it the tests also wait for the target to see its semaphore set.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const { Target, startBpftrace, bpftraceList, bpftraceUnavailable, tempRoot, eventually } = require('./targets/usdt-harness');
const { requireTracing } = require('./support/harness');

const ARGS_PROBES = [
  ['p_int', 'int', 'int', 'int'],
  ['p_int32', 'int32_t', 'int32_t'],
  ['p_str', 'char *', 'char *', 'char *'],
  ['p_json', 'json', 'json'],
  ['p_six', 'int', 'char *', 'json', 'int', 'char *', 'int'],
];

describe('usdt: bpftrace sees the probes @tracer', function () {
  this.timeout(60000);
  let root;
  let env;
  let target;
  let lib;

  before(async function () {
    requireTracing(this, { also: bpftraceUnavailable });
    root = tempRoot('usdt-bt');
    env = { NODETRACE_USDT_DIR: path.join(root, 'lib') };
    target = await Target.start({ env, execArgv: ['--expose-gc'] });
    await target.request('create', { key: 'a', provider: 'nt_args', probes: ARGS_PROBES });
    const r = await target.request('enable', { key: 'a' });
    assert.strictEqual(r.status.native, true, JSON.stringify(r.status));
    lib = r.status.libraries[0];
  });

  after(async function () {
    if (target) await target.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('lists the provider and probe names (bpftrace -p PID -l)', function () {
    const out = bpftraceList(['-p', String(target.pid), '-l', 'usdt:*:nt_args:*']);
    const lines = out.trim().split('\n').filter((l) => l.startsWith('usdt:'));
    assert.deepStrictEqual(lines.map((l) => l.split(':').slice(-2).join(':')).sort(),
      ['nt_args:p_int', 'nt_args:p_int32', 'nt_args:p_json', 'nt_args:p_six', 'nt_args:p_str']);
    for (const l of lines) assert.ok(l.endsWith(lib + ':' + l.split(':').slice(-2).join(':')), l);
  });

  it('declares the argument types in the notes (readelf -n)', function () {
    const out = execFileSync('readelf', ['-n', lib], { encoding: 'utf8' });
    assert.match(out, /Name: p_int\s+Location: .*\s+Arguments: -8@%rdi -8@%rsi -8@%rdx\n/);
    assert.match(out, /Name: p_int32\s+Location: .*\s+Arguments: -4@%edi -4@%esi\n/);
    assert.match(out, /Name: p_str\s+Location: .*\s+Arguments: 8@%rdi 8@%rsi 8@%rdx\n/);
    assert.match(out, /Name: p_six\s+Location: .*\s+Arguments: -8@%rdi 8@%rsi 8@%rdx -8@%rcx 8@%r8 -8@%r9\n/);
  });

  it('runs callbacks only while attached; int, char * and json values arrive intact; disable/enable', async function () {
    // Not attached: callbacks never run.
    let r = await target.request('fire', { key: 'a', probe: 'p_int', values: [1, 2, 3], times: 50 });
    assert.deepStrictEqual([r.calls, r.fired], [0, 0]);

    const bt = await startBpftrace(['-p', String(target.pid), '-e', `
      usdt:${lib}:nt_args:p_int { printf("INT %ld %ld %ld\\n", arg0, arg1, arg2); }
      usdt:${lib}:nt_args:p_int32 { printf("I32 %d %d\\n", arg0, arg1); }
      usdt:${lib}:nt_args:p_str { printf("STR [%s] [%s] [%s]\\n", str(arg0), str(arg1), str(arg2)); }
      usdt:${lib}:nt_args:p_json { printf("JSON %s %s\\n", str(arg0), str(arg1)); }
      usdt:${lib}:nt_args:p_six { printf("SIX %ld %s %s %ld %s %ld\\n", arg0, str(arg1), str(arg2), arg3, str(arg4), arg5); }
    `]);
    const long = 'x'.repeat(90) + 'END' + 'y'.repeat(300);   // > 256 bytes: the addon's heap path
    try {
      for (const p of ['p_int', 'p_int32', 'p_str', 'p_json', 'p_six']) await target.request('waitEnabled', { key: 'a', probe: p });
      r = await target.request('fire', { key: 'a', probe: 'p_int', values: [0, -1, -(2 ** 40)] });
      assert.deepStrictEqual([r.calls, r.fired], [1, 1]);
      await target.request('fire', { key: 'a', probe: 'p_int', values: [2 ** 31, Number.MAX_SAFE_INTEGER, -2147483649] });
      await target.request('fire', { key: 'a', probe: 'p_int', values: ['42', null, 3.9] });
      await target.request('fire', { key: 'a', probe: 'p_int32', values: [-5, 2 ** 31] });
      await target.request('fire', { key: 'a', probe: 'p_str', values: ['héllo wörld ☃ 🚀', '', long] });
      await target.request('fire', { key: 'a', probe: 'p_str', values: [null, 12] });
      await target.request('fire', { key: 'a', probe: 'p_json', values: [{ a: 1, s: 'q"uote', u: '☃' }, [1, null]] });
      await target.request('fire', { key: 'a', probe: 'p_six', values: [-7, 'two', { three: 3 }, 4, 'five', -6] });
      // provider.fire(name, cb, ...extra): the extra arguments reach the callback.
      r = await target.request('fire', { key: 'a', probe: 'p_int', via: 'provider', extra: [7, 8, -9] });
      assert.strictEqual(r.fired, 1);
      await bt.waitFor(/INT 7 8 -9\n/);

      // disable(): no callbacks, nothing fires; enable() again: same file, fires.
      const calls = (await target.request('fire', { key: 'a', probe: 'p_int', times: 0 })).calls;
      await target.request('disable', { key: 'a' });
      r = await target.request('fire', { key: 'a', probe: 'p_int', values: [111], times: 5 });
      assert.deepStrictEqual([r.calls, r.fired], [calls, 0]);
      r = await target.request('enable', { key: 'a' });
      assert.strictEqual(r.status.libraries[0], lib, 'same definition, same file');
      r = await target.request('fire', { key: 'a', probe: 'p_int', values: [222] });
      assert.deepStrictEqual([r.calls, r.fired], [calls + 1, 1]);
      await bt.waitFor(/INT 222 0 0\n/);
    } finally {
      await bt.stop();
    }
    const lines = bt.stdout.split('\n');
    const has = (line) => assert.ok(lines.includes(line), `missing ${JSON.stringify(line)} in:\n${bt.stdout}`);
    has('INT 0 -1 -1099511627776');
    has(`INT 2147483648 ${Number.MAX_SAFE_INTEGER} -2147483649`);
    has('INT 42 0 3');
    has('I32 -5 -2147483648');
    has('STR [héllo wörld ☃ 🚀] [] [' + long.slice(0, 99) + ']');   // BPFTRACE_STRLEN=100
    has('STR [null] [12] [undefined]');
    has('JSON {"a":1,"s":"q\\"uote","u":"☃"} [1,null]');
    has('SIX -7 two {"three":3} 4 five -6');
    assert.ok(!/INT 111 /.test(bt.stdout), 'nothing fires while disabled');

    // Detached: callbacks stop running.
    await eventually(async () => {
      const before = (await target.request('fire', { key: 'a', probe: 'p_str', times: 0 })).calls;
      return (await target.request('fire', { key: 'a', probe: 'p_str', values: ['a'], times: 20 })).calls === before;
    }, { timeout: 20000 });
  });

  it('handles 200 probes in one provider', async function () {
    const probes = [];
    for (let i = 0; i < 200; i++) probes.push([`probe_${i}`, 'int', 'char *']);
    await target.request('create', { key: 'many', provider: 'nt_many', probes });
    const many = (await target.request('enable', { key: 'many' })).status.libraries.find((l) => l !== lib);
    const listed = bpftraceList(['-l', `usdt:${many}:nt_many:*`]).trim().split('\n');
    assert.strictEqual(listed.length, 200, listed.join('\n'));
    // Attaching 200 uprobes is slow on a busy host: attach three of them.
    const bt = await startBpftrace(['-p', String(target.pid), '-e',
      `usdt:${many}:nt_many:probe_0, usdt:${many}:nt_many:probe_57, usdt:${many}:nt_many:probe_199 ` +
      '{ printf("%s %d %s\\n", probe, arg0, str(arg1)); }']);
    try {
      for (const i of [0, 57, 199]) await target.request('waitEnabled', { key: 'many', probe: `probe_${i}` });
      for (const i of [0, 1, 57, 199]) {
        const r = await target.request('fire', { key: 'many', probe: `probe_${i}`, values: [i, `n${i}`] });
        assert.strictEqual(r.fired, i === 1 ? 0 : 1, `probe_${i}`);
      }
      await bt.waitFor(/probe_199 199 n199\n/);
      await bt.waitFor(/probe_0 0 n0\n/);
      await bt.waitFor(/probe_57 57 n57\n/);
    } finally {
      await bt.stop();
    }
    assert.ok(!/probe_1 /.test(bt.stdout));
  });

  it('one tracer attached by path covers processes started later, their worker threads, and GC churn', async function () {
    // No -p: attach to the file; every process mapping it is covered.
    const bt = await startBpftrace(['-e',
      `usdt:${lib}:nt_args:p_str { printf("PID %d TID %d %s\\n", pid, tid, str(arg0)); }`]);
    let later;
    try {
      await target.request('waitEnabled', { key: 'a', probe: 'p_str' });
      later = await Target.start({ env, execArgv: ['--expose-gc'] });
      // Same definition in another order: same file.
      await later.request('create', { key: 'a', provider: 'nt_args', probes: ARGS_PROBES.slice().reverse() });
      const st = (await later.request('enable', { key: 'a' })).status;
      assert.strictEqual(st.libraries[0], lib, 'same definition, same path in every process');
      await later.request('waitEnabled', { key: 'a', probe: 'p_str' });
      let r = await later.request('fire', { key: 'a', probe: 'p_str', values: ['from-later'] });
      assert.strictEqual(r.calls, 1);

      // A worker thread declaring the same provider by itself.
      const w = await later.request('worker', { provider: 'nt_args', probes: ARGS_PROBES, probe: 'p_str', values: ['from-worker'], times: 3 });
      assert.deepStrictEqual([w.calls, w.fired], [3, 3]);
      assert.deepStrictEqual(w.status.libraries, [lib]);

      // Providers created and dropped (and collected) in a loop.
      const churn = await later.request('churn', { rounds: 200, distinctEvery: 10 });
      assert.strictEqual(churn.fires, 0, 'nobody traces nt_churn');
      r = await later.request('fire', { key: 'a', probe: 'p_str', values: ['after-churn'] });
      assert.strictEqual(r.calls, 2);
      await target.request('fire', { key: 'a', probe: 'p_str', values: ['from-first'] });
      await bt.waitFor(/from-first\n/);
      await bt.waitFor(/after-churn\n/);
      await eventually(() => (bt.stdout.match(/from-worker/g) || []).length === 3);
    } finally {
      await bt.stop();
      if (later) await later.stop();
    }
    const workerTids = new Set([...bt.stdout.matchAll(new RegExp(`PID ${later.pid} TID (\\d+) from-worker`, 'g'))].map((m) => m[1]));
    assert.strictEqual(workerTids.size, 1);
    assert.ok(!workerTids.has(String(later.pid)), 'fired on the worker thread, not the main one');
    assert.match(bt.stdout, new RegExp(`PID ${later.pid} TID ${later.pid} from-later\n`));
    assert.match(bt.stdout, new RegExp(`PID ${target.pid} TID ${target.pid} from-first\n`));
    assert.match(bt.stdout, new RegExp(`PID ${later.pid} TID ${later.pid} after-churn\n`));
  });
});
