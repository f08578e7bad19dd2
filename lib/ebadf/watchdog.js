'use strict';
// nodetrace ebadf's watchdog: a small process of its own, started before any
// probe is armed, in its own session (so a terminal's Ctrl-C or hang-up and a
// kill of nodetrace's process group miss it). nodetrace tells it, over a
// pipe, everything that would need undoing:
//
//   tracer PID          the bpftrace/dtrace process (kill it, its probes go)
//   stopped PID         a process the probe stopped
//   gcore PGID DIR PID  a gcore (and its gdb) running on PID, writing into DIR
//   gcore-done PGID     that gcore finished
//   resumed PID         that process is running again
//   alive               nodetrace's heartbeat, every HEARTBEAT_MS
//   bye                 orderly end: everything is already undone
//
// It also keeps the stop bound by its own clock, while nodetrace lives: a
// process stopped for longer than `maxStopMs` (the longest nodetrace's own
// handling of a hit may take) is resumed, its gcore killed; and when
// nodetrace has not been heard for `silentMs` (its event loop blocked, or
// stopped itself), every process it stopped, and every process of the
// filter stopped since the watch began (hits it has not read yet), is
// resumed. nodetrace then finds them running and says so.
//
// When the pipe closes (nodetrace exited, crashed, or was killed, even with
// SIGKILL) without "bye", it kills the tracer, kills gcore's process group
// (gdb detaches from the target as it dies), deletes the partial core, and
// sends SIGCONT to every process that was stopped, plus any process matching
// the filter that is stopped now but was not when the watch began (a hit
// whose report nodetrace never read). It never reads anything else, and never
// runs a shell.
//
// Run as: node watchdog.js '{"parent":PID,"pid":PID|0,"name":"comm"|null,"maxStopMs":N,"silentMs":N}'
const fs = require('fs');
const state = require('./procstate');

const config = JSON.parse(process.argv[2] || '{}');
// A `-n node` must not match the watchdog itself (its argv is long enough for the name to fit).
try { process.title = 'nodetrace-wdog'; } catch { /* keep going */ }
const filter = { pid: Number(config.pid) || 0, name: config.pid ? null : String(config.name || '') };
const alreadyStopped = new Set(filter.pid || filter.name ? state.stoppedCandidates(filter) : []);

// The bounds of its own clock (0: none).
const maxStopMs = Number(config.maxStopMs) || 0;
const silentMs = Number(config.silentMs) || 0;
const CLOCK_MS = 200;

let tracer = null;            // { pid, start }
const gcores = new Map();     // pgid -> { dir, pid }
const stopped = new Map();    // pid -> { start (its start time), since (ms) }
let bye = false;
let finishing = false;
let heardAt = Date.now();

function say(text) {
  try { fs.writeSync(2, `nodetrace ebadf watchdog: ${text}\n`); } catch { /* no terminal any more */ }
}

function handle(line) {
  const [verb, a, b, c] = line.trim().split(' ');
  const n = Number(a);
  heardAt = Date.now();
  switch (verb) {
    case 'tracer': tracer = { pid: n, start: state.startTime(n) }; break;
    case 'tracer-exited': tracer = null; break;
    case 'stopped': if (n > 0) stopped.set(n, { start: state.startTime(n), since: Date.now() }); break;
    case 'resumed': stopped.delete(n); break;
    case 'gcore': if (n > 0) gcores.set(n, { dir: b && b.startsWith('/') ? b : null, pid: Number(c) || 0 }); break;
    case 'gcore-done': gcores.delete(n); break;
    case 'bye': bye = true; break;
    default: break;
  }
}

function waitGone(test, ms) {
  const deadline = Date.now() + ms;
  while (!test() && Date.now() < deadline) state.sleepSync(20);
  return test();
}

