'use strict';
// lib/tracer/session.js: how a tracer is started, ended and judged. The
// tracers here are small scripts acting out how real ones behave (see
// test/support/deaf-tracer.js): bpftrace 0.17 misses a signal that lands
// while it is not blocked in epoll_wait (CI saw `latency -d 2` hang until
// killed), and a second SIGINT kills it while it prints its maps.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { TracerSession, abnormalEnd, QUIESCE_TIMEOUT_MS, REPORT_TIMEOUT_MS, tracedSpanMs, spanNs } = require('../lib/tracer/session');
const { renderPlan, BATCH_QUIESCE } = require('../lib/tracer/plan');
const { blockedWritingOutput, writesTo, callOf } = require('../lib/tracer/blocked-output');

const DEAF = path.join(__dirname, 'support', 'deaf-tracer.js');
// A session that gives up on a tracer must end in about its own timers'
// time; nothing promises how long starting and ending node take on a host
// busy with other tests, so the bounds below allow this much beyond them.
const LOADED_HOST_SLACK_MS = 4000;

// A plan that runs `node <script>` as if it were the named tracer.
function fakePlan(tracerName, script = DEAF, extra = {}) {
  return {
    tracer: { name: tracerName, path: process.execPath, version: 'test' },
    script: 'fake', scriptFile: script, programText: null, launcher: [],
    argv: [script], env: {}, files: [], links: [], outputFile: null, describe: 'a fake tracer', notes: [],
    ...extra,
  };
}

function run(plan, o = {}) {
  return new TracerSession(plan, { durationSeconds: 0.3, statusStream: null, ...o }).run();
}

describe('TracerSession: ending a tracer', function () {
  this.timeout(20000);

  it('bpftrace: says it again until the END marker shows, then lets the maps print whole', async function () {
    const r = await run(fakePlan('bpftrace'));
    assert.strictEqual(r.code, 0, `ended by ${r.signal}`);
    assert.strictEqual(r.endReason, 'duration');
    assert.match(r.maps, /^\n*@a: 1\n@b: 2\n@c: 3\n$/, 'the maps after the END marker, whole');
    assert.deepStrictEqual(r.errors, [], 'nothing sent after the marker');
    assert.strictEqual(abnormalEnd(r, fakePlan('bpftrace')), null, 'a clean end');
  });

  it('bpftrace: sends one signal only once the marker shows, however long the maps take', async function () {
    const r = await run(fakePlan('bpftrace', DEAF, { env: { DEAF_TRACER_HEARS_FIRST: '1' } }));
    assert.strictEqual(r.code, 0, `ended by ${r.signal}`);
    assert.match(r.maps, /@c: 3\n$/);
    assert.deepStrictEqual(r.errors, [], 'nothing sent after the marker');
  });

  it('bpftrace: says it no more once its probes are being detached (a second signal then loses END\'s output)', async function () {
    const slow = path.join(__dirname, 'support', 'slow-detach-tracer.js');
    // Its probes: its descriptors of /dev/null, as bpftrace's perf events are counted.
    const probes = (pid) => {
      let n = 0;
      for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
        try { if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === '/dev/null') n++; } catch { /* closed */ }
      }
      return n;
    };
    const r = await run(fakePlan('bpftrace', slow), { attachProgress: probes });
    assert.strictEqual(r.code, 0, `ended by ${r.signal}`);
    assert.strictEqual(r.endMarkerSeen, true, 'END\'s output came');
    assert.match(r.maps, /@a: 1\n$/);
  });

  it('DTrace (which takes a second signal as impatience): signals once', async function () {
    // The deaf tracer misses that one signal, so it is still running after
    // a while: end it by hand and check it was never told twice.
    let child = null;
    const pending = run(fakePlan('dtrace'), { onSpawn: (c) => { child = c; } });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    assert(child.exitCode === null, 'a missed signal is not repeated');
    child.kill('SIGTERM'); // the second signal it hears: it ends and prints
    const r = await pending;
    assert.strictEqual(r.code, 0);
    assert.match(r.maps, /@c: 3\n$/);
  });
});

