'use strict';
// The registers a frame walk starts from, of every thread of a stopped
// process (and the thread pointer, fs_base: where V8 14 keeps a thread's
// isolate, lib/v8/dispatch-table.js), asked of gdb (installed with nodetrace for ebadf's cores):
// attaching is the only way to read another process's registers, and gdb
// attaches, reads and detaches in about 0.1 s when it is told to load no
// symbols (no sysroot, no auto-loaded scripts, no init files: the
// target's files are another user's). The process stays stopped.
const { runGdb } = require('../gdb-batch');

const REGISTERS = ['rip', 'rsp', 'rbp'];
// gdb's name -> ours; not required (a gdb that does not know it leaves it out).
const MORE = { fs_base: 'fsBase' };

function gdbArgs(pid) {
  return ['-nx', '-batch', '-ex', 'set auto-load off', '-ex', 'set sysroot /nonexistent', '-ex', 'set pagination off',
    '-ex', `attach ${pid}`, '-ex', `thread apply all info registers ${[...REGISTERS, ...Object.keys(MORE)].join(' ')}`];
}

/**
 * Pure: gdb's `thread apply all info registers rip rsp rbp fs_base` output ->
 * Map(tid -> { rip, rsp, rbp, fsBase? }). A thread is headed "Thread N (Thread 0x..
 * (LWP TID) "name"):", "(LWP TID)" alone, or "(process PID "name")" (a
 * process of one thread).
 */
function parseRegisters(text) {
  const threads = new Map();
  let current = null;
  for (const line of String(text).split('\n')) {
    const heading = /^Thread \d+ \(.*\b(?:LWP|process) (\d+)\b/.exec(line);
    if (heading) {
      current = {};
      threads.set(Number(heading[1]), current);
      continue;
    }
    const reg = /^(rip|rsp|rbp|fs_base)\s+0x([0-9a-f]+)\b/.exec(line);
    if (reg && current) current[MORE[reg[1]] || reg[1]] = parseInt(reg[2], 16);
  }
  for (const [tid, r] of threads) if (!REGISTERS.every((n) => Number.isSafeInteger(r[n]))) threads.delete(tid);
  return threads;
}

/**
 * Resolves Map(tid -> registers) of stopped process `pid`, or { error } in one line.
 * @param {object} o { gdb (path), timeoutMs }
 */
async function registersOf(pid, { gdb, timeoutMs = 10000 }) {
  const r = await runGdb(gdb, gdbArgs(pid), { timeoutMs, slow: `gdb took longer than ${Math.round(timeoutMs / 1000)} s to read the registers of ${pid}` });
  if (r.error) return r;
  const threads = parseRegisters(r.out);
  if (threads.size) return threads;
  return { error: `gdb could not read the registers of ${pid}${/ptrace|Operation not permitted/.test(r.err) ? ' (ptrace not permitted)' : ''}` };
}

module.exports = { registersOf, parseRegisters, gdbArgs };
