'use strict';
// `nodetrace loop`'s pure parts: the threshold, the parser on real bpftrace
// output (test/fixtures/bpftrace-loop-stacks.out), the text, JSON and folded
// renderings, and the plan.
const assert = require('assert');
const { splitAtEndMarker } = require('../lib/tracer/output-formats');
const fs = require('fs');
const path = require('path');
const { parseLoop, renderLoopText, renderLoopJSON, foldedStacks, frameName, lostStackSamples } = require('../lib/loop/report');
const { mapFullLines } = require('../lib/render/map-full');
const loop = require('../lib/commands/loop');

const FIXTURE = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-loop-stacks.out'), 'utf8');
const OPTIONS = { pid: 4242, tracer: 'bpftrace', overUs: 100000, top: 3, wallMinusMonoNs: 0n, stacksWanted: true };

describe('nodetrace loop, pure parts', function () {
  it('reads --over as a duration, a bare number in ms', function () {
    assert.strictEqual(loop.parseThreshold('100ms'), 100000);
    assert.strictEqual(loop.parseThreshold('1.5s'), 1500000);
    assert.strictEqual(loop.parseThreshold('500us'), 500);
    assert.strictEqual(loop.parseThreshold('250'), 250000);
    for (const bad of ['', 'fast', '-5ms', '0', '1e3', '10 minutes', '5h']) assert.strictEqual(loop.parseThreshold(bad), null, bad);
  });

  describe('on real output (200 ms busy-waits, a loaded host)', function () {
    const r = parseLoop(splitAtEndMarker(FIXTURE.split('\n')), { tracer: 'bpftrace' });

    it('reads every stall line, the histogram and the scalars', function () {
      assert.deepStrictEqual(r.stalls.map((s) => Number(s.busyUs)), [200230, 203961, 200619, 822196, 817193, 206342]);
      assert(r.stalls.every((s) => s.clock === 'mono'));
      assert.strictEqual(r.turns, 12n);
      assert.strictEqual(r.busyMaxUs, 822196n);
      const counted = r.busy.buckets.reduce((n, b) => n + b.count, 0n);
      assert.strictEqual(counted, r.turns, 'the histogram counts every turn');
      assert.strictEqual(r.early, null);
      assert.strictEqual(r.open, null);
    });

    it('reads the stacks, innermost frame first, most samples first, and names the busy-wait', function () {
      assert(r.stacks.length >= 1);
      assert(r.stacks[0].samples >= r.stacks[r.stacks.length - 1].samples);
      assert(r.stacks.some((s) => s.frames.some((f) => f.startsWith('JS:*spinTheLoop '))));
      for (const s of r.stacks) assert.match(s.frames[s.frames.length - 1], /__libc_start_call_main/);
    });

    it('lists the longest stalls first, at most --top, with the histogram', function () {
      const text = renderLoopText(r, OPTIONS);
      assert.match(text, /12 turns/);
      assert.match(text, /Stalls over 100 ms: 6, the 3 longest/);
      const listed = text.split('\n').filter((l) => /^ {2}\d\d:\d\d:\d\d\.\d{3} {2}/.test(l));
      assert.deepStrictEqual(listed.map((l) => l.trim().split(/\s+/).slice(1).join(' ')), ['822 ms', '817 ms', '206 ms']);
      assert.match(text, /131–262 ms \|@+ +4/);
      assert.match(text, /max 822 ms/);
      assert.match(text, /JS:\*spinTheLoop/);
    });

    it('turns monotonic times into wall-clock times with the offset given', function () {
      const offset = BigInt(Date.UTC(2026, 10, 23, 12, 0, 0)) * 1000000n - 2088101518836n;
      const json = JSON.parse(renderLoopJSON(r, { ...OPTIONS, wallMinusMonoNs: offset }));
      const first = json.stalls.find((s) => s.busy_us === 200230);
      assert.strictEqual(first.ended_at, '2026-11-23T12:00:00.000Z');
      assert.strictEqual(json.turns, 12);
      assert.strictEqual(json.busy.max, 822196);
      assert(json.busy.p50 <= json.busy.p90 && json.busy.p90 <= json.busy.p99 && json.busy.p99 <= 822196);
      assert.deepStrictEqual(json.stalls.map((s) => s.busy_us), [822196, 817193, 206342, 203961, 200619, 200230]);
      assert(json.stacks.length >= 1);
    });

    it('folds the stacks outermost first, offsets dropped, for flame graph tools', function () {
      const folded = foldedStacks(r.stacks, { processName: 'node' }).trim().split('\n');
      const total = r.stacks.reduce((n, s) => n + s.samples, 0);
      assert.strictEqual(folded.reduce((n, l) => n + Number(l.split(' ').pop()), 0), total);
      for (const line of folded) {
        assert.match(line, /^node;__libc_start_call_main;node::Start\(int, char\*\*\);/);
        assert.doesNotMatch(line, /\+\d+;|\+0x[0-9a-f]+;/);
      }
      assert(folded.some((l) => /;JS:\*spinTheLoop \/[^;]*loop-stall\.js:\d+:\d+(;| )/.test(l)));
    });

    it('27.11: a process name or frame holding ";", a line break or an escape forges no line and no frame', function () {
      const plain = foldedStacks(r.stacks, { processName: 'node' }).trim().split('\n');
      const hostile = r.stacks.map((s) => ({ ...s, frames: [...s.frames, 'f;g\nforged;x\x1b[2J'] }));
      const folded = foldedStacks(hostile, { processName: 'ev;il\nforged;st\x1b]0;t\x07' }).trim().split('\n');
      assert.strictEqual(folded.length, plain.length, 'one line per stack, as without');
      const depth = (l) => l.slice(0, l.lastIndexOf(' ')).split(';').length;
      assert.deepStrictEqual(folded.map(depth).sort(), plain.map((l) => depth(l) + 1).sort(), 'one frame more each, the hostile one');
      for (const line of folded) {
        assert(line.startsWith('ev il forged st\\x1b]0 t\\x07;'), line);
        // eslint-disable-next-line no-control-regex
        assert.doesNotMatch(line, /[\x00-\x1f\x7f]/);
      }
    });
  });

  it('drops offsets from frames, and nothing else', function () {
    assert.strictEqual(frameName('uv_run+756'), 'uv_run');
    assert.strictEqual(frameName('JS:*f /a.js:1:2+0x1f'), 'JS:*f /a.js:1:2');
    assert.strictEqual(frameName('0x7f3e27820b46'), '0x7f3e27820b46');
  });

  it('says a loop blocked since before tracing is blocked, not idle', function () {
    const text = 'Tracing the event loop of PID 7... Hit Ctrl-C to end.\nOPEN mono 546628626217 917427 1\nTracing ended.\n\n@traced_ns: 917457049\n@turns: 0\n';
    const r = parseLoop(splitAtEndMarker(text.split('\n')), { tracer: 'bpftrace' });
    assert.deepStrictEqual(r.open, { clock: 'mono', sinceNs: 546628626217n, busyUs: 917427n, sinceBeforeTrace: true });
    assert.match(renderLoopText(r, { ...OPTIONS, stacksWanted: false }),
      /never waited for I\/O while tracing: blocked for all 917 ms/);
    assert.strictEqual(JSON.parse(renderLoopJSON(r, OPTIONS)).open.since_before_trace, true);
  });

  it('gives the busy share of the time whole turns were seen in, not of the trace\'s length (turns go on while the probes detach)', function () {
    // A loop busy all the time, bpftrace 0.17: 3.08 s of turns in a trace of 3.00 s (by hand, 2026-11-28).
    const text = 'Tracing the event loop of PID 7... Hit Ctrl-C to end.\nTracing ended.\n\n@traced_ns: 3001000000\n@turns: 154\n@busy_total_us: 3076872\n@turns_ns: 3080051979\n';
    const r = parseLoop(splitAtEndMarker(text.split('\n')), { tracer: 'bpftrace' });
    assert.match(renderLoopText(r, { ...OPTIONS, stacksWanted: false }),
      /traced 3 s: 154 turns, busy 3\.1 s in them \(100% of the time\)/);
    assert.strictEqual(JSON.parse(renderLoopJSON(r, OPTIONS)).turns_ns, 3080051979);
  });

  it('reads a stack\'s second key, the hash of its JavaScript chain (0: none)', function () {
    const r = parseLoop({ maps: '@stall_stacks[\n        0x10000010\n        0x401000\n, -5]: 3\n@stall_stacks[\n        0x401000\n, 0]: 2\n' }, { tracer: 'bpftrace' });
    assert.deepStrictEqual(r.stacks.map((st) => [st.frames.length, st.samples, st.chain]), [[2, 3, '-5'], [1, 2, undefined]]);
  });

  it('counts the samples whose user stack bpftrace 0.17 lost as "[no stack]", and says them once (real capture)', function () {
    // test/fixtures/bpftrace-loop-no-ustack-0.17.out(.cmd): 9 samples of 50 ms stalls printed as "@stall_stacks[, 0]: 9".
    const text = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-loop-no-ustack-0.17.out'), 'utf8');
    const lr = parseLoop(splitAtEndMarker(text.split('\n')), { tracer: 'bpftrace' });
    const keys = (text.match(/^@stall_stacks\[/gm) || []).length;
    const printed = [...text.matchAll(/^(?:, -?\d+)?\]: (\d+)$|^@stall_stacks\[, -?\d+\]: (\d+)$/gm)]
      .reduce((n, m) => n + Number(m[1] || m[2]), 0);
    assert.strictEqual(lr.stacks.length, keys, 'every key read, the empty one too');
    assert.strictEqual(lr.stacks.reduce((n, s) => n + s.samples, 0), printed, 'every sample counted');
    assert.strictEqual(lostStackSamples(lr.stacks), 9);
    assert.deepStrictEqual(lr.stacks.filter((s) => s.lost).map((s) => s.frames), [['[no stack]']]);
    assert.match(foldedStacks(lr.stacks), /^node;\[no stack\] 9$/m);
    assert.strictEqual(lostStackSamples(parseLoop(splitAtEndMarker(FIXTURE.split('\n')), { tracer: 'bpftrace' }).stacks), 0, 'the other capture lost none');
    const tracer = (version) => ({ name: 'bpftrace', path: '/usr/bin/bpftrace', version });
    const planned = (version, stacks = true) => loop.plan({ pid: String(process.pid), over: '10ms', stacks, force: true },
      tracer(version)).details.boundedMaps;
    assert.deepStrictEqual(mapFullLines(planned('0.17.0'), { ustack: { refused: lostStackSamples(lr.stacks) } }), [
      'warning: 9 samples had no user stack: the tracer lost them from its map of stacks (131,072 places: it keeps no stack '
      + 'whose place another holds); they are counted, as "[no stack]"; trace for less time, '
      + 'or use bpftrace 0.25 or later, which keeps each stack with its sample']);
    assert.strictEqual(planned('0.27.1'), undefined, 'nothing to lose from 0.25');
    assert.strictEqual(planned('0.17.0', false), undefined, 'no stacks, no stack map');
  });

  it('plans bpftrace with the PID, the threshold and the stacks switch as arguments', function () {
    const tracer = { name: 'bpftrace', path: '/usr/bin/bpftrace', version: '0.17.0' };
    const p = loop.plan({ pid: String(process.pid), over: '50ms', stacks: true, force: true }, tracer);
    // A node whose V8 nodetrace knows: JSFunction's shared offset too (24 on V8 11, 32 after),
    // and its code's (48 on V8 10-11, 24 on 12; 0 from 13: what it inlined is not read).
    const major = Number(process.versions.v8.split('.')[0]);
    const shared = major <= 11 ? '24' : '32';
    const code = major <= 11 ? '48' : major === 12 ? '24' : '0';
    // TID: the main thread's, the PID, without --thread.
    assert.deepStrictEqual(p.argv.slice(-6), [String(process.pid), '50000', '1', String(process.pid), shared, code]);
    assert.match(p.argv[p.argv.length - 7], /d-scripts\/loop\.bt$/);
    assert.deepStrictEqual(loop.plan({ pid: String(process.pid), over: '50ms', force: true }, tracer).argv.slice(-4), [String(process.pid), '50000', '0', String(process.pid)], 'no stacks: no SHARED');
    // Raw user stacks, which nodetrace names (bpftrace would read the perf map itself).
    assert.strictEqual(p.env.BPFTRACE_NO_USER_SYMBOLS, '1');
    assert.strictEqual(loop.plan({ pid: String(process.pid), over: '50ms', stacks: true, force: true }, { ...tracer, version: '0.27.1' }).env.BPFTRACE_STACK_MODE, 'raw');
    assert.deepStrictEqual(loop.plan({ pid: String(process.pid), over: '50ms', force: true }, tracer).env, { __BPFTRACE_NOTIFY_PROBES_ATTACHED: '1' });
    assert.throws(() => loop.plan({ pid: '12x', over: '1s' }, tracer), /process ID/);
  });
});
