'use strict';
// Runs one plan (lib/tracer/plan.js) to completion: makes its private files,
// spawns the tracer (never through a shell, in a process group of its own so
// that a terminal's Ctrl-C reaches only nodetrace, which then ends the tracer
// the one way that tracer expects), notices when its probes are attached,
// ends it after a duration, on Ctrl-C/SIGTERM/SIGHUP or when asked, hands its
// output over line by line, and says how it ended. Every command runs its
// tracers through this; nothing else spawns one.
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const { StatusLine } = require('../status-line');
const { stopPolicy } = require('./capabilities');
const { attachBoundMs } = require('./attach-bounds');
const { attachedProbeCount } = require('./attach-progress');
const { resolveCommand, usesTemp } = require('./plan');
const { commandFinder } = require('./command-target');
const { onTerminationSignals } = require('./signals');
const { splitterFor, itemText, splitAtEndMarker, READY_MARKER, END_MARKER, REPORT_MARKER } = require('./output-formats');
const { isNoise, tracerComplaints, StderrSorter } = require('./tracer-stderr');
const { blockedWritingOutput } = require('./blocked-output');
const { makeRunDir, sweepAbandonedRunDirs } = require('./run-dirs');

// READY_MARKER ends the line every program prints from BEGIN. On DTrace that
// is once every probe is in place; bpftrace runs BEGIN before attaching the
// rest, and the plan names the line it prints once they are (plan.readyLine,
// lib/tracer/capabilities.js attachNotice). END_MARKER: the trace is over and
// the maps follow.
// A tracer whose attaching makes no progress for its bound (one table:
// lib/tracer/attach-bounds.js) is reported, not waited for (a hostile file
// can make it wait forever). -d counts from the attach, as a trace of N
// seconds means N seconds of tracing.
// How often attaching's progress is looked at.
const ATTACH_POLL_MS = 500;
// A streaming tracer told to stop emitting (plan.quiesce) says so within
// this long, or is ended anyway; after it says so, its other CPUs' buffers
// get this long to be read.
const QUIESCE_TIMEOUT_MS = 2000;
const QUIESCE_GRACE_MS = 150;
// After the END marker, a tracer still printing this long is stuck.
const AFTER_END_GIVE_UP_MS = 90000;
// A program with a window (plan.window) prints its report within this long
// of the signal that closes it (bpftrace 0.22+ runs the clause within its
// poll loop's 100 ms; 0.17's runs in the kill() itself), or is ended the
// old way, its report printed after END.
const REPORT_TIMEOUT_MS = 2000;
// ... and says its window is open (WINDOW_MARKER) within this long of the
// signal that opens it (0.22+: about 100 ms; 0.17: at once), or nothing it
// counts can be trusted to start anywhere: the trace ends, saying so.
const WINDOW_OPEN_TIMEOUT_MS = 5000;
// How often a tracer's output file (-o: a -c command has its stdout) is
// read for what it added: what the program prints is taken within this
// long (profile -c names JavaScript frames as they are printed, while the
// command runs). bpftrace 0.17, 0.23 and 0.27 flush -o at each print.
const OUTPUT_FILE_POLL_MS = 200;
// The size of one read of it.
const OUTPUT_FILE_CHUNK = 1 << 20;
// A signal for the tracer waits while the tracer is blocked writing to us
// (lib/tracer/blocked-output.js: the signal would cut that write, and
// bpftrace 0.24+ then writes nothing more, END's output lost): looked at
// again this often, each time after the event loop has read what is there,
// and sent anyway after this long (a tracer that never stops writing; at
// worst what it did before). A tracer not blocked is told at once.
const BLOCKED_WRITE_POLL_MS = 10;
const BLOCKED_WRITE_BOUND_MS = 5000;

// How a process ended, as a sentence's verb: `{ code, signal }` from its exit.
function howItExited({ code, signal } = {}) {
  return signal ? `was killed by ${signal}` : `exited with status ${code}`;
}