describe('TracerSession: a tracer blocked writing to nodetrace when the end is due', function () {
  this.timeout(20000);
  const script = path.join(__dirname, 'support', 'eintr-tracer.pl');
  const plan = () => fakePlan('bpftrace', script, { tracer: { name: 'bpftrace', path: '/usr/bin/perl', version: 'test' } });
  // nodetrace's event loop held (here: this process's), as a SIGSTOP or a
  // long piece of work holds it: the tracer fills the socket and blocks.
  const holdThisLoop = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

  it('is told to end once it is not blocked, so its END output comes (bpftrace 0.24+ loses it to a cut write)', async function () {
    let child = null;
    let blockedAfterHold = null;
    const r = await run(plan(), {
      durationSeconds: 1,
      onSpawn: (c) => { child = c; },
      onReady: () => {
        // Held across the end, outside the poll phase (as a SIGSTOP leaves
        // libuv's poll with its timeout past): -d's timer, late, fires first
        // in the next turn of the loop, before the poll reads the socket.
        setTimeout(() => setImmediate(() => {
          holdThisLoop(1500);
          blockedAfterHold = blockedWritingOutput(child.pid);
        }), 500);
        // And for a moment after that timer (due with it, set after it), so
        // that a signal it sent lands while the write is still blocked,
        // whichever CPU the tracer wakes on.
        setTimeout(() => holdThisLoop(100), 1000);
      },
    });
    assert.strictEqual(blockedAfterHold, true, 'the tracer was blocked writing when the end came (else this tests nothing)');
    assert.strictEqual(r.code, 0, `ended by ${r.signal}`);
    assert.strictEqual(r.endMarkerSeen, true, 'END\'s output came');
    const events = r.during.filter((l) => /^EVENT \d+$/.test(l)).length;
    assert.strictEqual(Number(/^@events: (\d+)$/m.exec(r.maps)[1]), events, 'every line it wrote was read');
    assert.strictEqual(abnormalEnd(r, plan()), null, 'a clean end');
  });
});

describe('lib/tracer/blocked-output.js: a thread asleep writing to nodetrace', function () {
  const fixture = (name) => fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');

  it('reads bpftrace 0.27 asleep in write(1, ...) as blocked on its stdout', function () {
    const text = fixture('proc-syscall-bpftrace-blocked-write.txt');
    assert.deepStrictEqual(callOf(text), { nr: 1, fd: 1 });
    assert.strictEqual(writesTo(text, [1, 2], 'x64'), true);
    assert.strictEqual(writesTo(text, [2], 'x64'), false, 'stdout not ours (a -c command\'s): not waited on');
    assert.strictEqual(writesTo(text, [1, 2], 'arm64'), false, 'call numbers are the architecture\'s');
  });

  it('reads a running thread, and one asleep in another call, as not blocked', function () {
    assert.strictEqual(callOf(fixture('proc-syscall-running.txt')), null);
    assert.strictEqual(writesTo(fixture('proc-syscall-running.txt'), [1, 2], 'x64'), false);
    assert.deepStrictEqual(callOf(fixture('proc-syscall-sleep.txt')), { nr: 230, fd: 0 });
    assert.strictEqual(writesTo(fixture('proc-syscall-sleep.txt'), [1, 2], 'x64'), false);
  });

  it('tells nothing on an architecture it does not know, and of a process gone', function () {
    assert.strictEqual(blockedWritingOutput(process.pid, [1, 2], 'mips'), false);
    assert.strictEqual(blockedWritingOutput(2 ** 22 + 1), false);
  });
});

