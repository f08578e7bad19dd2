'use strict';
// What /proc/PID/stat and /proc/PID/status say about one process. Depends on
// nothing but fs and the bounded reader (itself only lib/limits.js), so that
// ebadf's watchdog, a process of its own that must start fast and never
// fail, can use it too.
const { readProcText: readText } = require('./read-bounded');

// /proc/PID/stat: the name (comm) sits between the first '(' and the last
// ')' and may itself hold spaces and parentheses, so fields are counted from
// the last ')'.
function parseStat(text) {
  const close = text.lastIndexOf(')');
  const rest = text.slice(close + 2).split(' ');
  // rest[0] is field 3 (state), rest[1] field 4 (ppid), rest[6] field 9
  // (flags), rest[11] and rest[12] fields 14 and 15 (utime, stime),
  // rest[19] field 22 (starttime).
  return {
    comm: text.slice(text.indexOf('(') + 1, close),
    state: rest[0],
    ppid: Number(rest[1]),
    flags: Number(rest[6]),
    cpuTicks: Number(rest[11]) + Number(rest[12]),
    startTime: rest[19],
  };
}

function readStat(pid) {
  const text = readText(`/proc/${pid}/stat`);
  return text === null ? null : parseStat(text);
}

// 'R', 'S', 'D', 'T' (stopped by a signal), 't' (stopped by a tracer, e.g.
// gdb), 'Z', or null when there is no such process.
function procState(pid) {
  const st = readStat(pid);
  return st ? st.state : null;
}

function startTime(pid) {
  const st = readStat(pid);
  return st ? st.startTime : null;
}

// When the process started, in ms since the epoch (the boot time of
// /proc/stat plus its start in clock ticks, USER_HZ: 100 a second), or null.
function startedAtMs(pid) {
  const start = startTime(pid);
  const boot = /^btime (\d+)$/m.exec(readText('/proc/stat') || '');
  return start === null || !boot ? null : Number(boot[1]) * 1000 + Number(start) * 10;
}

// CPU time the process (all its threads) has used, user and system, in
// clock ticks (USER_HZ: 100 a second), or null when it is gone.
function cpuTicks(pid) {
  const st = readStat(pid);
  return st ? st.cpuTicks : null;
}

// Same process as when we looked before (guards against PID reuse).
function sameProcess(pid, start) {
  return start != null && startTime(pid) === start;
}

// One line of /proc/PID/status ("Tgid:\t4242"), as text, or null.
function statusValue(pid, field) {
  const text = readText(`/proc/${pid}/status`);
  if (text === null) return null;
  const m = new RegExp(`^${field}:\\s*(.*)$`, 'm').exec(text);
  return m ? m[1].trim() : null;
}

// A size field of /proc/PID/status ("VmSize:  711004 kB") in bytes, or null.
function statusBytes(pid, field) {
  const m = /^([0-9]+) kB$/.exec(statusValue(pid, field) || '');
  return m ? Number(m[1]) * 1024 : null;
}

// The real user ID the process runs as, or null.
function uidOf(pid) {
  const m = /^([0-9]+)/.exec(statusValue(pid, 'Uid') || '');
  return m ? Number(m[1]) : null;
}

// The process a thread ID belongs to (its thread group), or null. /proc
// answers for thread IDs too, though they are not listed in it.
function tgidOf(id) {
  const v = statusValue(id, 'Tgid');
  return v && /^[0-9]+$/.test(v) ? Number(v) : null;
}

module.exports = { parseStat, readStat, procState, startTime, startedAtMs, cpuTicks, sameProcess, statusValue,
  statusBytes, uidOf, tgidOf };
