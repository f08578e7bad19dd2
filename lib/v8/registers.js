'use strict';
// The registers a frame walk starts from, of every thread of a stopped
// process, asked of gdb (installed with nodetrace for ebadf's cores):
// attaching is the only way to read another process's registers, and gdb
// attaches, reads and detaches in about 0.1 s when it is told to load no
// symbols (no sysroot, no auto-loaded scripts, no init files: the
// target's files are another user's). The process stays stopped.
const { spawn } = require('child_process');

const REGISTERS = ['rip', 'rsp', 'rbp'];

function gdbArgs(pid) {
  return ['-nx', '-batch', '-ex', 'set auto-load off', '-ex', 'set sysroot /nonexistent', '-ex', 'set pagination off',
    '-ex', `attach ${pid}`, '-ex', `thread apply all info registers ${REGISTERS.join(' ')}`];
}

/**
 * Pure: gdb's `thread apply all info registers rip rsp rbp` output ->
 * Map(tid -> { rip, rsp, rbp }). A thread is headed "Thread N (Thread 0x..
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
    const reg = /^(rip|rsp|rbp)\s+0x([0-9a-f]+)\b/.exec(line);
    if (reg && current) current[reg[1]] = parseInt(reg[2], 16);
  }
  for (const [tid, r] of threads) if (!REGISTERS.every((n) => Number.isSafeInteger(r[n]))) threads.delete(tid);
  return threads;
}

/**
 * Resolves Map(tid -> registers) of stopped process `pid`, or { error } in one line.
 * @param {object} o { gdb (path), timeoutMs }
 */
function registersOf(pid, { gdb, timeoutMs = 10000 }) {
  return new Promise((resolve) => {
    let out = '';
    let err = '';
    let done = false;
    const child = spawn(gdb, gdbArgs(pid), { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const finish = (value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try { process.kill(-child.pid, 'SIGKILL'); } catch (e) { /* gone */ }
      resolve(value);
    };
    const timer = setTimeout(() => finish({ error: `gdb took longer than ${Math.round(timeoutMs / 1000)} s to read the registers of ${pid}` }), timeoutMs);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d) => { if (out.length < 1 << 20) out += d; });
    child.stderr.on('data', (d) => { if (err.length < 4096) err += d; });
    child.on('error', (e) => finish({ error: `cannot run ${gdb}: ${e.code || e.message}` }));
    child.on('close', () => {
      const threads = parseRegisters(out);
      if (threads.size) finish(threads);
      else finish({ error: `gdb could not read the registers of ${pid}${/ptrace|Operation not permitted/.test(err) ? ' (ptrace not permitted)' : ''}` });
    });
  });
}

module.exports = { registersOf, parseRegisters, gdbArgs };