describe('TracerSession: ending a tracer that streams events (plan.quiesce)', function () {
  this.timeout(20000);
  const script = path.join(__dirname, 'support', 'discarding-tracer.js');
  const quiesce = BATCH_QUIESCE;

  it('stops the events first, ends the tracer once it says so, and does not pass that line on', async function () {
    const r = await run(fakePlan('bpftrace', script, { quiesce }));
    assert.strictEqual(r.code, 0);
    assert.deepStrictEqual(r.errors, [], 'nothing discarded');
    assert(!r.during.includes('Tracing stopped.') && !r.maps.includes('Tracing stopped.'), 'the line is taken, not shown');
    const last = Number(/^E (\d+)$/.exec(r.during[r.during.length - 1])[1]);
    assert.strictEqual(Number(/^@records: (\d+)$/m.exec(r.maps)[1]), last, 'every event emitted was read');
  });

  it('ends the tracer anyway when the line never comes', async function () {
    const started = Date.now();
    const r = await run(fakePlan('bpftrace', script, { quiesce, env: { DISCARDING_TRACER_DEAF: '1' } }));
    assert.strictEqual(r.code, 0);
    assert.match(r.errors.join('\n'), /discarded events/);
    const bound = 300 + QUIESCE_TIMEOUT_MS + LOADED_HOST_SLACK_MS;   // -d 0.3 s, then the give-up
    assert(Date.now() - started < bound, `took ${Date.now() - started} ms`);
  });
});

describe('TracerSession: a streaming program\'s report, once it is quiet (plan.quiesce, onReport)', function () {
  this.timeout(20000);
  const script = path.join(__dirname, 'support', 'discarding-tracer.js');
  const quiesce = BATCH_QUIESCE;

  it('is handed over with every event read, before the tracer is told to end, and its detach comes after', async function () {
    const events = [];
    let reported = null;
    const r = await run(fakePlan('bpftrace', script, { quiesce, env: { DISCARDING_TRACER_DETACH_MS: '1000' } }), {
      onLine: (l) => { if (/^E \d+$/.test(l)) events.push(l); },
      onReport: (res) => { reported = { at: Date.now(), events: events.length, ended: res.endMarkerSeen }; },
    });
    assert.strictEqual(r.code, 0);
    assert.deepStrictEqual(r.errors, [], 'nothing discarded: the tracer was ended after it was quiet');
    assert.strictEqual(r.reported, true);
    assert.strictEqual(reported.ended, false, 'handed over before END ran');
    const last = Number(/^E (\d+)$/.exec(events[reported.events - 1])[1]);
    assert.strictEqual(last, reported.events, 'every event it emitted was read by then');
    assert.strictEqual(events.length, reported.events, 'what it printed after the report is not taken');
    assert.strictEqual(r.endAfterReport, true, 'END ran after it');
    assert.strictEqual(abnormalEnd(r, fakePlan('bpftrace', script, { quiesce })), null, 'a clean end');
    assert(r.endedAt - reported.at >= 900, `the tracer's exit (1 s after its end) came after the report: ${r.endedAt - reported.at} ms`);
  });

  it('without onReport, the tracer is ended first and the result taken at its exit', async function () {
    const r = await run(fakePlan('bpftrace', script, { quiesce }));
    assert.strictEqual(r.reported, false);
    assert.match(r.maps, /^@records: \d+\n$/);
  });
});

