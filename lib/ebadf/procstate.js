'use strict';
// Process state from /proc, and the one thing this command must never fail
// at: resuming what it stopped. Used by nodetrace and by its watchdog, so it
// depends on nothing but fs.
const fs = require('fs');
const { readStat, procState, startTime, sameProcess, statusBytes } = require('../proc/stat');
const { sleepSync } = require('../clock');

function isStopped(pid) {
  const s = procState(pid);
  return s === 'T' || s === 't';
}

// PIDs matching the filter: the PID itself, or every process whose comm is name.
function candidates({ pid, name }) {
  if (pid) return procState(pid) ? [pid] : [];
  const out = [];
  let entries = [];
  try { entries = fs.readdirSync('/proc'); } catch { return out; }
  for (const e of entries) {
    if (!/^[0-9]+$/.test(e)) continue;
    const st = readStat(Number(e));
    if (st && st.comm === name) out.push(Number(e));
  }
  return out;
}

function stoppedCandidates(filter) {
  return candidates(filter).filter((p) => procState(p) === 'T');
}

function sendSignal(pid, signal) {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

// One pass over the PIDs still pending: SIGCONT those stopped by a signal,
// settle those running again or gone. 't' (a tracer holds it) gets SIGCONT
// too and is left pending until the tracer detaches.
// With --count > 1 a resumed process can fail again at once and be stopped
// by the next hit; a second SIGCONT would then undo that stop. So with
// `lastSent` (pid -> when it was told), a PID found stopped again counts as
// resumed when `restopped(pid)` says a newer hit has arrived for it, and is
// told again only once `settleMs` have passed without one.
function resumePass(pending, resumed, gone, { lastSent = null, restopped = null, settleMs = 0 } = {}) {
  for (const pid of [...pending]) {
    const s = procState(pid);
    if (s === null || s === 'Z' || s === 'X') { pending.delete(pid); gone.push(pid); continue; }
    if (s !== 'T' && s !== 't') { pending.delete(pid); resumed.push(pid); continue; }
    const sentAt = lastSent ? lastSent.get(pid) : undefined;
    if (sentAt !== undefined && restopped && restopped(pid)) { pending.delete(pid); resumed.push(pid); continue; }
    if (sentAt !== undefined && Date.now() - sentAt < settleMs) continue;
    sendSignal(pid, 'SIGCONT');
    if (lastSent) lastSent.set(pid, Date.now());
  }
}

/**
 * SIGCONT each PID until none is stopped by a signal any more (or gone),
 * sending it again every `everyMs` up to `timeoutMs`. Synchronous on purpose:
 * it runs on the way out, when nothing else should.
 * @returns {{resumed: number[], gone: number[], stillStopped: number[]}}
 */
function resumeSync(pids, { timeoutMs = 3000, everyMs = 50 } = {}) {
  const pending = new Set(pids);
  const resumed = [];
  const gone = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    resumePass(pending, resumed, gone);
    if (pending.size === 0 || Date.now() >= deadline) break;
    sleepSync(everyMs);
  }
  return { resumed, gone, stillStopped: [...pending] };
}

// Async version for the normal path (does not block the event loop);
// `restopped` and `settleMs` as for resumePass.
async function resume(pids, { timeoutMs = 3000, everyMs = 20, restopped = null, settleMs = 0 } = {}) {
  const pending = new Set(pids);
  const resumed = [];
  const gone = [];
  const told = { lastSent: new Map(), restopped, settleMs };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    resumePass(pending, resumed, gone, told);
    if (pending.size === 0 || Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return { resumed, gone, stillStopped: [...pending] };
}

// Waits (polling) until `pid` is stopped by a signal; false if it never is.
async function waitStopped(pid, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = procState(pid);
    if (s === 'T' || s === 't') return true;
    if (s === null || s === 'Z' || Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 5));
  }
}

module.exports = {
  procState, isStopped, startTime, sameProcess, statusBytes, candidates, stoppedCandidates,
  sendSignal, sleepSync, resumeSync, resume, waitStopped,
};
