'use strict';
// `nodetrace latency` end to end @tracer: the real bpftrace against real
// workloads (the article's sqlite3 loop, a crypto.pbkdf2 loop), asserting on
// what was really traced.
const assert = require('assert');
const path = require('path');
const { ROOT, requireTracing, startTarget, stopTarget, nodetrace, traceWindow, killStragglers } = require('./support/harness');

const SQLITE_KINDS = ['Work_BeginOpen', 'Work_BeginExec', 'Work_BeginClose', 'Work_BeginPrepare', 'Work_BeginRun'];
// N-API's plumbing, which must never name a kind: work whose creation was
// not seen is left out.
const PLUMBING = /napi_queue_async_work|ThreadPoolWork::ScheduleWork/;
const names = (kinds) => kinds.map((k) => `${k.name} (${k.count})`).join(', ');
// One trace, start to end: bpftrace reads node's symbols (CPU-bound) and
// attaches and detaches each uprobe (an RCU grace period each), all slower
// on a loaded host: 47 s for -d 3 at a load of 19 on 2 cores, 8 s idle.
const TRACE_BOUND_MS = 110000;

describe('nodetrace latency @tracer', function () {
  this.timeout(TRACE_BOUND_MS + 10000);
  before(function () { requireTracing(this); });
  afterEach(killStragglers);

  describe('on the sqlite3 loop, with a crypto loop under the same node binary beside it @core', function () {
    let target;
    let other;
    let json;
    // One trace, its JSON asserted; the text rendering of the same report is
    // checked on a capture (test/format-command.test.js).
    before(async function () {
      // A uprobe fires in every process that maps the binary: the other
      // process's work must not show up in this one's trace.
      other = await startTarget('crypto-loop.js');
      target = await startTarget('sqlite-loop.js');
      const j = await nodetrace(['latency', '-p', String(target.pid), '-d', '3', '--json'], { timeoutMs: TRACE_BOUND_MS });
      assert.strictEqual(j.code, 0, j.stderr);
      json = JSON.parse(j.stdout);
    });
    after(() => { stopTarget(target); stopTarget(other); });

    it('holds only the target\'s own kinds', function () {
      assert(!json.kinds.some((k) => /pbkdf2|PBKDF2|CryptoJob/.test(k.name)), `the crypto loop's work leaked in: ${names(json.kinds)}`);
    });

    it('names the five N-API kinds by the add-on function that created the work, and nothing after N-API\'s plumbing', function () {
      for (const kind of SQLITE_KINDS) {
        const found = json.kinds.find((k) => k.name.includes('::' + kind + '('));
        assert(found, `no kind named ${kind} in ${json.kinds.map((k) => k.name).join(', ')}`);
        assert(found.count > 50, `${kind}: only ${found.count} operations in 3 s`);
      }
      assert(!json.kinds.some((k) => PLUMBING.test(k.name)), `a kind named after N-API's plumbing: ${names(json.kinds)}`);
    });

    it('reports plausible latencies, percentiles in order and a breakdown that fits the total', function () {
      for (const k of json.kinds.filter((k) => SQLITE_KINDS.some((s) => k.name.includes(s)))) {
        assert.strictEqual(k.unit, 'us');
        assert(k.p50 > 0 && k.p50 < 100000, `${k.name}: p50 ${k.p50} us is not plausible for an in-memory sqlite op`);
        assert(k.p50 <= k.p90 && k.p90 <= k.p99, `${k.name}: percentiles out of order`);
        assert(k.max >= k.p99 * 0.5, `${k.name}: max ${k.max} below p99 ${k.p99}; kinds: ${json.kinds.map((x) => x.name + '=' + x.max).join(', ')}`);
        const h = k.histogram.reduce((n, b) => n + Number(b.count), 0);
        assert.strictEqual(h, k.count, 'histogram counts add up to the total count');
        for (const part of ['queue_wait', 'run', 'loop_wait']) {
          assert(k.breakdown[part], `${k.name}: no ${part}`);
          assert(k.breakdown[part].p50 <= k.p99, `${k.name}: ${part} p50 exceeds the total's p99`);
        }
      }
    });

    it('traced the window asked for, -d 3, as its header says it to a tenth of a second', function () {
      // The trace asked for (-d 3, from the probes in place to the end), not
      // the tracer's whole run with its attach and detach: the figure the
      // text header prints (lib/commands/latency.js, one decimal).
      const traced = Number((json.traced_ns / 1e9).toFixed(1));
      assert(traced >= 3 && traced < 3.5, `traced ${traced} s for -d 3`);
    });
  });

  // crypto.pbkdf2 named so, from CryptoJob<PBKDF2Traits>, on this
  // machine's node: test/node-builds.test.js, on every build. Here, what
  // the two options that change the report do, a trace each.
  it('--symbols names Node\'s own crypto.pbkdf2 work by its C++ function, and only the target\'s', async function () {
    const target = await startTarget('crypto-loop.js');
    const other = await startTarget('sqlite-loop.js');
    try {
      const raw = await nodetrace(['latency', '-p', String(target.pid), '-d', '2', '--json', '--symbols'], { timeoutMs: TRACE_BOUND_MS });
      assert.strictEqual(raw.code, 0, raw.stderr);
      const kinds = JSON.parse(raw.stdout).kinds;
      const pbkdf2 = kinds.filter((k) => /PBKDF2Traits/.test(k.name));
      assert(pbkdf2.length, names(kinds));
      assert(pbkdf2.reduce((n, k) => n + k.count, 0) > 5, names(kinds));
      assert(!kinds.some((k) => k.name === 'crypto.pbkdf2'), `named for users despite --symbols: ${names(kinds)}`);
      assert(!kinds.some((k) => /sqlite3/.test(k.name)), `the sqlite3 loop's work leaked in: ${names(kinds)}`);
    } finally {
      stopTarget(target);
      stopTarget(other);
    }
  });

  it('traces a command started with -c until it exits, naming kinds after it is gone, and only its own @core', async function () {
    // bpftrace names usym() keys when it prints, from the live process; the
    // command is gone by then, so nodetrace names them from the maps it kept.
    const other = await startTarget('crypto-loop.js');
    let r;
    try {
      r = await nodetrace(['latency', '-c', `${process.execPath} test/targets/sqlite-loop.js`, '--json'],
        { env: { SECONDS: '4' }, timeoutMs: TRACE_BOUND_MS });
    } finally {
      stopTarget(other);
    }
    assert.strictEqual(r.code, 0, r.stderr);
    const kinds = JSON.parse(r.stdout).kinds;
    assert(kinds.some((k) => k.name.includes('Work_BeginOpen')), r.stdout.slice(0, 500));
    assert(!kinds.some((k) => /PBKDF2|CryptoJob/.test(k.name)), `the crypto loop's work leaked in: ${names(kinds)}`);
    // The command's own output is shown, not parsed: on stderr beside --json.
    assert.match(r.stderr, /^ready \d+$/m);
  });

  // One process running the sqlite3 loop and, beside it (-r), the
  // crypto.pbkdf2 loop, traced with --addons-only until it exits.
  describe('--addons-only on the sqlite3 and crypto.pbkdf2 loops, the target exiting mid-trace', function () {
    let target;
    let r;
    before(async function () {
      // It exits 2 s after the probes are in place (its own time would have
      // to outlast attaching on a loaded machine).
      target = await startTarget('sqlite-loop.js', { args: ['-r', path.join(ROOT, 'test', 'targets', 'crypto-loop.js')] });
      r = await nodetrace(['latency', '-p', String(target.pid), '-d', '30', '--addons-only'], {
        timeoutMs: TRACE_BOUND_MS,
        onSpawn: (child) => child.stderr.on('data', (c) => {
          if (/tracing PID/.test(c)) setTimeout(() => target.kill('SIGTERM'), 2000);
        }),
      });
    });
    after(() => stopTarget(target));

    it('prints what was gathered, and exits 0', function () {
      assert.strictEqual(r.code, 0, r.stderr);
      assert.match(r.stderr, /exited/);
      assert.match(r.stdout, /^Thread-pool latency of .*, traced \d+\.\d s:$/m);
      assert.match(r.stdout, /Work_BeginExec/);
    });

    it('--addons-only hides Node\'s own crypto.pbkdf2 work, the add-on\'s shown', function () {
      assert.match(r.stdout, /Work_BeginExec/);
      assert.doesNotMatch(r.stdout, /pbkdf2|PBKDF2|CryptoJob/);
    });
  });

  it('on SIGINT (Ctrl-C), counts the operations started in its window, as the target does, by the thread that queued them, and reports before detaching @core', async function () {
    const SECONDS = 3;
    // The main thread's fs.stat loop, and a Worker's fs.lstat loop on the same pool (36.2).
    const target = await startTarget('fs-loop.js', { env: { WORKER: 'lstat-loop' } });
    const worker = JSON.parse(/^worker (\{.*\})$/m.exec(target.startOutput)[1]);
    try {
      // The target marks the same window (SIGUSR2: "started N at NS", its
      // fs.stat calls so far and when; test/support/harness.js).
      const r = await traceWindow(['latency', '-p', String(target.pid), '--json'], target, {
        seconds: SECONDS, timeoutMs: TRACE_BOUND_MS,
        truth: (said) => {
          const m = [...said.matchAll(/^started (\d+) at (\d+)$/gm)];
          const w = [...said.matchAll(/^worker started (\d+)$/gm)];
          if (m.length < 2 || w.length < 2) return null;
          return { started: Number(m[1][1]) - Number(m[0][1]), ns: Number(m[1][2]) - Number(m[0][2]),
            inWorker: Number(w[1][1]) - Number(w[0][1]) };
        },
      });
      assert.strictEqual(r.code, 0, r.stderr);
      const json = JSON.parse(r.stdout);
      const stat = json.kinds.find((k) => k.name === 'fs.stat');
      assert(stat, names(json.kinds));
      // The marks reach the target some ms after the window opens and
      // before it closes (more on a loaded host: nodetrace and the test
      // wake up late), so the target's count is taken over the window the
      // program says it counted over, at the target's own rate: within 2%
      // (and the last two calls may still run when it closes). Counting on
      // while the probes were detached (2 s on bpftrace 0.17 after the end
      // asked for) gave 7% more in 6-8 s traces (issue 36), 11% here.
      const { started, ns } = r.truth;
      const due = (started * json.traced_ns) / ns;
      assert(Math.abs(stat.count - due) <= due * 0.02 + 2,
        `${stat.count} fs.stat traced in ${json.traced_ns / 1e9} s; the target started ${started} in ${ns / 1e9} s between its marks, ${Math.round(due)} at that rate`);
      assert(json.traced_ns >= (SECONDS - 0.15) * 1e9 && json.traced_ns < (SECONDS + 0.5) * 1e9, `traced ${json.traced_ns / 1e9} s for ${SECONDS} s between the marks`);
      assert.strictEqual(r.tracerAtReport, true, 'the report came while the tracer was still there (before it detached its probes)');
      // By thread: the main thread's fs.stat and the Worker's fs.lstat, each
      // thread's count the operations its own loop queued, the Worker named
      // by its threadId and name; the Worker's held to its own count as the
      // main thread's is above.
      const lstat = json.kinds.find((k) => k.name === 'fs.lstat');
      assert(lstat, names(json.kinds));
      const byTid = Object.fromEntries(json.threads.map((t) => [t.tid, t]));
      const ascending = (list) => list.sort((a, b) => a - b);
      assert.deepStrictEqual(ascending(Object.keys(byTid).map(Number)), ascending([target.pid, worker.tid]),
        JSON.stringify(json.threads));
      const main = byTid[target.pid];
      const inWorker = byTid[worker.tid];
      assert.deepStrictEqual([main.role, main.label], ['main', 'main thread']);
      assert.deepStrictEqual([inWorker.role, inWorker.label, inWorker.worker],
        ['worker', `Worker ${worker.threadId} "lstat-loop"`, { thread_id: worker.threadId, name: 'lstat-loop' }]);
      // bpftrace reads each map when it prints it, after the window closed:
      // an operation still in flight then (two a thread here) may be in one
      // map and not yet in another.
      assert(Math.abs(main.count - stat.count) <= 2, `main thread ${main.count}, fs.stat ${stat.count}`);
      assert(Math.abs(inWorker.count - lstat.count) <= 2, `Worker ${inWorker.count}, fs.lstat ${lstat.count}`);
      const dueInWorker = (r.truth.inWorker * json.traced_ns) / ns;
      assert(Math.abs(inWorker.count - dueInWorker) <= dueInWorker * 0.02 + 2,
        `${inWorker.count} fs.lstat traced on the Worker in ${json.traced_ns / 1e9} s; it started ${r.truth.inWorker} in ${ns / 1e9} s between the marks, ${Math.round(dueInWorker)} at that rate`);
      assert(main.total_us > 0 && inWorker.total_us > 0, JSON.stringify(json.threads));
    } finally {
      stopTarget(target);
    }
  });
});