describe('TracerSession: a program\'s window (plan.window)', function () {
  this.timeout(20000);
  const script = path.join(__dirname, 'support', 'windowed-tracer.js');
  const window = { signal: 'SIGURG', line: 'Report printed.', opened: 'Window opened.' };
  // Its probes: its descriptors of /dev/null, as bpftrace's perf events are counted.
  const probes = (pid) => {
    let n = 0;
    for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
      try { if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === '/dev/null') n++; } catch { /* closed */ }
    }
    return n;
  };
  const sent = (r) => r.errors.map((l) => /^(\w+)(?: \d)? at (\d+)$/.exec(l)).filter(Boolean)
    .map((m) => [m[1], Number(m[2])]);
  // When the fake tracer said its window was open (its stderr: "opened at T").
  const openedAt = (r) => (sent(r).find(([s]) => s === 'opened') || [])[1];

  it('opens it once the probes are attached, and hands the report over at its marker, before the tracer detaches', async function () {
    let reported = null;
    let child = null;
    let atReady = 0;
    const r = await run(fakePlan('bpftrace', script, { window }), {
      attachProgress: probes,
      onSpawn: (c) => { child = c; },
      onReady: () => { atReady = probes(child.pid); },
      onReport: (res) => { reported = { maps: res.maps, at: Date.now(), probes: probes(child.pid) }; },
    });
    assert.strictEqual(r.code, 0);
    assert.deepStrictEqual(sent(r).map(([s]) => s), ['SIGURG', 'opened', 'SIGURG', 'SIGTERM'], 'opened, closed, then ended once');
    assert.strictEqual(r.reported, true);
    assert.match(reported.maps, /^@a: 1\n@traced_ns: 5\n$/, 'the report, without its marker');
    assert.strictEqual(reported.probes, atReady, 'handed over with every probe still attached');
    const termAt = sent(r).find(([s]) => s === 'SIGTERM')[1];
    assert(reported.at <= termAt, 'the report came before the tracer was told to end');
    assert(r.endedAt - reported.at >= 1200, `the detach (4 x 400 ms) came after the report: ${r.endedAt - reported.at} ms`);
    assert.strictEqual(r.maps, '@a: 1\n@traced_ns: 5\n', 'what it printed at exit is not taken');
    assert.strictEqual(r.endAfterReport, true, 'END ran');
    assert.strictEqual(abnormalEnd(r, fakePlan('bpftrace')), null, 'a clean end');
    assert.strictEqual(spanNs(r, 5n), 5n, 'the program\'s window is the length');
  });

  it('starts the trace (onReady, -d) when the program says its window is open, not at the signal', async function () {
    let readyAt = 0;
    const r = await run(fakePlan('bpftrace', script, { window, env: { WINDOWED_TRACER_OPEN_MS: '600', WINDOWED_TRACER_DETACH_MS: '10' } }),
      { onReady: () => { readyAt = Date.now(); } });
    assert.strictEqual(r.code, 0);
    const [signalAt, saidAt, closedAt] = sent(r).map(([, at]) => at);
    assert(saidAt - signalAt >= 600 && openedAt(r) === saidAt, JSON.stringify(sent(r)));
    assert(readyAt >= saidAt, `onReady ${saidAt - readyAt} ms before the window was said open`);
    assert(closedAt - saidAt >= 300, `-d 0.3 s counted from the window's opening: closed ${closedAt - saidAt} ms after it`);
    assert(!r.during.includes('Window opened.'), 'the marker is taken, not passed on');
    assert.strictEqual(r.reported, true);
  });

  it('closes it only once it is said open when the end comes first (a second signal could merge with the first)', async function () {
    const session = new TracerSession(fakePlan('bpftrace', script, { window, env: { WINDOWED_TRACER_OPEN_MS: '500', WINDOWED_TRACER_DETACH_MS: '10' } }), {
      statusStream: null, onSpawn: () => {}, onLine: (line) => { if (line === 'Hit Ctrl-C to end.') setTimeout(() => session.end('SIGINT'), 100); },
    });
    const r = await session.run();
    const [first, said, second] = sent(r);
    assert.deepStrictEqual([first[0], said[0], second[0]], ['SIGURG', 'opened', 'SIGURG'], JSON.stringify(sent(r)));
    assert(second[1] >= said[1], 'closed after it was said open');
    assert.strictEqual(r.reported, true);
  });

  it('takes a report printed before it asked for the end as no end, and says so (not an empty report and exit 0)', async function () {
    let reported = null;
    const r = await run(fakePlan('bpftrace', script, { window, env: { WINDOWED_TRACER_EARLY_REPORT: '1', WINDOWED_TRACER_DETACH_MS: '10' } }),
      { onReport: (res) => { reported = { maps: res.maps, endRequested: res.endRequested }; } });
    assert.strictEqual(r.code, 0);
    assert.deepStrictEqual(sent(r).map(([s]) => s), ['SIGURG', 'opened', 'SIGURG', 'SIGTERM'], 'the window still closed when the end came');
    assert.strictEqual(reported.endRequested, true, 'the report handed over is the one asked for');
    assert.strictEqual(reported.maps, '@traced_ns: 5\n', 'the unasked report\'s lines are not mixed into it');
    assert.match(abnormalEnd(r, fakePlan('bpftrace')), /^bpftrace printed its program's report \d+ s after it attached, before nodetrace asked for it/);
  });

  it('ends the trace saying so when the program never says its window is open', async function () {
    let ready = false;
    const r = await run(fakePlan('bpftrace', script, { window, env: { WINDOWED_TRACER_OPEN_MS: 'never', WINDOWED_TRACER_DETACH_MS: '10' } }),
      { durationSeconds: 0, onReady: () => { ready = true; } });
    assert.strictEqual(ready, false, 'never said to be tracing');
    assert.strictEqual(r.windowNotOpened, true);
    assert.match(abnormalEnd(r, fakePlan('bpftrace')), /^bpftrace did not open its program's window within 5 s of the signal for it: nothing was counted/);
  });

  it('ends the tracer the old way when the report does not come, its maps taken after END', async function () {
    let reported = false;
    const started = Date.now();
    const r = await run(fakePlan('bpftrace', script, { window, env: { WINDOWED_TRACER_DEAF: '1', WINDOWED_TRACER_DETACH_MS: '10' } }),
      { onReport: () => { reported = true; } });
    assert.strictEqual(r.code, 0);
    assert.strictEqual(reported, false);
    assert.strictEqual(r.reported, false);
    assert.match(r.maps, /@a: 1\n$/);
    assert.notStrictEqual(spanNs(r, 5n), 5n, 'not the program\'s figure: the session\'s span');
    const bound = 300 + REPORT_TIMEOUT_MS + LOADED_HOST_SLACK_MS;
    assert(Date.now() - started < bound, `took ${Date.now() - started} ms`);
  });

  it('is not opened when the end comes before the probes are attached: the tracer is ended at once', async function () {
    // Ended once it has said it is attaching (its signal handlers are in place by then).
    const session = new TracerSession(fakePlan('bpftrace', script, { window, readyLine: 'never' }), {
      statusStream: null, attachTimeoutMs: 10000, onLine: (line) => { if (/^Attaching/.test(line)) session.end('SIGINT'); },
    });
    const r = await session.run();
    assert.strictEqual(sent(r)[0][0], 'SIGTERM', 'ended');
    assert(!sent(r).some(([s]) => s === 'SIGURG'), 'no window opened or closed');
    assert.strictEqual(r.ready, false);
  });
});

