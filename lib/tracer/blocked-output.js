'use strict';
// Whether a tracer is blocked writing its output to nodetrace: a thread of
// it asleep in a write to its stdout or stderr, the sockets nodetrace reads,
// which are full because nodetrace has not read them (its event loop held:
// a stop, a loaded host, a long piece of work). A signal with a handler that
// lands then cuts the write short (EINTR: bpftrace installs its SIGINT,
// SIGTERM and SIGUSR1 handlers without SA_RESTART), and bpftrace 0.24 and
// later write nothing more to a stream whose write failed once: END's output
// and the maps are lost, and it exits 0 (docs/security.md). So nodetrace
// signals a tracer only when this says no (lib/tracer/session.js).
// Read from /proc/PID/task/TID/syscall, which names the call a sleeping
// thread is in and its arguments ("running" for a thread on a CPU).
const fs = require('fs');
const { readUpTo } = require('../proc/read-bounded');

// The calls that write to a descriptor given as their first argument, by
// architecture (the kernel's syscall tables): write, pwrite64, writev,
// sendto, sendmsg, pwritev, pwritev2. On another architecture nothing is
// known to block, and signals go at once, as they did before.
const WRITE_CALLS = Object.freeze({
  x64: new Set([1, 18, 20, 44, 46, 296, 328]),
  arm64: new Set([64, 68, 66, 206, 211, 70, 287]),
});

// The file is a call number and eight hexadecimal words (under 200 bytes).
const SYSCALL_FILE_BYTES = 256;
// A tracer's threads looked at: bpftrace writes from its main thread (looked
// at first) and runs a few others; nodetrace's own child, not another user's
// process, but bounded all the same.
const MAX_THREADS = 64;

/**
 * The call a thread is asleep in, from its syscall file's text: { nr, fd }
 * (fd: the first argument, a descriptor for the calls above), or null when
 * it is running or not in a call ("running", "-1 SP PC").
 */
function callOf(text) {
  const m = /^([0-9]{1,5}) 0x([0-9a-f]{1,16})(?: |$)/.exec(text);
  if (!m) return null;
  const first = BigInt(`0x${m[2]}`);
  return { nr: Number(m[1]), fd: first <= 0xffffn ? Number(first) : null };
}

/** Whether a syscall file's text says its thread is asleep writing to one of `fds`. */
function writesTo(text, fds, arch = process.arch) {
  const calls = WRITE_CALLS[arch];
  const call = calls ? callOf(text) : null;
  return Boolean(call && calls.has(call.nr) && fds.includes(call.fd));
}

/**
 * Whether a thread of `pid` is asleep writing to one of `fds` (default: its
 * stdout and stderr). False when it cannot be told (the process gone, an
 * architecture not in the table).
 */
function blockedWritingOutput(pid, fds = [1, 2], arch = process.arch) {
  if (!WRITE_CALLS[arch]) return false;
  let tids;
  try { tids = fs.readdirSync(`/proc/${pid}/task`); } catch { return false; }
  const main = String(pid);
  tids = [main, ...tids.filter((t) => t !== main)].slice(0, MAX_THREADS);
  return tids.some((tid) => {
    const read = readUpTo(`/proc/${pid}/task/${tid}/syscall`, SYSCALL_FILE_BYTES);
    return read !== null && writesTo(read.text, fds, arch);
  });
}

module.exports = { blockedWritingOutput, writesTo, callOf };
