'use strict';
// Runs one nodetrace ebadf session: the watchdog first, then the tracer
// (through lib/tracer/session.js, whose onSpawn hook tells the watchdog the
// tracer's PID the instant it exists: a tracer orphaned by a SIGKILLed
// nodetrace must not go on stopping processes that no one resumes). For each
// hit (the process is already stopped, in the kernel): snapshot its memory
// map, gcore it, SIGCONT it, confirm it runs, report; until --count hits,
// Ctrl-C, -d, or the target's exit.
//
// No process stays stopped on another's account: hits of different
// processes are handled at once (reports still print in hit order), what a
// hit reads of its process's files and memory is read in a worker thread of
// that process's user with a deadline (hit-readers.js), and the watchdog
// keeps the stop bound by its own clock (watchdog.js).
const fs = require('fs');
const path = require('path');
const os = require('os');
const proc = require('../proc');
const state = require('./procstate');
const { OutputParser } = require('./parse');
const { Symbolizer, liveElfFiles } = require('../symbolize');
const { Guard } = require('./guard');
const { runGcore, formatBytes } = require('./core');
const { renderHit } = require('./hit-report');
const { openMappedObjects, closeObjects, saveSysroot } = require('./sysroot');
const { identityOf, parseNsPids } = require('../proc/container');
const { safeText } = require('../terminal-safe');
const { TracerSession, READY_MARKER, END_MARKER } = require('../tracer/session');
const { onTerminationSignals } = require('../tracer/signals');
const { LIMITS } = require('../limits');

const STACK_WAIT_MS = 3000;
const CORE_STACK_TIMEOUT_MS = 120000;
const { stackFromCore: readCoreStack } = require('./core-stack');
const { registersOf } = require('../v8/registers');
const { HitReaders } = require('./hit-readers');
const { REGISTERS_TIMEOUT_MS } = require('./js-stack');
const STOP_CONFIRM_MS = 2000;
// What a hit reads of its process, with the process stopped and after, at
// most: past it, the reading is given up and the hit said with what was
// read (lib/limits.js).
const WALK_DEADLINE_MS = LIMITS.HIT_WALK_DEADLINE_MS;
const NAMING_DEADLINE_MS = LIMITS.HIT_NAMING_DEADLINE_MS;
const RESUME_MS = 5000;
// How long nodetrace may be silent (its event loop blocked) before the
// watchdog resumes what it stopped.
const SILENT_MS = 5000;
// The longest one stop may last, by the watchdog's clock: every bound of
// the handling in turn (the stop confirmed, the registers, the walk, gcore,
// the resume), and some slack for a loaded host.
function maxStopMs(gcoreTimeoutMs) {
  return STOP_CONFIRM_MS + REGISTERS_TIMEOUT_MS + WALK_DEADLINE_MS + gcoreTimeoutMs + RESUME_MS + 10000;
}
const ABORT_DEATH_WAIT_MS = 10000;
// After a SIGCONT, how long a PID found stopped again may wait for the hit that
// stopped it to arrive before it is told SIGCONT again.
const RESTOP_SETTLE_MS = 500;
// How long after the target's exit was seen the tracer is ended: a hit it
// made as it died (--abort) may still be unread in the tracer's buffers,
// which a tracer ended at once discards (bpftrace reads them as they fill).
const TARGET_GONE_GRACE_MS = 1000;
// Lines the scripts print that are neither hits nor errors.
const QUIET = /^Attaching \d+ probes?\.\.\.$|^@hits: \d+$/;

function hrNow() { return process.hrtime.bigint(); }

// The kernel's clock (bpftrace nsecs) is CLOCK_MONOTONIC, as is hrtime.
function wallFromKernel(kernelNs) {
  return Date.now() - Number(hrNow() - kernelNs) / 1e6;
}