describe('TracerSession: knowing when the probes are attached', function () {
  this.timeout(20000);
  const script = path.join(__dirname, 'support', 'late-attach-tracer.js');

  it('bpftrace: ready at its attach notice, not at BEGIN\'s line, and the notice is not passed on', async function () {
    const { attachNotice } = require('../lib/tracer/capabilities');
    const notice = attachNotice({ name: 'bpftrace' });
    const plan = fakePlan('bpftrace', script, { env: notice.env, readyLine: notice.line });
    const r = await run(plan, { durationSeconds: 0.2 });
    const attachedAt = Number(/attached at (\d+)/.exec(r.during.join('\n'))[1]);
    assert(r.readyAt >= attachedAt, `ready ${attachedAt - r.readyAt} ms before the probes were attached`);
    assert(!r.during.includes(notice.line) && !r.errors.includes(notice.line), 'the notice is taken, not shown');
    assert.strictEqual(r.endReason, 'duration');
  });

  it('bpftrace plans ask for the notice, except with -o (the -c command shares that stdout)', function () {
    const { planTracer } = require('../lib/tracer/plan');
    const bpftrace = { name: 'bpftrace', path: '/usr/bin/bpftrace', version: '0.17.0' };
    const p = planTracer(bpftrace, { script: 'profile', pid: 1, args: { HZ: 99, PID: 1 } });
    assert.strictEqual(p.readyLine, '__BPFTRACE_NOTIFY_PROBES_ATTACHED');
    assert.strictEqual(p.env.__BPFTRACE_NOTIFY_PROBES_ATTACHED, '1');
    assert.strictEqual(planTracer(bpftrace, { script: 'profile', command: '/bin/true', outputFile: 'x', args: { HZ: 99, PID: 0 } }).readyLine, null);
    assert.strictEqual(planTracer({ name: 'dtrace', path: '/usr/sbin/dtrace', version: '2.0' }, { script: 'addon-latency', pid: 1 }).readyLine, null);
  });
});

