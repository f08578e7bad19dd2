'use strict';
// What nodetrace ebadf loads into the kernel: one of the checked-in scripts
// (d-scripts/ebadf-stop-gcore.{d,bt}, d-scripts/ebadf-abort.{d,bt}), with the
// PID or name, the errnos and the hit count as its arguments, never pasted
// into program text. The scripts watch close(); other system calls replace
// the script's declared probe (lib/tracer/template.js), as neither tracer
// can take a list of probes as arguments. Pure.
const { planTracer, readScript } = require('../tracer/plan');
const { instantiateProbes } = require('../tracer/template');
const { rawUserStackEnv } = require('../tracer/capabilities');

const { ustackBlocksGcore } = require('../tracer/capabilities');

const SCRIPTS = Object.freeze({ stop: 'ebadf-stop-gcore', abort: 'ebadf-abort' });
// The scripts take the first errno (ERRNO) and up to three more (MORE_ERRNOS).
const MAX_ERRNOS = 4;

function probeFor(tracerName, syscall) {
  return tracerName === 'dtrace' ? `syscall::${syscall}:return` : `tracepoint:syscalls:sys_exit_${syscall}`;
}

/**
 * @param {object} o
 * @param {object} o.tracer from detect.js
 * @param {'stop'|'abort'} o.mode
 * @param {number} [o.pid]  @param {string} [o.name]
 * @param {string[]} o.syscalls  validated (syscalls.js)
 * @param {{name, number}[]} o.errnos  validated (errno.js), at most MAX_ERRNOS
 * @param {number} o.count
 * @returns a plan (lib/tracer/plan.js)
 */
function planEbadf(o) {
  if (o.errnos.length > MAX_ERRNOS) throw new Error(`at most ${MAX_ERRNOS} errnos`);
  const script = SCRIPTS[o.mode];
  const isD = o.tracer.name === 'dtrace';
  const errno = (e) => (isD ? e.name : e.number);
  const args = {
    PID: o.pid || 0, NAME: o.pid ? '-' : o.name, ERRNO: errno(o.errnos[0]), HITS: o.count,
    MORE_ERRNOS: o.errnos.slice(1).map(errno),
  };
  // Only stop and report: nodetrace takes the core and resumes the process.
  if (o.mode === 'stop') args.REPORT_ONLY = 1;
  // The D script's ustack() only where it does not block gcore; elsewhere
  // (DTrace for Linux) nodetrace reads the stack from the core it took.
  if (o.mode === 'stop' && isD) args.USTACK = ustackBlocksGcore(o.tracer) ? 0 : 1;
  let programText;
  if (!(o.syscalls.length === 1 && o.syscalls[0] === 'close')) {
    programText = instantiateProbes(readScript(script, o.tracer.name),
      o.syscalls.map((s) => probeFor(o.tracer.name, s)),
      `Instantiated by nodetrace ebadf from d-scripts/${script}${isD ? '.d' : '.bt'} for system calls ${o.syscalls.join(', ')}.`);
  }
  return planTracer(o.tracer, {
    script, programText, args, destructive: true,
    // bpftrace's own symbolization reads the target's maps when it prints,
    // seconds later on a busy host, and loses everything if the process has
    // gone; nodetrace snapshots the maps at the hit and symbolizes itself.
    env: rawUserStackEnv(o.tracer),
    describe: o.pid ? `PID ${o.pid}` : `processes named ${o.name}`,
  });
}

module.exports = { SCRIPTS, MAX_ERRNOS, planEbadf, probeFor };