/**
 * Pure: one name as the kernel writes it into a core's path for %e and %h
 * (fs/coredump.c cn_esc_printf): every "/" as "!", a name of "." or ".."
 * with its first "." as "!", an empty one as "!". The process chooses its
 * own name: taken raw, "../../etc/x" would have root look at a path the
 * kernel never wrote.
 */
function coreNameComponent(name) {
  const s = String(name);
  if (s === '') return '!';
  const named = s === '.' || s === '..' ? '!' + s.slice(1) : s;
  return named.replace(/\//g, '!');
}

// Where the kernel writes the core of a process killed by SIGABRT.
function abortCoreNote(rec) {
  if (rec.coreLimit === '0') return 'none: its core size limit (ulimit -c) was 0; raise it next time with: prlimit --pid PID --core=unlimited';
  let pattern = '';
  try { pattern = fs.readFileSync('/proc/sys/kernel/core_pattern', 'utf8').trim(); } catch { return null; }
  if (pattern.startsWith('|')) {
    const helper = pattern.slice(1).split(' ')[0];
    return `piped to ${helper}${/systemd-coredump/.test(helper) ? ` (coredumpctl info ${rec.hit.pid})` : ''}`;
  }
  if (/%[^pe%h]/.test(pattern)) return `per kernel.core_pattern "${pattern}"`;
  let name = pattern.replace(/%%|%p|%e|%h/g, (m) => ({ '%%': '%', '%p': String(rec.hit.pid), '%e': coreNameComponent(rec.hit.comm), '%h': coreNameComponent(os.hostname()) }[m]));
  let usesPid = '0';
  try { usesPid = fs.readFileSync('/proc/sys/kernel/core_uses_pid', 'utf8').trim(); } catch { /* default */ }
  if (usesPid === '1' && !pattern.includes('%p')) name += '.' + rec.hit.pid;
  const file = name.startsWith('/') ? name : (rec.cwd ? path.join(rec.cwd, name) : name);
  try {
    const st = fs.statSync(file);
    return `${file} (${formatBytes(st.size)}, mode ${(st.mode & 0o777).toString(8)})`;
  } catch {
    return `expected at ${file} (kernel.core_pattern "${pattern}"), not found: the kernel may have declined to write it`;
  }
}

// What is known of a process: read while it is stopped (or dying), or
// earlier, for a target that dies at once (--abort). `objects`: also open
// the files a core of it needs, where the host does not have them at their
// paths (a container: lib/ebadf/sysroot.js).
function processFacts(symbolizer, pid, { objects = false } = {}) {
  const snap = symbolizer.snapshot(pid);
  const exe = proc.readLink(`/proc/${pid}/exe`);
  return {
    snap, exe,
    who: identityOf(pid),
    cwd: proc.readLink(`/proc/${pid}/cwd`),
    coreLimit: proc.coreLimit(pid),
    start: state.startTime(pid),
    isNode: proc.isNodeImage({ exe: exe || '', mapPaths: snap.maps.map((m) => m.path) }),
    objects: objects && snap.otherMounts ? openMappedObjects(pid, snap.maps, (exe || '').replace(/ \(deleted\)$/, '')) : null,
  };
}

// The thread's ID inside its PID namespace (a container), or null.
function threadInside(pid, tid) {
  const ids = parseNsPids(proc.readProcFile(pid, `task/${tid}/status`));
  return ids.length > 1 ? ids[ids.length - 1] : null;
}

class Watch {
  /**
   * @param {object} o
   * @param {object} o.plan from planEbadf(), with .mode
   * @param {{pid?: number, name?: string}} o.filter
   * @param {number} o.count
   * @param {string} [o.coreDir] @param {string} [o.gcore] (stop mode)
   * @param {number} [o.durationSeconds] @param {number} o.gcoreTimeoutMs
   * @param {NodeJS.WritableStream} o.out report stream  @param {NodeJS.WritableStream} o.err messages
   * @param {object} [o.errnoNames] errno name by number, for display
   * @param {function()} [o.onReady]
   * @param {{gdb: string}} [o.stackFromCore] the tracer prints no stack (stop mode): read it from the core with gdb
   * @param {{gdb: string}} [o.v8Walk] (stop mode) walk the stopped thread with lib/v8, JavaScript frames named
   */
  constructor(o) {
    this.o = o;
    this.mode = o.mode;
    this.symbolizer = new Symbolizer();
    // A worker ready ahead for the first process's user (stop mode, where
    // the walk counts in the stop).
    this.readers = new HitReaders({ spare: o.mode === 'stop' && Boolean(o.v8Walk) });
    this.records = [];
    this.queue = [];          // hits being handled
    this.kernelStopped = new Map();
    this.hitsSeen = 0;
    this.handled = 0;
    this.work = Promise.resolve();   // every hit reported, in hit order
    this.byPid = new Map();          // pid -> its last hit's handling
    this.stopAll = new AbortController();
    this.earlier = null;      // -p: facts of the target from before any hit
    this.result = {
      records: this.records, ready: false, interrupted: null, timedOut: false, targetExited: false, watchdogDied: false,
      gcoreFailed: false, tracerExit: null, errors: [], missedResumed: [], stillStopped: [],
    };
  }

  say(text) {
    this.o.err.write(safeText(`nodetrace: ${text}`) + '\n');
  }

  endTracer(reason = 'request') {
    if (this.session) this.session.end(reason);
  }

  // --- a hit ---------------------------------------------------------------

  onHit(hit) {
    this.hitsSeen++;
    const rec = {
      n: this.hitsSeen, of: this.o.count, mode: this.mode, hit, receivedHr: hrNow(),
      wallMs: hit.kernelNs != null ? wallFromKernel(hit.kernelNs) : hit.wallNs != null ? Number(hit.wallNs / 1000000n)
        : Date.now(),
      errnoName: (this.o.errnoNames || {})[hit.errno],
      beyondCount: this.hitsSeen > this.o.count,
    };
    if (this.mode === 'stop') this.guard.send(`stopped ${hit.pid}`);
    // While it is stopped (or dying): everything that needs the process.
    let facts = processFacts(this.symbolizer, hit.pid, { objects: this.mode === 'stop' && !rec.beyondCount });
    rec.tidInside = threadInside(hit.pid, hit.tid);
    if (!facts.snap.maps.length && this.earlier && this.earlier.snap.pid === hit.pid) {
      this.symbolizer.release(facts.snap);
      facts = { ...this.earlier, start: facts.start };
      this.earlier = null;   // now the hit's: released with it
    }
    const perf = facts.snap.perfMap;
    Object.assign(rec, facts, {
      perfMap: perf && !perf.refused ? perf.path : null,
      perfMapRefused: perf && perf.refused ? `${perf.path} was not read: ${perf.refused}` : null,
    });
    rec.uid = proc.stat.uidOf(hit.pid);
    rec.stack = new Promise((resolve) => { rec.resolveStack = resolve; });
    this.records.push(rec);
    this.queue.push(rec);
    // One process's hits in turn; other processes' at once, never waiting
    // on this one's gcore or files. Reports in hit order.
    const handled = (this.byPid.get(hit.pid) || Promise.resolve()).then(() => this.handle(rec));
    this.byPid.set(hit.pid, handled);
    this.work = this.work.then(() => handled).then(() => this.report(rec));
  }

  onStack(ev) {
    const rec = this.records.find((r) => r.hit.pid === ev.pid && !r.frames);
    if (!rec) return;
    rec.frames = ev.frames;
    rec.resolveStack(ev.frames);
  }

  async symbolize(rec) {
    const frames = rec.coreFrames ||
      await Promise.race([rec.stack, new Promise((r) => setTimeout(() => r(null), STACK_WAIT_MS))]);
    if (!frames) { rec.stackMissing = true; return; }
    if (this.mode === 'abort') {
      // At once, here: the process is dying (its files go with it), and
      // nothing is stopped that reading could keep waiting.
      rec.symbolized = this.symbolizer.symbolize(rec.snap, frames);
    } else {
      await this.symbolizeApart(rec, frames);
    }
    if (!rec.snap.maps.length && frames.some((f) => /^0x/.test(f))) {
      rec.symbolized.unavailable = 'addresses only: the process was gone before its memory map could be read';
    }
  }

  // In the worker of the process's user: its files are its user's.
  async symbolizeApart(rec, frames) {
    const { elfFiles, ...snap } = rec.snap;   // (a function: the worker is given `root` instead)
    const root = rec.sysroot && rec.sysroot.root ? rec.sysroot.root : null;
    const r = await this.readers.run(rec.uid, { op: 'symbolize', snap, frames, root }, { deadlineMs: NAMING_DEADLINE_MS });
    rec.symbolized = r.value || {
      frames: frames.map((f) => ({ text: f, module: '', kind: /^0x/i.test(f) ? 'unknown' : 'named' })), perfMapUsed: false, jitUnnamed: 0, interpreted: 0,
      unavailable: r.timedOut ? `addresses only: naming them took longer than ${NAMING_DEADLINE_MS / 1000} s (reading the process's files), and was given up`
        : `addresses only: ${r.error}`,
    };
  }

  async handleStop(rec) {
    const pid = rec.hit.pid;
    const stopped = await state.waitStopped(pid, STOP_CONFIRM_MS);
    if (!stopped) {
      rec.outcome = state.procState(pid) ? 'the process did not stop' : 'the process exited before it could be dumped';
    } else if (this.stopAll.signal.aborted) {
      rec.outcome = 'nodetrace was stopping; resumed without a core';
    } else if (rec.beyondCount) {
      await this.walkLive(rec);
    } else {
      await this.walkLive(rec);
      rec.core = await runGcore({
        gcore: this.o.gcore, pid, comm: rec.hit.comm, dir: this.o.coreDir, timeoutMs: this.o.gcoreTimeoutMs,
        signal: this.stopAll.signal,
        onSpawn: (gchild, tmp) => { rec.gcorePgid = gchild.pid; this.guard.send(`gcore ${gchild.pid} ${tmp} ${pid}`); },
      });
      if (rec.gcorePgid) this.guard.send(`gcore-done ${rec.gcorePgid}`);
    }
    // A tracer that could not print the stack (its ustack() would have
    // blocked gcore): gdb reads it from the core, after the resume below.
    const stackFromCore = this.o.stackFromCore && rec.core && rec.core.ok;
    // SIGCONT whatever happened above: gdb leaves a SIGSTOPped process stopped.
    // A newer hit may stop it again at once (--count > 1): leave that stop be.
    const laterHit = () => this.records.find((r) => r.hit.pid === pid && r.n > rec.n);
    const r = await state.resume([pid],
      { timeoutMs: 5000, restopped: () => Boolean(laterHit()), settleMs: RESTOP_SETTLE_MS });
    const resumedHr = hrNow();
    if (r.resumed.length) {
      const next = laterHit();
      // The watchdog must keep counting it as stopped while a later hit holds it.
      if (!next) this.guard.send(`resumed ${pid}`);
      rec.resumeText = next && state.procState(pid) === 'T'
        ? `yes, PID ${pid} ran on until hit ${next.n} stopped it again`
        : `yes, PID ${pid} is running again (state ${state.procState(pid) || 'gone'})`;
    } else if (r.gone.length) {
      this.guard.send(`resumed ${pid}`);
      rec.resumeText = `PID ${pid} is gone (it exited or was killed while stopped)`;
    } else {
      rec.resumeText = `NO: PID ${pid} is still stopped; run: kill -CONT ${pid}`;
      this.result.stillStopped.push(pid);
    }
    rec.stoppedMs = rec.hit.kernelNs != null ? Number(resumedHr - rec.hit.kernelNs) / 1e6
      : (Date.now() - Number(rec.hit.wallNs / 1000000n));
    // A process in a container: its executable and libraries beside the
    // core (copied from what was opened at the hit, after the resume).
    if (rec.core && rec.core.ok && rec.objects) rec.sysroot = saveSysroot(rec.objects, rec.core.file);
    closeObjects(rec.objects);
    // Its stack is named after this, when it may have exited (its files in
    // its own mount namespace gone with it): then from the copies.
    if (rec.sysroot && rec.sysroot.root) {
      const root = rec.sysroot.root;
      rec.snap.elfFiles = (map) => [...liveElfFiles(rec.snap, map), [{ root, path: map.path }, true]];
    }
    if (stackFromCore) {
      const exe = rec.sysroot && rec.sysroot.root && rec.exe ? path.join(rec.sysroot.root, rec.exe) : rec.exe;
      const got = await readCoreStack({ gdb: this.o.stackFromCore.gdb, exe, core: rec.core.file, tid: rec.hit.tid,
        timeoutMs: CORE_STACK_TIMEOUT_MS });
      if (got.frames) rec.coreFrames = got.frames;
      else rec.coreStackError = got.error;
    } else if (this.o.stackFromCore) {
      rec.coreStackError = 'no core to read it from (the tracer prints none: its ustack() would block gcore)';
    }
    // A tracer that holds the process under ptrace (no live walk): the core's.
    if (this.o.v8Walk && rec.isNode && !rec.jsStack && rec.core && rec.core.ok) {
      const r = await this.readers.run(rec.uid, { op: 'walkCore', core: rec.core.file, tid: rec.hit.tid, root: rec.sysroot ? rec.sysroot.root : null },
        { deadlineMs: NAMING_DEADLINE_MS });
      rec.jsStack = r.value || { error: r.timedOut ? `walking the core took longer than ${NAMING_DEADLINE_MS / 1000} s, and was given up` : r.error };
    }
    if (rec.core && !rec.core.ok) {
      this.result.gcoreFailed = true;
      this.stopAll.abort();
      this.endTracer('gcore failed');
    }
  }

  // The JavaScript stack of the moment, while the process is stopped (the
  // walk's cost, docs/v8-frames.md, counts in the time it is stopped). Not where the tracer
  // itself holds it under ptrace (DTrace's ustack(): gdb cannot attach).
  // The registers come from gdb (its own timeout); the walk reads the
  // process's files and memory in its user's worker, within
  // WALK_DEADLINE_MS, past which the process goes on to its core and resume.
  async walkLive(rec) {
    if (!this.o.v8Walk || !rec.isNode || this.o.stackFromCore) return;
    const { pid, tid } = rec.hit;
    const threads = await registersOf(pid, { gdb: this.o.v8Walk.gdb, timeoutMs: REGISTERS_TIMEOUT_MS });
    if (threads.error) { rec.jsStack = { error: threads.error }; return; }
    const registers = threads.get(tid);
    if (!registers) { rec.jsStack = { error: `gdb found no thread ${tid} in ${pid}` }; return; }
    const r = await this.readers.run(rec.uid, { op: 'walk', pid, tid, registers }, { deadlineMs: WALK_DEADLINE_MS });
    if (r.value) rec.jsStack = r.value;
    else if (r.timedOut) rec.jsStack = { error: `the walk took longer than ${WALK_DEADLINE_MS / 1000} s (reading the process's files and memory), and was given up` };
    else rec.jsStack = { error: `the walk failed: ${r.error}` };
  }

  // The walk's JavaScript frames where their scripts' source maps put them
  // (lib/source-maps.js), read in the user's worker once the process runs
  // again, inside its own root; the references were read during the walk.
  async original(rec) {
    const frames = rec.jsStack && rec.jsStack.frames;
    if (!frames || !frames.some((f) => f.kind === 'js')) return;
    const strip = (f) => {
      if (f.kind !== 'js') return f;
      const { sourceMapUrl, ...rest } = f;
      return f.inlined ? { ...rest,
        inlined: f.inlined.map((r) => { if (!r) return r; const { sourceMapUrl: u, ...x } = r; return x; }) } : rest;
    };
    if (this.o.sourceMaps === false) { rec.jsStack.frames = frames.map(strip); return; }
    const r = await this.readers.run(rec.uid, { op: 'original', frames, root: `/proc/${rec.hit.pid}/root` }, { deadlineMs: NAMING_DEADLINE_MS });
    rec.jsStack.frames = (r.value || frames).map(strip);
  }

  async handleAbort(rec) {
    const pid = rec.hit.pid;
    const gone = () => {
      const s = state.procState(pid);
      return s === null || s === 'Z' || s === 'X' || !state.sameProcess(pid, rec.start);
    };
    const deadline = Date.now() + ABORT_DEATH_WAIT_MS;
    while (!gone() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    rec.outcome = gone()
      ? `PID ${pid} is gone: killed by SIGABRT at the failing call`
      : `PID ${pid} is still there ${Math.round(ABORT_DEATH_WAIT_MS / 1000)} s after SIGABRT (still dumping core, or it handles SIGABRT)`;
    rec.coreNote = abortCoreNote(rec);
  }

  async handle(rec) {
    try {
      if (this.mode === 'stop') {
        // The process is resumed before its stack is named: naming reads
        // files (the perf map) that nothing may make us wait on meanwhile.
        await this.handleStop(rec);
        await this.symbolize(rec);
        await this.original(rec);
      } else {
        await this.symbolize(rec);
        await this.handleAbort(rec);
      }
    } catch (err) {
      rec.outcome = rec.outcome || `internal error: ${err.message}`;
      await state.resume(this.mode === 'stop' ? [rec.hit.pid] : []);
    }
    this.symbolizer.release(rec.snap);
    closeObjects(rec.objects);
  }

  report(rec) {
    this.queue.splice(this.queue.indexOf(rec), 1);
    // Process names, paths and JavaScript function names are the target's to choose.
    this.o.out.write((this.records.indexOf(rec) > 0 ? '\n' : '') + safeText(renderHit(rec)));
    if (!rec.beyondCount) this.handled++;
    if (this.handled >= this.o.count) this.endTracer('count reached');
  }

  // --- the tracer's output --------------------------------------------------

  onEvent(ev) {
    if (ev.type === 'hit') this.onHit(ev.hit);
    else if (ev.type === 'stack') this.onStack(ev);
    else if (ev.type === 'stopped') this.kernelStopped.set(ev.pid, ev.kernelNs);
    else if (ev.type === 'line' && !QUIET.test(ev.line) && !ev.line.endsWith(READY_MARKER) && ev.line !== END_MARKER) this.result.errors.push(ev.line);
  }

  // -p: notice the target's exit; keep its facts fresh for --abort's sake.
  pollTarget() {
    const pid = this.o.filter.pid;
    const s = state.procState(pid);
    if (s === null || s === 'Z') {
      // Its hit may still be unread in the tracer's buffers (--abort: it
      // dies at the hit), and a tracer ended now discards them: its exit
      // is acted on a grace period after it was seen.
      if (!this.targetGoneAt) this.targetGoneAt = Date.now();
      if (Date.now() - this.targetGoneAt < TARGET_GONE_GRACE_MS) return;
      if (!this.queue.length && !this.result.targetExited) {
        this.result.targetExited = true;
        this.endTracer('target exited');
      }
    } else if (this.mode === 'abort' && s !== 'T') {
      const facts = processFacts(this.symbolizer, pid);
      if (facts.snap.maps.length) {
        if (this.earlier) this.symbolizer.release(this.earlier.snap);
        this.earlier = facts;
      } else {
        this.symbolizer.release(facts.snap);
      }
    }
  }

  // Anything the kernel stopped that we did not see (events lost at exit)
  // is resumed too.
  async resumeMissed() {
    const seen = new Set(this.records.map((r) => r.hit.pid));
    const missed = [...this.kernelStopped.keys()].filter((pid) => !seen.has(pid));
    if (!missed.length) return;
    const r = await state.resume(missed, { timeoutMs: 5000 });
    this.result.missedResumed = r.resumed;
    this.result.stillStopped.push(...r.stillStopped);
  }

  async run() {
    const o = this.o;
    const result = this.result;
    // 1. The watchdog, before anything can be stopped; it keeps the stop
    //    bound by its own clock.
    this.guard = await Guard.start({
      ...o.filter,
      ...(this.mode === 'stop' ? { maxStopMs: maxStopMs(o.gcoreTimeoutMs || 120000), silentMs: SILENT_MS } : {}),
    });
    this.guard.onDeath = () => {
      result.watchdogDied = true;
      this.say('the watchdog died; stopping now, for safety.');
      this.stopAll.abort();
      this.endTracer('watchdog died');
    };
    let poll = null;
    // Ctrl-C while a hit is handled abandons its gcore (its process is
    // resumed), also once the tracer has ended on its own after its last
    // hit: the session no longer handles signals then.
    const stopHandling = onTerminationSignals((sig) => {
      if (!result.interrupted) result.interrupted = sig;
      this.stopAll.abort();
    });
    try {
      if (o.filter.pid && this.mode === 'abort') this.earlier = processFacts(this.symbolizer, o.filter.pid);
      // -p: what a walk of the target reads of its files, read before any
      // hit (its user's worker keeps it), while nothing is stopped.
      if (o.filter.pid && this.mode === 'stop' && o.v8Walk) {
        this.readers.run(proc.stat.uidOf(o.filter.pid), { op: 'prepare', pid: o.filter.pid }, { deadlineMs: WALK_DEADLINE_MS });
      }
      const parser = new OutputParser((ev) => this.onEvent(ev));
      // 2. The tracer; the watchdog learns its PID at once.
      this.session = new TracerSession(o.plan, {
        durationSeconds: o.durationSeconds,
        statusStream: null,
        onSpawn: (child) => this.guard.send(`tracer ${child.pid}`),
        onLine: (line) => parser.line(line),
        onReady: () => {
          result.ready = true;
          if (o.onReady) o.onReady();
        },
        // Ctrl-C also abandons a gcore in progress (its process is resumed).
        onSignal: (sig) => {
          if (!result.interrupted) result.interrupted = sig;
          this.stopAll.abort();
        },
      });
      if (o.filter.pid) poll = setInterval(() => this.pollTarget(), 500);
      let exit;
      try {
        exit = await this.session.run();
      } catch (err) {
        exit = { code: null, signal: null, errors: [`cannot run ${o.plan.tracer.path}: ${err.code || err.message}`] };
      }
      this.guard.send('tracer-exited');
      clearInterval(poll);
      parser.end();
      result.errors.push(...exit.errors);
      result.tracerExit = exit;
      result.timedOut = exit.endReason === 'duration';
      // 3. Every hit handled (stacks that never came are given up on).
      await this.work;
      if (this.mode === 'stop') await this.resumeMissed();
      result.handled = this.handled;
      return result;
    } finally {
      clearInterval(poll);
      stopHandling();
      if (this.earlier) this.symbolizer.release(this.earlier.snap);
      this.readers.close();
      this.symbolizer.close();
      // Normal and abnormal ends alike: nothing left stopped by us.
      if (this.mode === 'stop') {
        const ours = this.records.map((r) => r.hit.pid).filter((pid) => state.procState(pid) === 'T');
        if (ours.length) await state.resume(ours, { timeoutMs: 5000 });
      }
      await this.guard.close();
    }
  }
}

function watch(o) {
  return new Watch(o).run();
}

module.exports = { watch, Watch, abortCoreNote, coreNameComponent, maxStopMs, SILENT_MS, WALK_DEADLINE_MS };