describe('the trace\'s length as reports say it', function () {
  it('runs from every probe attached to the end asked for, not over the detach after it', function () {
    assert.strictEqual(tracedSpanMs({ readyAt: 1000, endRequestedAt: 4000, endedAt: 9000 }), 3000);
    assert.strictEqual(spanNs({ readyAt: 1000, endRequestedAt: 4000, endedAt: 9000 }), 3000000000n);
  });

  it('ends at the tracer\'s exit when no end was asked for (a -c command that ended)', function () {
    assert.strictEqual(tracedSpanMs({ readyAt: 1000, endRequestedAt: 0, endedAt: 2500 }), 1500);
  });

  it('is unknown when the tracer was never ready, and then the program\'s own figure stands', function () {
    assert.strictEqual(tracedSpanMs({ readyAt: 0, endRequestedAt: 0, endedAt: 2500 }), null);
    assert.strictEqual(spanNs({ readyAt: 0, endRequestedAt: 0, endedAt: 2500 }, 7n), 7n);
  });
});

describe('TracerSession: a tracer that dies is never a clean run', function () {
  this.timeout(20000);

  it('says so when the tracer is killed by a signal nodetrace did not send', async function () {
    const plan = fakePlan('bpftrace');
    let child = null;
    const r = await run(plan, { durationSeconds: 30, onSpawn: (c) => { child = c; }, onReady: () => setTimeout(() => child.kill('SIGKILL'), 100) });
    assert.strictEqual(r.signal, 'SIGKILL');
    assert.match(abnormalEnd(r, plan), /^bpftrace was killed by SIGKILL after \d+ s$/);
  });

  it('says so when the tracer exits without running its END clause', async function () {
    const script = path.join(__dirname, 'support', 'quitting-tracer.js');
    const plan = fakePlan('bpftrace', script);
    const r = await run(plan, { durationSeconds: 30 });
    assert.strictEqual(r.code, 0);
    assert.match(abnormalEnd(r, plan), /without running its END clause/);
  });

  it('gives up on a tracer that does not attach in time, and says how long it waited', async function () {
    const script = path.join(__dirname, 'support', 'hanging-tracer.js');
    const started = Date.now();
    const r = await run(fakePlan('bpftrace', script), { durationSeconds: 30, attachTimeoutMs: 500 });
    assert(Date.now() - started < 500 + LOADED_HOST_SLACK_MS, 'bounded');
    assert.strictEqual(r.ready, false);
    assert.strictEqual(r.attachTimedOut, true);
    assert.strictEqual(r.attachTimeoutMs, 500);
  });

  it('waits longer for a tracer that is still attaching probes, and says so when it stops making progress', async function () {
    const script = path.join(__dirname, 'support', 'hanging-tracer.js');
    const started = Date.now();
    // A probe more each 300 ms for 1.5 s, then none: progress starts the 500 ms bound again.
    const attachProgress = () => Math.min(5, Math.floor((Date.now() - started) / 300));
    const r = await run(fakePlan('bpftrace', script), { durationSeconds: 30, attachTimeoutMs: 500, attachProgress });
    const waited = Date.now() - started;
    assert(waited >= 1500 + 500, `gave up after ${waited} ms, while probes were still being attached`);
    assert(waited < 1500 + 500 + LOADED_HOST_SLACK_MS, 'bounded');
    assert.strictEqual(r.attachTimedOut, true);
    assert.strictEqual(r.probesAttached, 5);
    const { describeTracerFailure } = require('../lib/tracer/failure');
    assert.match(describeTracerFailure({ name: 'bpftrace' }, r).message, /^bpftrace made no progress attaching its probes for 1 s, so it was stopped/);
  });
});

