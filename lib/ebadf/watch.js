'use strict';
// Runs one nodetrace ebadf session: the watchdog first, then the tracer; for
// each hit (the process is already stopped, in the kernel): snapshot its
// memory map, gcore it, SIGCONT it, confirm it runs, report; until --count
// hits, Ctrl-C, -d, or the target's exit.
//
// The tracer is spawned here rather than by lib/tracer/session.js because the
// watchdog must learn its PID the instant it exists: a tracer orphaned by a
// SIGKILLed nodetrace would go on stopping processes that no one resumes.
const fs = require('fs');
const { spawn } = require('child_process');
const { READY_MARKER, collectErrorLines } = require('../tracer/session');
const state = require('./procstate');
const { OutputParser } = require('./parse');
const { Symbolizer } = require('../symbolize');
const { Guard } = require('./guard');
const { runGcore } = require('./core');
const { renderHit } = require('./report');
const { writeDerivedProgram } = require('./program');

const STACK_WAIT_MS = 3000;
const STOP_CONFIRM_MS = 2000;
const ABORT_DEATH_WAIT_MS = 10000;
// After a SIGCONT, how long a PID found stopped again may wait for the hit that
// stopped it to arrive before it is told SIGCONT again.
const RESTOP_SETTLE_MS = 500;

function hrNow() { return process.hrtime.bigint(); }

// The kernel's clock (bpftrace nsecs) is CLOCK_MONOTONIC, as is hrtime.
function wallFromKernel(kernelNs) {
  return Date.now() - Number(hrNow() - kernelNs) / 1e6;
}

function readLimitCore(pid) {
  try {
    const m = /^Max core file size\s+(\S+)/m.exec(fs.readFileSync(`/proc/${pid}/limits`, 'utf8'));
    return m ? m[1] : null;
  } catch (err) {
    return null;
  }
}

function readLink(p) {
  try { return fs.readlinkSync(p); } catch (err) { return null; }
}

// Where the kernel writes the core of a process killed by SIGABRT.
function abortCoreNote(rec) {
  if (rec.coreLimit === '0') return 'none: its core size limit (ulimit -c) was 0; raise it next time with: prlimit --pid PID --core=unlimited';
  let pattern = '';
  try { pattern = fs.readFileSync('/proc/sys/kernel/core_pattern', 'utf8').trim(); } catch (err) { return null; }
  if (pattern.startsWith('|')) {
    const helper = pattern.slice(1).split(' ')[0];
    return `piped to ${helper}${/systemd-coredump/.test(helper) ? ` (coredumpctl info ${rec.hit.pid})` : ''}`;
  }
  if (/%[^pe%h]/.test(pattern)) return `per kernel.core_pattern "${pattern}"`;
  let name = pattern.replace(/%%|%p|%e|%h/g, (m) => ({ '%%': '%', '%p': String(rec.hit.pid), '%e': rec.hit.comm, '%h': require('os').hostname() }[m]));
  let usesPid = '0';
  try { usesPid = fs.readFileSync('/proc/sys/kernel/core_uses_pid', 'utf8').trim(); } catch (err) { /* default */ }
  if (usesPid === '1' && !pattern.includes('%p')) name += '.' + rec.hit.pid;
  const file = name.startsWith('/') ? name : (rec.cwd ? require('path').join(rec.cwd, name) : name);
  try {
    const st = fs.statSync(file);
    return `${file} (${require('./core').formatBytes(st.size)}, mode ${(st.mode & 0o777).toString(8)})`;
  } catch (err) {
    return `expected at ${file} (kernel.core_pattern "${pattern}"), not found: the kernel may have declined to write it`;
  }
}

/**
 * @param {object} o
 * @param {object} o.program from buildProgram()
 * @param {{pid?: number, name?: string}} o.filter
 * @param {number} o.count
 * @param {string} [o.coreDir] @param {string} [o.gcore] (stop mode)
 * @param {number} [o.durationSeconds] @param {number} o.gcoreTimeoutMs
 * @param {NodeJS.WritableStream} o.out report stream  @param {NodeJS.WritableStream} o.err messages
 * @param {string[]} [o.errnoNames] errno name by number, for display
 */
