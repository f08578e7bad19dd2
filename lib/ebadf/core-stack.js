'use strict';
// The failing thread's stack, read from the core gcore saved, for tracers
// whose ustack() cannot be used while gcore runs: on DTrace for Linux,
// ustack() makes dtrace ptrace the target, and gcore then fails ("already
// traced by process N").  gdb unwinds the thread in the core; nodetrace then
// names the addresses from the map it snapshotted at the hit, as for every
// other stack (lib/symbolize.js), so JIT frames get their perf-map names.
const { runGdb } = require('../gdb-batch');

// `bt -frame-info location-and-address` prints every frame's address, also
// where gdb knows the source line (it leaves the address out otherwise).
function gdbArgs(exe, core) {
  return ['-batch', '-nx', '-ex', 'set pagination off', '-ex', 'set width 0',
    '-ex', 'thread apply all bt -frame-info location-and-address', ...(exe ? [exe, core] : ['-c', core])];
}

/**
 * Pure: the frames (hex addresses, innermost first) of thread `tid` in gdb's
 * `thread apply all bt` output; null when that thread is not in it.
 * A thread's heading is "Thread 3 (Thread 0x7f.. (LWP 1234) "name"):" or
 * "Thread 1 (LWP 1234):"; its frames "#0  0x00007f... in close () from ...".
 */
function parseThreadStack(text, tid) {
  let inThread = false;
  let frames = null;
  for (const line of String(text).split('\n')) {
    const heading = /^Thread \d+ \(.*\bLWP (\d+)\b/.exec(line);
    if (heading) {
      if (inThread) break;
      inThread = Number(heading[1]) === Number(tid);
      if (inThread) frames = [];
      continue;
    }
    if (!inThread) continue;
    const frame = /^#\d+\s+(0x[0-9a-f]+)\b/i.exec(line);
    if (!frame) continue;
    // Past JIT code (no unwind tables) gdb guesses, and a guess that lands
    // on a small integer ends what can be trusted.
    if (BigInt(frame[1]) < 0x1000n) inThread = false;
    else frames.push(frame[1].replace(/^0x0*(?=[0-9a-f])/i, '0x'));
  }
  return frames;
}

/**
 * Runs gdb on the core.  Resolves { frames } or { error } (one line).
 * @param {object} o { gdb, exe, core, tid, timeoutMs }
 */
async function stackFromCore(o) {
  const r = await runGdb(o.gdb, gdbArgs(o.exe, o.core), {
    timeoutMs: o.timeoutMs, slow: `gdb took longer than ${Math.round(o.timeoutMs / 1000)} s to read the core`,
  });
  if (r.error) return r;
  const frames = parseThreadStack(r.out, o.tid);
  return frames && frames.length ? { frames } : { error: `gdb found no stack for thread ${o.tid} in the core` };
}

module.exports = { stackFromCore, parseThreadStack, gdbArgs };