/**
 * How a finished session ended, for the user: null when the tracer ended as
 * its program does (END ran, exit status 0), else a sentence saying what
 * happened. A tracer that dies is never a clean run.
 */
function abnormalEnd(result, plan) {
  if (!result.ready) return null;   // the caller explains a failed start
  const name = plan.tracer.name;
  const after = result.readyAt ? ` after ${Math.round((result.endedAt - result.readyAt) / 1000)} s` : '';
  if (result.gaveUp) return `${name} did not end when asked and was killed${after}`;
  if (result.windowNotOpened) {
    return `${name} did not open its program's window within ${WINDOW_OPEN_TIMEOUT_MS / 1000} s of the signal for it: nothing was counted;`
      + ' try again, or a newer bpftrace';
  }
  const last = tracerComplaints(result.errors).slice(-2).join('; ');
  if (result.signal || result.code !== 0) return `${name} ${howItExited(result)}${after}${last ? `: ${last}` : ''}`;
  if (result.unaskedReportAt) {
    const at = result.readyAt ? ` ${Math.round((result.unaskedReportAt - result.readyAt) / 1000)} s after it attached` : '';
    return `${name} printed its program's report${at}, before nodetrace asked for it (its window's signal came from`
      + ' elsewhere): what it counted then is not in the report; trace again';
  }
  // (A streaming program's report handed over once it was quiet: END runs after it.)
  if (!result.endMarkerSeen && !result.endAfterReport) return `${name} exited${after} without running its END clause${last ? `: ${last}` : ''}`;
  return null;
}

class TracerSession {
  /**
   * @param {object} plan from planTracer()
   * @param {object} [o]
   * @param {number} [o.durationSeconds] end the trace this long after the probes are attached
   * @param {number} [o.attachTimeoutMs] the longest the attaching may go without attaching another probe
   *        (default: the plan's, else lib/tracer/attach-bounds.js's default for the tracer)
   * @param {function(number): number} [o.attachProgress] the probes the tracer (its PID) has attached so far
   *        (default: lib/tracer/attach-progress.js); read again when ending it, to tell it has started detaching
   * @param {function(string|object)} [o.onLine] each item of the tracer's output (a line, or a JSON object
   *        with plan.output 'json'; lib/tracer/output-formats.js); without it, lines are collected and the
   *        result holds them as `during` (lines printed while tracing) and `maps` (the text after END)
   * @param {function(string): boolean} [o.takeLine] told each line of text first; true: the caller took
   *        it, and it is neither kept nor passed on (a long trace that prints its maps every second,
   *        latency --prometheus, must not grow the lines kept for its report)
   * @param {function(ChildProcess)} [o.onSpawn] at once, with the tracer's process
   * @param {function()} [o.onReady] once the probes are attached (a program with a window: once it
   *        has said its window is open, WINDOW_MARKER); -d counts from then too
   * @param {function(object)} [o.onReport] a program with a window (plan.window): told, with the result so
   *        far (`during`, `maps`), once its report is complete, before the tracer detaches its probes;
   *        what the tracer prints after that is not taken. A streaming program (plan.quiesce): told once
   *        it has said it is quiet and its buffers were read, before it detaches
   * @param {function(ChildProcess): boolean} [o.readyWhen] polled: another way to tell the probes are attached
   * @param {Array} [o.stdio] stdin and stdout for the tracer (default: ignored, and piped to us)
   * @param {boolean} [o.handleSignals] end the trace on our SIGINT/SIGTERM/SIGHUP (default true)
   * @param {function(string)} [o.onSignal] told of such a signal first
   * @param {NodeJS.WriteStream|null} [o.statusStream] where the status line goes (default stderr; null: none)
   */
  constructor(plan, o = {}) {
    this.plan = plan;
    this.o = o;
    this.policy = stopPolicy(plan.tracer);
    this.child = null;
    // -c: finds the command among the tracer's children (its binary stat'ed once, now).
    this.findCommand = plan.command ? commandFinder(plan.command) : null;
    this.lines = [];
    this.result = {
      ready: false, code: null, signal: null, errors: [], endMarkerSeen: false,
      endRequested: false, endRequestedAt: 0, endReason: null, gaveUp: false, attachTimedOut: false,
      startedAt: 0, readyAt: 0, endedAt: 0, during: [], maps: '',
      windowOpen: false, reported: false, reportedAt: 0, endAfterReport: false,
    };
    this.timers = [];
    // What is to be done once the tracer is not blocked writing to us (whenNotWriting()).
    this.untilNotWriting = [];
  }