async function watch(o) {
  const mode = o.program.mode;
  const tracer = o.program.tracer;
  const symbolizer = new Symbolizer();
  const records = [];
  const queue = [];
  const result = {
    records, ready: false, interrupted: null, timedOut: false, targetExited: false, watchdogDied: false,
    gcoreFailed: false, tracerExit: null, errors: [], missedResumed: [], stillStopped: [],
  };
  const say = (text) => o.err.write(`nodetrace: ${text}\n`);

  // 1. The watchdog, before anything can be stopped.
  const guard = await Guard.start(o.filter);
  let derived = null;
  const stopAll = new AbortController();

  try {
    let args = o.program.args;
    if (o.program.derived) {
      derived = writeDerivedProgram(o.program);
      args = derived.args;
    }

    // 2. The tracer; the watchdog learns its PID at once.
    const child = spawn(tracer.path, args, { env: { ...process.env, ...o.program.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    if (child.pid) guard.send(`tracer ${child.pid}`);
    let tracerDone = false;
    let ending = null;
    // bpftrace 0.17 misses a signal that lands while it is not blocked in
    // epoll_wait (its handler sets a flag that the poll loop reads only when
    // epoll_wait is interrupted): ask again every second, with SIGTERM, which
    // it handles as SIGINT while tracing and ignores while printing its maps;
    // then insist. Its probes stay gated in the kernel (@hits < count) meanwhile.
    const endTracer = () => {
      if (tracerDone || ending || child.exitCode !== null || child.signalCode !== null) return;
      const t0 = Date.now();
      const nudge = () => {
        if (tracerDone || child.exitCode !== null || child.signalCode !== null) { clearInterval(ending); return; }
        const ms = Date.now() - t0;
        const sig = ms >= 8000 ? 'SIGKILL' : 'SIGTERM';
        try { child.kill(sig); } catch (err) { /* gone */ }
      };
      ending = setInterval(nudge, 1000);
      nudge();
    };
    guard.onDeath = () => {
      result.watchdogDied = true;
      say('the watchdog died; stopping now, for safety.');
      stopAll.abort();
      endTracer();
    };

    let lastSnapshot = null; // -p: the target's map, refreshed, for a target that dies at once (--abort)
    const kernelStopped = new Map();
    let pendingWork = Promise.resolve();
    let handled = 0;
    let hitsSeen = 0;

    const onHit = (hit) => {
      hitsSeen++;
      const rec = {
        n: hitsSeen, of: o.count, mode, hit, receivedHr: hrNow(),
        wallMs: hit.kernelNs != null ? wallFromKernel(hit.kernelNs) : hit.wallNs != null ? Number(hit.wallNs / 1000000n) : Date.now(),
        errnoName: (o.errnoNames || {})[hit.errno],
        beyondCount: hitsSeen > o.count,
      };
      if (mode === 'stop') guard.send(`stopped ${hit.pid}`);
      // While it is stopped (or dying): everything that needs the process.
      rec.snap = symbolizer.snapshot(hit.pid);
      if (!rec.snap.maps.length && lastSnapshot && lastSnapshot.pid === hit.pid) rec.snap = lastSnapshot;
      rec.exe = readLink(`/proc/${hit.pid}/exe`) || (lastSnapshot && lastSnapshot.exe) || null;
      rec.cwd = readLink(`/proc/${hit.pid}/cwd`) || o.targetCwd || null;
      rec.coreLimit = readLimitCore(hit.pid) || o.targetCoreLimit || null;
      rec.start = state.startTime(hit.pid);
      rec.isNode = rec.exe ? /(^|\/)(node|nodejs)[^/]*$/.test(rec.exe.replace(/ \(deleted\)$/, '')) || rec.snap.maps.some((m) => /\/libnode\.so/.test(m.path)) : false;
      rec.perfMap = rec.snap.perfMap;
      rec.stack = new Promise((resolve) => { rec.resolveStack = resolve; });
      records.push(rec);
      queue.push(rec);
      pendingWork = pendingWork.then(() => handle(rec));
    };

    const onStack = (ev) => {
      const rec = records.find((r) => r.hit.pid === ev.pid && !r.frames);
      if (!rec) return;
      rec.frames = ev.frames;
      rec.resolveStack(ev.frames);
    };

    const symbolize = async (rec) => {
      const frames = await Promise.race([rec.stack, new Promise((r) => setTimeout(() => r(null), STACK_WAIT_MS))]);
      if (!frames) { rec.stackMissing = true; return; }
      rec.symbolized = symbolizer.symbolize(rec.snap, frames);
      if (!rec.snap.maps.length && frames.some((f) => /^0x/.test(f))) {
        rec.symbolized.unavailable = 'addresses only: the process was gone before its memory map could be read';
      }
    };

    async function handleStop(rec) {
      const pid = rec.hit.pid;
      const stopped = await state.waitStopped(pid, STOP_CONFIRM_MS);
      if (!stopped) {
        rec.outcome = state.procState(pid) ? 'the process did not stop' : 'the process exited before it could be dumped';
      } else if (rec.beyondCount || stopAll.signal.aborted) {
        if (stopAll.signal.aborted) rec.outcome = 'nodetrace was stopping; resumed without a core';
      } else {
        rec.core = await runGcore({
          gcore: o.gcore, pid, comm: rec.hit.comm, dir: o.coreDir, timeoutMs: o.gcoreTimeoutMs, signal: stopAll.signal,
          onSpawn: (gchild, tmp) => { rec.gcorePgid = gchild.pid; guard.send(`gcore ${gchild.pid} ${tmp}`); },
        });
        if (rec.gcorePgid) guard.send(`gcore-done ${rec.gcorePgid}`);
      }
      // SIGCONT whatever happened above: gdb leaves a SIGSTOPped process stopped.
      // A newer hit may stop it again at once (--count > 1): leave that stop be.
      const laterHit = () => records.find((r) => r.hit.pid === pid && r.n > rec.n);
      const r = await state.resume([pid], { timeoutMs: 5000, restopped: () => Boolean(laterHit()), settleMs: RESTOP_SETTLE_MS });
      const resumedHr = hrNow();
      if (r.resumed.length) {
        const next = laterHit();
        // The watchdog must keep counting it as stopped while a later hit holds it.
        if (!next) guard.send(`resumed ${pid}`);
        rec.resumeText = next && state.procState(pid) === 'T'
          ? `yes, PID ${pid} ran on until hit ${next.n} stopped it again`
          : `yes, PID ${pid} is running again (state ${state.procState(pid) || 'gone'})`;
      } else if (r.gone.length) {
        guard.send(`resumed ${pid}`);
        rec.resumeText = `PID ${pid} is gone (it exited or was killed while stopped)`;
      } else {
        rec.resumeText = `NO: PID ${pid} is still stopped; run: kill -CONT ${pid}`;
        result.stillStopped.push(pid);
      }
      rec.stoppedMs = rec.hit.kernelNs != null ? Number(resumedHr - rec.hit.kernelNs) / 1e6 : (Date.now() - Number(rec.hit.wallNs / 1000000n));
      if (rec.core && !rec.core.ok) {
        result.gcoreFailed = true;
        stopAll.abort();
        endTracer();
      }
    }

    async function handleAbort(rec) {
      const pid = rec.hit.pid;
      const deadline = Date.now() + ABORT_DEATH_WAIT_MS;
      while (Date.now() < deadline) {
        const s = state.procState(pid);
        if (s === null || s === 'Z' || s === 'X' || !state.sameProcess(pid, rec.start)) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const s = state.procState(pid);
      rec.outcome = (s === null || s === 'Z' || !state.sameProcess(pid, rec.start))
        ? `PID ${pid} is gone: killed by SIGABRT at the failing call`
        : `PID ${pid} is still there ${Math.round(ABORT_DEATH_WAIT_MS / 1000)} s after SIGABRT (still dumping core, or it handles SIGABRT)`;
      rec.coreNote = abortCoreNote(rec);
    }

    async function handle(rec) {
      try {
        if (mode === 'stop') {
          // Symbolize while gcore runs; report when both are done.
          const sym = symbolize(rec);
          await handleStop(rec);
          await sym;
        } else {
          await symbolize(rec);
          await handleAbort(rec);
        }
      } catch (err) {
        rec.outcome = rec.outcome || `internal error: ${err.message}`;
        await state.resume(mode === 'stop' ? [rec.hit.pid] : []);
      }
      queue.splice(queue.indexOf(rec), 1);
      o.out.write((records.indexOf(rec) > 0 ? '\n' : '') + renderHit(rec));
      if (!rec.beyondCount) handled++;
      if (handled >= o.count) endTracer();
    }

    let durationTimer = null;
    const parser = new OutputParser((ev) => {
      if (ev.type === 'ready') {
        if (!result.ready) {
          result.ready = true;
          if (o.onReady) o.onReady();
          if (o.durationSeconds) durationTimer = setTimeout(() => { result.timedOut = true; endTracer(); }, o.durationSeconds * 1000);
        }
      } else if (ev.type === 'hit') onHit(ev.hit);
      else if (ev.type === 'stack') onStack(ev);
      else if (ev.type === 'stopped') kernelStopped.set(ev.pid, ev.kernelNs);
      else if (ev.type === 'line' && !/^Attaching \d+ probes?\.\.\.$|^@hits: \d+$/.test(ev.line)) result.errors.push(ev.line);
    });

    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => parser.push(d));
    const finishErrors = collectErrorLines(child.stderr, result.errors);

    // -p: notice the target's exit; refresh its map for --abort's sake.
    const poll = o.filter.pid ? setInterval(() => {
      const s = state.procState(o.filter.pid);
      if (s === null || s === 'Z') {
        if (!queue.length && !result.targetExited) { result.targetExited = true; endTracer(); }
      } else if (mode === 'abort' && s !== 'T') {
        const snap = symbolizer.snapshot(o.filter.pid);
        if (snap.maps.length) lastSnapshot = Object.assign(snap, { exe: readLink(`/proc/${o.filter.pid}/exe`) });
      }
    }, 500) : null;
    if (o.filter.pid && mode === 'abort') {
      const snap = symbolizer.snapshot(o.filter.pid);
      lastSnapshot = Object.assign(snap, { exe: readLink(`/proc/${o.filter.pid}/exe`) });
    }

    const onSignal = (sig) => {
      if (result.interrupted) return;
      result.interrupted = sig;
      stopAll.abort();   // a gcore in progress is killed, its process resumed
      endTracer();
    };
    const sigs = ['SIGINT', 'SIGTERM', 'SIGHUP'];
    for (const s of sigs) process.on(s, onSignal);

    const exit = await new Promise((resolve) => {
      child.on('error', (err) => { result.errors.push(`cannot run ${tracer.path}: ${err.code || err.message}`); resolve({ code: null, signal: null }); });
      child.on('close', (code, signal) => resolve({ code, signal }));
    });
    tracerDone = true;
    clearInterval(ending);
    guard.send('tracer-exited');
    finishErrors();
    parser.end();
    result.tracerExit = exit;
    clearTimeout(durationTimer);
    if (poll) clearInterval(poll);

    // 3. Every hit handled (stacks that never came are given up on).
    await pendingWork;
    for (const s of sigs) process.removeListener(s, onSignal);

    // 4. Belt and braces: anything the kernel stopped that we did not see
    //    (events lost at exit) is resumed too.
    if (mode === 'stop') {
      const seen = new Set(records.map((r) => r.hit.pid));
      const missed = [...kernelStopped.keys()].filter((pid) => !seen.has(pid));
      if (missed.length) {
        const r = await state.resume(missed, { timeoutMs: 5000 });
        result.missedResumed = r.resumed;
        result.stillStopped.push(...r.stillStopped);
      }
    }
    result.handled = handled;
    return result;
  } finally {
    // Normal and abnormal ends alike: nothing left stopped by us.
    if (mode === 'stop') {
      const ours = records.map((r) => r.hit.pid).filter((pid) => state.procState(pid) === 'T');
      if (ours.length) await state.resume(ours, { timeoutMs: 5000 });
    }
    await guard.close();
    if (derived) fs.rmSync(derived.dir, { recursive: true, force: true });
  }
}

module.exports = { watch, READY_MARKER, abortCoreNote };
