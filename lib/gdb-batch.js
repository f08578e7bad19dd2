'use strict';
// Runs gdb in batch mode, bounded: its own process group (killed whole when
// done or too slow), output kept up to a bound. For reading a core's stack
// (lib/ebadf/core-stack.js) and a stopped process's registers
// (lib/v8/registers.js). No shell: the arguments go to gdb as they are.
const { spawn } = require('child_process');

const MAX_OUTPUT = 16 << 20;

/**
 * Resolves { out } (gdb's stdout), or { error } in one line: `slow` when it
 * ran longer than timeoutMs, or that it could not be run.
 */
function runGdb(gdb, args, { timeoutMs, slow }) {
  return new Promise((resolve) => {
    let out = '';
    let err = '';
    let done = false;
    const child = spawn(gdb, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const finish = (value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
      resolve(value);
    };
    const timer = setTimeout(() => finish({ error: slow }), timeoutMs);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d) => { if (out.length < MAX_OUTPUT) out += d; });
    child.stderr.on('data', (d) => { if (err.length < 4096) err += d; });
    child.on('error', (e) => finish({ error: `cannot run ${gdb}: ${e.code || e.message}` }));
    child.on('close', () => finish({ out, err }));
  });
}

module.exports = { runGdb };