  /** -c: the command's PID once the tracer's child runs it; else null. */
  commandPid() {
    return this.findCommand && this.child ? this.findCommand(this.child.pid) : null;
  }

  running() {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  // Ends the trace the way Ctrl-C would. `reason`: 'duration', a signal's
  // name, or any word the caller chooses.
  end(reason = 'request') {
    const r = this.result;
    if (r.endRequested || (this.child && !this.running())) return;
    r.endRequested = true;
    r.endRequestedAt = Date.now();
    r.endReason = reason;
    if (this.status) this.status.ending(this.plan.tracer.name,
      { reporting: Boolean((this.plan.window && r.windowOpen) || this.reportsWhenQuiet()) });
    if (this.running()) this.startEnding();
  }

  // A plan that streams events (plan.quiesce) is first told to stop emitting
  // them, and ended once what it emitted has been read: bpftrace discards
  // what is still unread in its buffers when its end signal arrives
  // (src/bpftrace.cpp, perf_event_printer: exitsig_recv), so a record fired
  // just before Ctrl-C would otherwise be counted and never printed.
  startEnding() {
    if (this.closeWindow()) return;
    const q = this.plan.quiesce;
    if (!q || !this.result.ready || this.quiescing) {
      this.stopTracer();
      return;
    }
    this.quiescing = true;
    let stopped = false;
    const stop = () => { if (!stopped && this.running()) { stopped = true; this.stopTracer(); } };
    const giveUp = this.after(q.timeoutMs || QUIESCE_TIMEOUT_MS, stop);
    // Quiet, everything it emitted read: the report is whole now, and is
    // handed over before the tracer detaches its probes (http's wire: 23
    // probes, whose detach kept the report 1.6-1.9 s after the end on a
    // quiet host; docs/performance.md), as a window's is.
    const whole = () => {
      if (stopped || !this.running()) return;
      if (this.reportsWhenQuiet()) this.reportComplete();
      else stop();
    };
    this.onQuiesced = () => {
      clearTimeout(giveUp);
      // Other CPUs' buffers may still hold events older than the marker.
      this.after(q.graceMs || QUIESCE_GRACE_MS, whole);
    };
    this.whenNotWriting(() => this.child.kill(q.signal));
  }

  // A streaming program told to stop emitting (plan.quiesce) whose report
  // the caller prints itself (o.onReport): printed once it is quiet.
  reportsWhenQuiet() {
    return Boolean(this.plan.quiesce && this.o.onReport && this.result.ready);
  }

  // A program with a window (plan.window), open: the signal that closes it,
  // and the tracer ended once its report is complete (line(): REPORT_MARKER),
  // or after REPORT_TIMEOUT_MS without it (it then prints after END).
  closeWindow() {
    const w = this.plan.window;
    if (!w || !this.result.windowOpen || this.closingWindow) return false;
    // Not yet said open: closed once it is (a second signal sent before the
    // first was handled could be merged with it, and the window never close).
    if (!this.windowSaidOpen) {
      this.closeWhenOpened = true;
      return true;
    }
    this.closingWindow = true;
    this.afterReport = () => { clearTimeout(giveUp); this.stopTracer(); };
    const giveUp = this.after(REPORT_TIMEOUT_MS,
      () => { this.afterReport = null; if (this.running()) this.stopTracer(); });
    this.whenNotWriting(() => this.child.kill(w.signal));
    return true;
  }

  // The report is complete: handed over now; the tracer then detaches.
  reportComplete() {
    const r = this.result;
    r.reported = true;
    r.reportedAt = Date.now();
    if (!this.o.onLine) Object.assign(r, splitAtEndMarker(this.lines));
    if (this.status) this.status.clear();
    if (this.o.onReport) this.o.onReport(r);
    if (this.status) this.status.detaching(this.plan.tracer.name);
    const then = this.afterReport;
    this.afterReport = null;
    if (then) then();
    else if (this.running() && !this.stopping) this.stopTracer();
  }

  // Whether END has run (the tracer has heard its end): its marker, after a
  // report printed early the one END prints itself.
  endClauseRan() {
    const r = this.result;
    return r.reported ? r.endAfterReport : r.endMarkerSeen;
  }

  // The signal is said again (policy.resendEveryMs) only while the tracer
  // holds every probe it held when first told: once it detaches them it has
  // heard, and a second signal while it runs END would lose END's output
  // (bpftrace: a signal during the drain after END returns from the poll,
  // and perf_event_printer drops every event once exitsig_recv is set).
  stopTracer() {
    if (this.stopping) return;
    this.stopping = true;
    this.whenNotWriting(() => this.signalEnd());
  }

  // stopTracer()'s signal, and again while it is not heard.
  signalEnd() {
    const r = this.result;
    const { signal, resendEveryMs, giveUpMs } = this.policy;
    const probes = this.o.attachProgress || attachedProbeCount;
    const since = Date.now();
    const heldAtStop = resendEveryMs ? probes(this.child.pid) : 0;
    const hasHeard = () => this.endClauseRan() || (heldAtStop > 0 && probes(this.child.pid) < heldAtStop);
    let heard = false;
    let resending = false;
    let lastSentAt = since;
    let endSeenAt = 0;
    this.child.kill(signal);
    this.every(250, () => {
      if (!this.running()) return;
      const now = Date.now();
      if (this.endClauseRan() && !endSeenAt) endSeenAt = now;
      const stuck = endSeenAt ? now - endSeenAt >= AFTER_END_GIVE_UP_MS : now - since >= giveUpMs;
      if (stuck) {
        r.gaveUp = true;
        this.child.kill('SIGKILL');
      } else if (resendEveryMs && !this.endClauseRan() && !heard && !resending && now - lastSentAt >= resendEveryMs) {
        if (hasHeard()) { heard = true; return; }
        // Looked at again when it goes: what was read while it waited
        // may be END's marker, or its probes may have started to go.
        resending = true;
        this.whenNotWriting(() => {
          resending = false;
          lastSentAt = Date.now();
          if (hasHeard()) heard = true;
          else this.child.kill(signal);
        });
      }
    });
  }

  // Runs fn (which signals the tracer) once no thread of the tracer is
  // blocked writing to the sockets we read; in the order asked. Each look
  // comes after a poll phase of the event loop (setImmediate), which reads
  // what the tracer has written: a timer that fired late (our loop held,
  // SIGSTOP, a loaded host) acts before that phase, with the tracer still
  // blocked on what our loop did not read meanwhile.
  whenNotWriting(fn) {
    this.untilNotWriting.push(fn);
    if (this.untilNotWriting.length > 1) return;
    const blocked = this.o.blockedWriting || blockedWritingOutput;
    // Ours to read: stderr always, stdout where it is piped to us (o.stdio).
    const fds = !this.o.stdio || this.o.stdio[1] === 'pipe' ? [1, 2] : [2];
    const since = Date.now();
    const look = () => {
      this.lookImmediate = null;
      if (!this.running()) {
        this.untilNotWriting.length = 0;
        return;
      }
      if (blocked(this.child.pid, fds) && Date.now() - since < BLOCKED_WRITE_BOUND_MS) {
        this.after(BLOCKED_WRITE_POLL_MS, () => { this.lookImmediate = setImmediate(look); });
        return;
      }
      const due = this.untilNotWriting.splice(0);
      for (const f of due) if (this.running()) f();
    };
    this.lookImmediate = setImmediate(look);
  }

  every(ms, fn) {
    const t = setInterval(fn, ms);
    this.timers.push(t);
    return t;
  }

  after(ms, fn) {
    const t = setTimeout(fn, ms);
    this.timers.push(t);
    return t;
  }

  markReady() {
    const r = this.result;
    if (r.ready) return;
    r.ready = true;
    r.readyAt = Date.now();
    clearTimeout(this.attachTimer);
    // The program's window (plan.window) is opened now; the trace starts
    // once the program says it is open (windowOpened()): until then the
    // target's operations are not counted.
    if (this.plan.window && this.running() && !r.endRequested) {
      this.whenNotWriting(() => this.child.kill(this.plan.window.signal));
      r.windowOpen = true;
      this.windowTimer = this.after(WINDOW_OPEN_TIMEOUT_MS, () => {
        if (this.windowSaidOpen || !this.running()) return;
        r.windowNotOpened = true;
        this.stopTracer();
      });
      return;
    }
    this.tracing();
  }

  // The program has said that its window is open (plan.window.opened).
  windowOpened() {
    const r = this.result;
    this.windowSaidOpen = true;
    r.windowOpenedAt = Date.now();
    clearTimeout(this.windowTimer);
    if (this.closeWhenOpened) this.closeWindow();
    else if (!r.endRequested) this.tracing();
  }

  // The trace has started: counting from now.
  tracing() {
    if (this.status) this.status.start();
    if (this.o.durationSeconds) this.after(this.o.durationSeconds * 1000, () => this.end('duration'));
    if (this.o.onReady) this.o.onReady();
  }

  // The tracer's own notice that its probes are attached: taken, not passed on.
  tookAttachNotice(text) {
    if (!this.plan.readyLine || text !== this.plan.readyLine) return false;
    this.markReady();
    return true;
  }

  // An item of the tracer's output (lib/tracer/output-formats.js): a line,
  // or with -f json an object. The markers are read from the program's own
  // printf, never from text a traced process wrote (a record is not a line).
  line(item) {
    const r = this.result;
    const text = itemText(item);
    if (r.reported) {
      // The report is out: what the tracer prints as it exits is not taken.
      if (text === END_MARKER) r.endAfterReport = true;
      return;
    }
    if (text !== null) {
      if (this.tookAttachNotice(text)) return;
      if (this.plan.quiesce && text === this.plan.quiesce.line) {
        if (this.onQuiesced) this.onQuiesced();
        this.onQuiesced = null;
        return;
      }
      // (With readyWhen, a running tracer's BEGIN line is no sign: bpftrace
      // -c -o prints it before attaching, and readyWhen tells; when it
      // ends unseen, the line is: below, at the tracer's exit.)
      if (!r.ready && !this.plan.readyLine && text.endsWith(READY_MARKER)) {
        if (this.o.readyWhen && this.running()) this.readyLineAt = this.readyLineAt || Date.now();
        else this.markReady();
      }
      const w = this.plan.window;
      if (w && w.opened && text === w.opened && r.windowOpen && !this.windowSaidOpen) {
        this.windowOpened();
        return;
      }
      if (this.o.takeLine && this.o.takeLine(text)) return;
      if (text === END_MARKER) r.endMarkerSeen = true;
      if (text === REPORT_MARKER && this.plan.window && r.endMarkerSeen) {
        // The end counts only once nodetrace asked for it (closeWindow()):
        // a report printed before (the window's signal sent by another, or
        // a clause run twice) holds the counts of a window nodetrace did
        // not close, and its maps are cleared: taken as the report, the
        // real one would come empty with exit 0. Said (abnormalEnd), and
        // its lines not kept: the report is the one asked for.
        if (this.closingWindow) {
          this.reportComplete();
          return;
        }
        r.unaskedReportAt = r.unaskedReportAt || Date.now();
        r.endMarkerSeen = false;
        const end = this.lines.lastIndexOf(END_MARKER);
        if (!this.o.onLine && end >= 0) this.lines.length = end;
        return;
      }
    }
    if (this.o.onLine) this.o.onLine(item);
    else this.lines.push(text === null ? JSON.stringify(item) : text);
  }

  /** Runs the plan; resolves with the result once the tracer has exited. */
  async run() {
    const plan = this.plan;
    let tempDir = null;
    if (usesTemp(plan)) {
      sweepAbandonedRunDirs();
      tempDir = makeRunDir(plan.script);
    }
    try {
      for (const f of plan.files) fs.writeFileSync(path.join(tempDir, f.name), f.text, { mode: 0o600, flag: 'wx' });
      for (const l of plan.links) fs.symlinkSync(l.target, path.join(tempDir, l.name));
      return await this.spawnAndWait(tempDir);
    } finally {
      if (tempDir) fs.rmSync(tempDir, { recursive: true, force: true });
    }
  }

  // Where each line of the tracer's stderr goes: its complaints are kept;
  // with -c, the command's own lines (it shares the tracer's stderr) are
  // passed on as they come, as its stdout is, not taken for the tracer's.
  stderrTaker() {
    const r = this.result;
    const sorter = this.plan.command ? new StderrSorter() : null;
    let commandRuns = false;
    return (line) => {
      if (sorter) {
        commandRuns = commandRuns || r.ready || this.commandPid() !== null;
        const whose = sorter.sort(line, commandRuns);
        if (whose === 'command') this.passOnCommandLine(line);
        if (whose !== 'tracer') return;
      }
      if (isNoise(line) || this.tookAttachNotice(line)) return;
      r.errors.push(line);
    };
  }

  // The command's stderr line, unchanged, as if the user had run it; above
  // the status line on a terminal.
  passOnCommandLine(line) {
    if (this.status && this.status.stream === process.stderr) this.status.printAbove(line);
    else process.stderr.write(line + '\n');
  }

  spawnAndWait(tempDir) {
    const plan = this.plan;
    const o = this.o;
    const r = this.result;
    const { file, args } = resolveCommand(plan, tempDir);
    return new Promise((resolve, reject) => {
      r.startedAt = Date.now();
      const stdio = o.stdio ? [...o.stdio, 'pipe'] : ['ignore', 'pipe', 'pipe'];
      this.child = spawn(file, args, { stdio, env: { ...process.env, ...plan.env }, detached: true });
      const child = this.child;
      if (o.onSpawn && child.pid) o.onSpawn(child);
      if (r.endRequested && child.pid) this.startEnding();
      if (o.statusStream !== null) {
        this.status = new StatusLine(o.statusStream || process.stderr, `${plan.describe} with ${plan.tracer.name} ${plan.tracer.version}`, o.durationSeconds);
      }
      const split = splitterFor(plan.output);
      const take = (buf) => { for (const l of split.push(buf)) this.line(l); };
      if (!plan.outputFile && child.stdout) child.stdout.on('data', take);
      const tail = plan.outputFile ? new FileTail(path.join(tempDir, plan.outputFile)) : null;
      if (tail) this.every(OUTPUT_FILE_POLL_MS, () => take(tail.read()));
      const errSplit = splitterFor('text');
      const takeError = this.stderrTaker();
      child.stderr.on('data', (text) => { for (const l of errSplit.push(text)) takeError(l); });

      // The bound is on attaching making no progress: each probe attached
      // (lib/tracer/attach-progress.js) starts it again.
      const attachMs = o.attachTimeoutMs || plan.attachTimeoutMs || attachBoundMs(plan.tracer);
      const probesAttached = o.attachProgress || attachedProbeCount;
      let progressAt = Date.now();
      r.probesAttached = 0;
      this.attachTimer = this.every(Math.min(ATTACH_POLL_MS, attachMs), () => {
        if (r.ready) return;
        const n = child.pid ? probesAttached(child.pid) : 0;
        if (n > r.probesAttached) {
          r.probesAttached = n;
          progressAt = Date.now();
        }
        if (Date.now() - progressAt < attachMs) return;
        clearInterval(this.attachTimer);
        r.attachTimedOut = true;
        r.attachTimeoutMs = attachMs;
        r.gaveUp = true;
        if (this.running()) child.kill('SIGKILL');
      });
      if (o.readyWhen) this.every(100, () => { if (!r.ready && o.readyWhen(child)) this.markReady(); });

      const stopHandling = o.handleSignals === false ? () => {} : onTerminationSignals((sig) => {
        if (this.status) this.status.stop();
        if (o.onSignal) o.onSignal(sig);
        this.end(sig);
      });

      const finish = () => {
        for (const t of this.timers) clearTimeout(t);
        if (this.lookImmediate) clearImmediate(this.lookImmediate);
        stopHandling();
        if (this.status) this.status.stop();
      };
      child.on('error', (err) => {
        finish();
        reject(err);
      });
      child.on('close', (code, signal) => {
        if (tail) { take(tail.read()); tail.close(); }
        // A -c command that ran and ended between two looks of readyWhen
        // (a few ms): the program's BEGIN line says the tracer got that far,
        // as it did when the file was read only now.
        if (!r.ready && this.readyLineAt) {
          this.markReady();
          r.readyAt = this.readyLineAt;
        }
        for (const l of split.end()) this.line(l);
        for (const l of errSplit.end()) takeError(l);
        finish();
        r.code = code;
        r.signal = signal;
        r.endedAt = Date.now();
        // What the program printed while tracing, and the maps after END
        // (a report printed early was split then).
        if (!o.onLine && !r.reported) Object.assign(r, splitAtEndMarker(this.lines));
        resolve(r);
      });
    });
  }
}

// A file the tracer writes (in the private directory, made by it): what it
// added since the last read. Opened once it is there (never through a link:
// nothing else writes in that directory, but nothing is assumed).
class FileTail {
  constructor(file) {
    this.file = file;
    this.fd = null;
  }