function finish(why) {
  if (finishing) return;
  finishing = true;
  const emergency = !bye;
  const did = [];
  // 1. Kill, all at once: the tracer (its probes detach as it dies), and
  //    gcore with its gdb (gdb's death detaches it from the target).
  const tracerAlive = tracer && state.sameProcess(tracer.pid, tracer.start);
  if (tracerAlive) state.sendSignal(tracer.pid, 'SIGKILL');
  for (const pgid of gcores.keys()) state.sendSignal(-pgid, 'SIGKILL');
  // 2. Only the tracer must be gone before resuming (else it could stop the
  //    target again); gdb's exit is covered by the retries in resumeSync.
  if (tracerAlive) {
    waitGone(() => !state.sameProcess(tracer.pid, tracer.start), 3000);
    did.push(`killed the tracer (PID ${tracer.pid})`);
  }
  // 3. Resume: what nodetrace said it stopped, and (if it died) anything
  //    matching the filter that is stopped now and was not at the start.
  const targets = new Set([...stopped].filter(([pid, s]) => s.start == null || state.sameProcess(pid, s.start))
    .map(([pid]) => pid));
  if (emergency && (filter.pid || filter.name)) {
    for (const pid of state.stoppedCandidates(filter)) if (!alreadyStopped.has(pid)) targets.add(pid);
  }
  const resumed = new Set();
  let still = [];
  if (targets.size) {
    const r = state.resumeSync([...targets], { timeoutMs: 8000, everyMs: 20 });
    r.resumed.forEach((p) => resumed.add(p));
    still = r.stillStopped;
  }
  // 4. gcore's leftovers.
  for (const [pgid, { dir }] of gcores) {
    waitGone(() => !state.sendSignal(-pgid, 0), 3000);
    if (dir && /\/\.nodetrace-ebadf-[^/]+$/.test(dir)) {
      try { fs.rmSync(dir, { recursive: true, force: true }); } catch { /* best effort */ }
    }
    did.push(`killed gcore (process group ${pgid}) and removed its partial core`);
  }
  // 5. Once more, in case a hit slipped in while the tracer was dying.
  if (emergency && (filter.pid || filter.name)) {
    const again = state.stoppedCandidates(filter).filter((pid) => !alreadyStopped.has(pid));
    if (again.length) {
      const r = state.resumeSync(again, { timeoutMs: 3000, everyMs: 20 });
      r.resumed.forEach((p) => resumed.add(p));
      still = [...new Set([...still, ...r.stillStopped])];
    }
  }
  if (resumed.size) did.push(`resumed PID ${[...resumed].join(', ')} with SIGCONT`);
  if (still.length) did.push(`could NOT resume PID ${still.join(', ')}: run kill -CONT ${still.join(' ')}`);
  if (emergency && did.length) say(`nodetrace (PID ${config.parent}) ${why}; ${did.join('; ')}.`);
  process.exit(0);
}

// The stop bound, by this process's own clock, while nodetrace lives.
function release(pids, why) {
  const pending = [...pids];
  if (!pending.length) return;
  for (const [pgid, g] of gcores) {
    if (pending.includes(g.pid)) {
      state.sendSignal(-pgid, 'SIGKILL');
      gcores.delete(pgid);
    }
  }
  const r = state.resumeSync(pending, { timeoutMs: 1000, everyMs: 20 });
  for (const pid of [...r.resumed, ...r.gone]) stopped.delete(pid);
  if (r.resumed.length) say(`resumed PID ${r.resumed.join(', ')} with SIGCONT: ${why}.`);
  if (r.stillStopped.length) say(`could NOT resume PID ${r.stillStopped.join(', ')} (${why}): run kill -CONT ${r.stillStopped.join(' ')}`);
}

function keepTime() {
  if (finishing) return;
  const now = Date.now();
  if (maxStopMs) {
    const over = [...stopped]
      .filter(([pid, s]) => now - s.since > maxStopMs && (s.start == null || state.sameProcess(pid, s.start)));
    release(over.map(([pid]) => pid), `stopped for more than ${Math.round(maxStopMs / 1000)} s, the longest a hit's handling may take`);
  }
  if (silentMs && now - heardAt > silentMs) {
    const ours = [...stopped].filter(([pid, s]) => s.start == null || state.sameProcess(pid, s.start))
      .map(([pid]) => pid);
    const unread = filter.pid || filter.name ? state.stoppedCandidates(filter).filter((pid) => !alreadyStopped.has(pid))
      : [];
    release(new Set([...ours, ...unread]), `nodetrace (PID ${config.parent}) has not answered for ${Math.round((now - heardAt) / 1000)} s`);
  }
}
if (maxStopMs || silentMs) setInterval(keepTime, CLOCK_MS);

let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  buf += d;
  let nl;
  while ((nl = buf.indexOf('\n')) >= 0) {
    handle(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
  }
});
process.stdin.on('end', () => finish('went away'));
process.stdin.on('error', () => finish('went away'));
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => finish(`'s watchdog got ${sig}`));

// Tell nodetrace we are in place, then never write to that pipe again.
process.stdout.write('ready\n', () => process.stdout.end());
