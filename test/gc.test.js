'use strict';
// `nodetrace gc`: finding V8's functions (pure, on a made-up process), then
// end to end @tracer against test/targets/gc-churn.js, which allocates
// steadily (scavenges) and forces a full GC every 500 ms (--expose-gc).
const assert = require('assert');
const { requireTracing, startTarget, stopTarget, nodetrace, killStragglers } = require('./support/harness');
const { locateGc, stepName, FIXED } = require('../lib/gc/v8-functions');
const { askTarget } = require('./support/ask-target');

const STEP_20 = '_ZN2v88internal18IncrementalMarking4StepEdNS0_10StepOriginE';
const STEP_24 = '_ZN2v88internal18IncrementalMarking4StepENS_4base9TimeDeltaEmNS0_10StepOriginE';

describe('nodetrace gc: V8\'s functions', function () {
  it('takes the one plain IncrementalMarking::Step, never a .cold clone', function () {
    assert.strictEqual(stepName([STEP_20, STEP_20]), STEP_20);
    assert.strictEqual(stepName([STEP_24, `${STEP_24}.cold`]), STEP_24);
    assert.strictEqual(stepName([`${STEP_24}.cold`]), null);
    assert.strictEqual(stepName([STEP_20, STEP_24]), null, 'two candidates: no guess');
  });

  // A process mapping node and Debian's libnode (which holds V8 there).
  function host({ inExe, names = Object.values(FIXED), steps = [STEP_24] }) {
    const maps = [
      '00400000-00500000 r-xp 00000000 fe:00 11 /usr/bin/node',
      '7f0000000000-7f0001000000 r-xp 00000000 fe:00 22 /usr/lib/x86_64-linux-gnu/libnode.so.108',
    ].join('\n');
    // What is read: the mapping in map_files (root may read it; a user not).
    const holder = inExe ? '/proc/7/map_files/400000-500000' : '/proc/7/map_files/7f0000000000-7f0001000000';
    return {
      maps: () => maps,
      exePath: () => '/usr/bin/node',
      findSymbols: (file, wanted) => ({ loads: [], found: new Map(file === holder ? wanted.filter((n) => names.includes(n)).map((n) => [n, { value: 1, size: 1 }]) : []) }),
      symbolNames: (file) => (file === holder ? steps : []),
    };
  }

  it('finds them in the executable (official builds) or in libnode (Debian\'s), as the process maps them', function () {
    // The tracer is given the mapped file itself, whatever the process's mount namespace.
    assert.strictEqual(locateGc(7, host({ inExe: true })).file, '/proc/7/map_files/400000-500000');
    const debian = locateGc(7, host({ inExe: false }));
    assert.deepStrictEqual([debian.object, debian.functions.incremental, debian.functions.scavenge],
      ['/usr/lib/x86_64-linux-gnu/libnode.so.108', STEP_24, FIXED.scavenge]);
  });

  it('says which are missing rather than trace part of the pauses', function () {
    const r = locateGc(7, host({ inExe: true, names: [FIXED['mark-compact']], steps: [] }));
    assert.match(r.missing, /^\/usr\/bin\/node defines V8's collector but not its scavenge, weak-first, weak-second, incremental functions$/);
    assert.match(locateGc(7, host({ inExe: true, names: [] })).missing, /no object of the process defines/);
  });
});

describe('nodetrace gc @tracer', function () {
  this.timeout(400000);
  before(function () { requireTracing(this); });
  afterEach(killStragglers);

  it('reports scavenges and the forced full GCs as mark-compact pauses @core', async function () {
    const FULL_MS = 500;
    const SECONDS = 6;
    const target = await startTarget('gc-churn.js', { args: ['--expose-gc'], env: { GC_FULL_MS: String(FULL_MS) } });
    try {
      // bpftrace 0.17 attaches uprobes to node slowly (a minute on a loaded host).
      const r = await nodetrace(['gc', '-p', String(target.pid), '-d', String(SECONDS), '--json'], { timeoutMs: 380000 });
      assert.strictEqual(r.code, 0, r.stderr);
      const json = JSON.parse(r.stdout);
      const kind = (name) => json.kinds.find((k) => k.name === name);
      assert(kind('scavenge') && kind('scavenge').count >= 3, r.stdout);
      const full = kind('mark-compact');
      assert(full, r.stdout);
      // The trace is what -d asked for (its timer may fire a few ms early
      // by another clock): from every probe attached to the end, not the tracer's run (it said 14.6 s for -d 6 on a loaded host
      // when it counted from BEGIN, before bpftrace 0.17 attached the uprobes).
      assert(json.traced_ns >= (SECONDS - 0.05) * 1e9 && json.traced_ns < (SECONDS + 0.5) * 1e9, `traced ${json.traced_ns / 1e9} s for -d ${SECONDS}`);
      // One forced full GC each FULL_MS; V8 may add its own. A timer fires
      // no sooner than its delay but may fire much later on a loaded host:
      // half of those due is the floor.
      const due = Math.floor((SECONDS * 1000) / FULL_MS);
      assert(full.count >= due / 2 && full.count <= due * 3 + 5,
        `${full.count} mark-compact pauses in ${json.traced_ns / 1e9} s traced, ${due} forced`);
      for (const k of json.kinds) {
        assert.strictEqual(k.histogram.reduce((n, b) => n + b.count, 0), k.count, `${k.name}: the histogram holds every pause`);
        assert(k.max_us >= k.p50_us && k.total_us >= k.max_us, JSON.stringify(k));
      }
    } finally {
      stopTarget(target);
    }
  });

  // 36.4: a Worker doing every collection read as if the main loop paused.
  it('a Worker that does all the collecting: its pauses are its own, by its thread id and TID, counted as its PerformanceObserver counts them', async function () {
    const SECONDS = 5;
    const target = await startTarget('gc-churn.js', { args: ['--expose-gc'], env: { GC_IN_WORKER: '1', GC_FULL_MS: '500' } });
    try {
      const ask = () => askTarget(target, 'gc', { fields: 4 }).then(([minor, major, tid, threadId]) => ({ minor, major, tid, threadId, at: Date.now() }));
      const before = await ask();
      const r = await nodetrace(['gc', '-p', String(target.pid), '-d', String(SECONDS), '--json'], { timeoutMs: 380000 });
      const after = await ask();
      assert.strictEqual(r.code, 0, r.stderr);
      const json = JSON.parse(r.stdout);
      assert.deepStrictEqual(json.threads.map((t) => [t.tid, t.role, t.label, t.worker]),
        [[after.tid, 'worker', `Worker ${after.threadId} "churn"`, { thread_id: after.threadId, name: 'churn' }]], r.stdout);
      // The Worker's own count over a window that holds the trace: no more
      // than it, and at least half its rate over the time traced.
      const window = (after.at - before.at) * 1e6;
      for (const [kind, seen] of [['scavenge', after.minor - before.minor], ['mark-compact', after.major - before.major]]) {
        const traced = json.threads[0].kinds.find((k) => k.name === kind);
        assert(traced, `no ${kind} in ${JSON.stringify(json.threads)}`);
        console.log(`      ${kind}: ${traced.count} traced in ${(json.traced_ns / 1e9).toFixed(1)} s; the Worker counted ${seen} in ${(window / 1e9).toFixed(1)} s around it`);
        assert(traced.count <= seen && traced.count >= 0.5 * seen * (json.traced_ns / window), `${traced.count} ${kind}s traced, ${seen} counted by the Worker`);
        assert.strictEqual(traced.count, json.kinds.find((k) => k.name === kind).count, 'one thread: its pauses are all of them');
      }
      const text = await nodetrace(['gc', '-p', String(target.pid), '-d', '2'], { timeoutMs: 380000 });
      assert.match(text.stdout, new RegExp(`^All of them in Worker ${after.threadId} "churn" \\(TID ${after.tid}\\), which collects its own heap: the main thread did not pause\\.$`, 'm'), text.stdout);
    } finally {
      stopTarget(target);
    }
  });

  it('says in one line that a process is not Node, with a non-zero exit', async function () {
    const r = await nodetrace(['gc', '-p', '1', '-d', '1']);
    assert.notStrictEqual(r.code, 0);
    assert.match(r.stderr, /not a Node process/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  });
});