describe('TracerSession: what a tracer said', function () {
  const { tracerComplaints } = require('../lib/tracer/tracer-stderr');

  it('keeps its errors, not its news, warnings or their program excerpts (bpftrace 0.27\'s stderr)', function () {
    const stderr = [
      'WARNING: Could not read functions from /sys/kernel/tracing/available_filter_functions. If this is expected, use --traceable-functions.',
      'WARNING: Unknown error -1: couldn\'t set RLIMIT_MEMLOCK for bpftrace.',
      'd-scripts/log-snoop.bt:120:1-80: WARNING: the predicate always holds',
      '/@on && ($8 == 0 || pid == $8 || pid == $9 || pid == $10 || pid == $11 ||',
      '    pid == $12 || pid == $13 || pid == $14 || pid == $15)/',
      '     ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~',
      '/work/main/d-scripts/log-snoop-whole.bt:64-65: WARNING: expanded from',
      '/@on && ($8 == 0 || pid == $8 || pid == $9 || pid == $10 || pid == $11 ||',
      '    pid == $12 || pid == $13 || pid == $14 || pid == $15)/',
      'Attached 8 probes',
      'd-scripts/x.bt:3:1-5: ERROR: something real',
      'uprobe:$1:f',
      '~~~~~~~~~~~',
    ];
    assert.deepStrictEqual(tracerComplaints(stderr), ['d-scripts/x.bt:3:1-5: ERROR: something real']);
    assert.deepStrictEqual(tracerComplaints(['Attached 8 probes']), []);
  });

  // bpftrace 0.27's stderr as above while it loads (the command not yet
  // run), then what node printed for a missing script, whose start was
  // missed (it ended within the moment), then a running command's lines.
  const LOADING = [
    'WARNING: Could not read functions from /sys/kernel/tracing/available_filter_functions. If this is expected, use --traceable-functions.',
    'd-scripts/log-snoop.bt:120:1-80: WARNING: the predicate always holds',
    '/@on && ($8 == 0 || pid == $8 || pid == $9 || pid == $10 || pid == $11 ||',
    '     ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~',
    '/work/main/d-scripts/log-snoop-whole.bt:64-65: WARNING: expanded from',
    '/@on && ($8 == 0 || pid == $8 || pid == $9 || pid == $10 || pid == $11 ||',
    '',
    'Attached 8 probes',
  ];
  const NODE_FAILED = ['node:internal/modules/cjs/loader:1210', '  throw err;', '  ^', '', 'Error: Cannot find module \'/tmp/x.js\''];

  it('sorts a stderr shared with a -c command: the tracer\'s messages and excerpts, then the command\'s lines', function () {
    const { StderrSorter } = require('../lib/tracer/tracer-stderr');
    const sorter = new StderrSorter();
    const whose = (lines, runs) => lines.map((l) => sorter.sort(l, runs));
    assert.deepStrictEqual(whose(LOADING, false), ['tracer', 'tracer', 'tracer', 'tracer', 'tracer', 'tracer', 'noise', 'tracer']);
    assert.deepStrictEqual(whose(NODE_FAILED, false), ['command', 'command', 'command', 'noise', 'command']);
    assert.deepStrictEqual(whose(['app: started', '', 'ERROR: failed to read', '  ^', 'dtrace: 3 drops on CPU 1'], true),
      ['command', 'command', 'tracer', 'command', 'tracer']);
  });

  it('does not take a running command\'s lines for an excerpt of a message it printed while loading', function () {
    const { StderrSorter } = require('../lib/tracer/tracer-stderr');
    const sorter = new StderrSorter();
    assert.strictEqual(sorter.sort('stdin:1:1-9: WARNING: unused', false), 'tracer');
    assert.strictEqual(sorter.sort('prog text', false), 'tracer');
    assert.strictEqual(sorter.sort('app: my own line', true), 'command');
  });
});