  read() {
    if (this.fd === null) {
      try {
        this.fd = fs.openSync(this.file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
      } catch {
        return Buffer.alloc(0); // not there yet, or the tracer failed before writing anything
      }
    }
    const parts = [];
    for (;;) {
      const buf = Buffer.alloc(OUTPUT_FILE_CHUNK);
      const n = fs.readSync(this.fd, buf, 0, buf.length, null);
      if (n > 0) parts.push(buf.subarray(0, n));
      if (n < buf.length) break;
    }
    return Buffer.concat(parts);
  }

  close() {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}

// How long the tracer had run when its report was complete: at its exit,
// or, where its program printed the report early (plan.window), then. In ms.
function tracerRanMs(result) {
  return (result.reportedAt || result.endedAt) - result.startedAt;
}

// The trace's length, as a report says it and its rates and shares are of:
// from the moment every probe was attached to the end asked for (or the
// tracer's exit). Not the tracer's whole run, whose attach before and
// detach after take seconds on bpftrace 0.17 with a large node binary; nor
// a program's BEGIN to END, which 0.17 runs before it attaches the other
// probes. In ms; null when the tracer was never ready.
function tracedSpanMs(result) {
  if (!result.readyAt) return null;
  const end = result.endRequestedAt || result.endedAt;
  return end > result.readyAt ? end - result.readyAt : null;
}

// The same as a BigInt of ns, for reports that say traced_ns. `programNs`,
// the program's own figure, is the length where the program counted over
// a window nodetrace opened and closed (plan.window: from the signal sent
// once every probe was attached to the one sent at the end, on the
// tracer's clock) and printed its report then; and where the tracer was
// never ready.
function spanNs(result, programNs = null) {
  if (result.reported && programNs !== null && programNs !== undefined) return BigInt(programNs);
  const ms = tracedSpanMs(result);
  return ms === null ? programNs : BigInt(Math.round(ms * 1e6));
}

module.exports = {
  TracerSession, abnormalEnd, howItExited, tracedSpanMs, spanNs, tracerRanMs, READY_MARKER, END_MARKER,
  QUIESCE_TIMEOUT_MS,
  REPORT_TIMEOUT_MS, isNoise,
};