describe('TracerSession: private files', function () {
  it('makes them before the tracer starts, passes their paths, and removes them after', async function () {
    const script = path.join(__dirname, 'support', 'echo-args-tracer.js');
    const plan = fakePlan('bpftrace', script, {
      argv: [script, { temp: 'prog.bt' }, { temp: '*.so' }],
      files: [{ name: 'prog.bt', text: 'BEGIN {}\n' }],
      links: [{ name: '0.so', target: '/dev/null' }],
    });
    const r = await run(plan);
    const seen = JSON.parse(r.during.find((l) => l.startsWith('{')));
    assert.strictEqual(seen.program, 'BEGIN {}\n');
    assert.strictEqual(seen.link, '/dev/null');
    assert.strictEqual(seen.mode, 0o600);
    assert.match(seen.args[1], /\*\.so$/);
    assert(!fs.existsSync(path.dirname(seen.args[0])), 'the private directory is gone');
  });

  it('-o: what the tracer writes to its file is taken as it comes, not after it exits; readiness from readyWhen alone', async function () {
    const script = path.join(__dirname, 'support', 'file-writing-tracer.js');
    const plan = fakePlan('bpftrace', script, { argv: [script, '-o', { temp: 'out' }], outputFile: 'out' });
    const whileRunning = [];
    let session;
    let ticksAtReady = -1;
    session = new TracerSession(plan, {
      durationSeconds: 1.5,
      statusStream: null,
      // Ready once the first tick is in the file: BEGIN's line alone is no sign.
      readyWhen: () => whileRunning.some((l) => /^tick /.test(l)),
      onReady: () => { ticksAtReady = whileRunning.filter((l) => /^tick /.test(l)).length; },
      onLine: (l) => { if (session.running()) whileRunning.push(l); },
    });
    const r = await session.run();
    assert.strictEqual(r.code, 0, `ended by ${r.signal}`);
    assert(whileRunning[0].endsWith('Hit Ctrl-C to end.'), whileRunning[0]);
    // About 15 ticks over 1.5 s, read every 200 ms while it ran (a loaded host: at least 3).
    assert(whileRunning.filter((l) => /^tick /.test(l)).length >= 3, JSON.stringify(whileRunning));
    assert(ticksAtReady >= 1, 'ready when readyWhen said, not at BEGIN\'s line');
    assert(r.endMarkerSeen, 'the rest read at the end');
  });

  it('a -c command that ends between two looks of readyWhen: ready as of BEGIN\'s line, not a failed start', async function () {
    // bpftrace 0.27 with a command of a few ms (latency -c, CI 2026-11-28):
    // the command's start was never seen, BEGIN's line was read while it ran.
    const script = path.join(__dirname, 'support', 'file-writing-tracer.js');
    const plan = fakePlan('bpftrace', script, { argv: [script, '-o', { temp: 'out' }, '--exit-after', '600'], outputFile: 'out' });
    const session = new TracerSession(plan, { statusStream: null, readyWhen: () => false });
    const r = await session.run();
    assert.strictEqual(r.code, 0);
    assert.strictEqual(r.ready, true, 'the tracer got past BEGIN and ended as its program does');
    assert(r.readyAt > 0 && r.endedAt - r.readyAt >= 200, `ready ${r.endedAt - r.readyAt} ms before the end: when BEGIN's line was read`);
    assert(r.endMarkerSeen);
  });

  it('prints the same plan as a shell script for --dry-run', function () {
    const plan = fakePlan('bpftrace', DEAF, {
      argv: ['-o', { temp: 'out' }, DEAF], env: { A: 'b c' }, outputFile: 'out', launcher: ['/usr/bin/setpriv', '--pdeathsig', 'KILL', '--'],
      links: [{ name: '0.so', target: '/x/y.so' }],
    });
    const text = renderPlan(plan);
    assert.match(text, /^tmp=\$\(mktemp -d\)$/m);
    assert.match(text, /^ln -s \/x\/y\.so "\$tmp"\/0\.so$/m);
    assert.match(text, new RegExp(`^A='b c' /usr/bin/setpriv --pdeathsig KILL -- ${process.execPath.replace(/\//g, '\\/')} -o "\\$tmp"/out \\S+deaf-tracer\\.js$`, 'm'));
    assert.match(text, /^cat "\$tmp"\/out$/m);
    assert.match(text, /^rm -r "\$tmp"$/m);
  });
});
