'use strict';
// What nodetrace ebadf loads into the kernel: one of the checked-in scripts
// (d-scripts/ebadf-stop-gcore.{d,bt}, d-scripts/ebadf-abort.{d,bt}) run as
// they are, with the PID or name, errno, hit count and mode as tracer
// arguments, never pasted into program text.
//
// The scripts watch close(). For other system calls, or several errnos, the
// program is derived from the same file by replacing exactly three marked
// things: the probe line, the errno test and the "close()" in the banner,
// with names already validated (syscalls against the kernel's tracepoints,
// errnos against a fixed table). --dry-run prints the derived program.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { scriptPath, readScript, tracerArgs, displayCommand } = require('../tracer/programs');

const SCRIPTS = Object.freeze({ stop: 'ebadf-stop-gcore', abort: 'ebadf-abort' });

// The exact text each derivation replaces, and how many times it must occur.
const MARKS = Object.freeze({
  bpftrace: {
    probe: { re: /^tracepoint:syscalls:sys_exit_close$/gm, count: 1 },
    errno: { text: 'args->ret == -($3 ? $3 : 9)', count: 1 },
    banner: { text: 'for close() failing with errno %d', count: 2 },
  },
  dtrace: {
    probe: { re: /^syscall::close:return$/gm, countByScript: { 'ebadf-stop-gcore': 4, 'ebadf-abort': 2 } },
    errno: { text: 'errno == WANT_ERRNO', count: 1 },
    banner: { text: 'for close() failing with errno %d', count: 2 },
  },
});

function needsDerivation(syscalls, errnos) {
  return !(syscalls.length === 1 && syscalls[0] === 'close' && errnos.length === 1);
}

function replaceExactly(text, search, replacement, count, what) {
  const parts = text.split(search);
  if (parts.length - 1 !== count) {
    throw new Error(`cannot derive the program: expected ${count} ${what} in the script, found ${parts.length - 1}`);
  }
  return parts.join(replacement);
}

function replaceRegex(text, re, replacement, count, what) {
  const found = (text.match(re) || []).length;
  if (found !== count) throw new Error(`cannot derive the program: expected ${count} ${what} in the script, found ${found}`);
  return text.replace(re, replacement);
}

/**
 * The program text for these syscalls and errnos, derived from the script.
 * Inputs must already be validated (lib/ebadf/syscalls.js, errno.js).
 */
function deriveProgram(text, { tracerName, script, syscalls, errnos }) {
  const marks = MARKS[tracerName];
  const isD = tracerName === 'dtrace';
  for (const s of syscalls) if (!/^[a-z_][a-z0-9_]*$/.test(s)) throw new Error(`unvalidated syscall name ${s}`);
  for (const e of errnos) if (!/^E[A-Z0-9]+$/.test(e.name) || !Number.isInteger(e.number)) throw new Error('unvalidated errno');

  const probes = syscalls.map((s) => (isD ? `syscall::${s}:return` : `tracepoint:syscalls:sys_exit_${s}`)).join(',\n');
  const probeCount = marks.probe.count || marks.probe.countByScript[script];
  let out = replaceRegex(text, marks.probe.re, probes, probeCount, 'probe lines');
  if (errnos.length > 1) {
    const test = '(' + errnos.map((e) => (isD ? `errno == ${e.name}` : `args->ret == -${e.number}`)).join(' || ') + ')';
    out = replaceExactly(out, marks.errno.text, test, marks.errno.count, 'errno tests');
  }
  const more = errnos.length > 1 ? ` (or ${errnos.slice(1).map((e) => e.name).join(', ')})` : '';
  const banner = `for ${syscalls.map((s) => s + '()').join(', ')} failing with errno %d${more}`;
  out = replaceExactly(out, marks.banner.text, banner, marks.banner.count, 'banner lines');

  const note = `/* Derived by nodetrace ebadf from d-scripts/${script}${isD ? '.d' : '.bt'}: system calls `
    + `${syscalls.join(', ')}; errnos ${errnos.map((e) => `${e.name} (${e.number} on Linux)`).join(', ')}. */\n`;
  if (out.startsWith('#!')) {
    const nl = out.indexOf('\n') + 1;
    return out.slice(0, nl) + note + out.slice(nl);
  }
  return note + out;
}

/**
 * @param {object} o
 * @param {object} o.tracer from detect.js
 * @param {'stop'|'abort'} o.mode
 * @param {number} [o.pid]  @param {string} [o.name]
 * @param {string[]} o.syscalls  @param {{name,number}[]} o.errnos  @param {number} o.count
 */
function buildProgram(o) {
  const script = SCRIPTS[o.mode];
  const isD = o.tracer.name === 'dtrace';
  const macros = [o.pid || 0, o.pid ? '-' : o.name, isD ? o.errnos[0].name : o.errnos[0].number, o.count];
  if (o.mode === 'stop') macros.push(1); // only stop and report: nodetrace takes the core
  const file = scriptPath(script, o.tracer.name);
  let text = readScript(script, o.tracer.name);
  const derived = needsDerivation(o.syscalls, o.errnos);
  if (derived) text = deriveProgram(text, { tracerName: o.tracer.name, script, syscalls: o.syscalls, errnos: o.errnos });
  // bpftrace's own symbolization reads the target's maps when it prints,
  // seconds later on a busy host, and loses everything if the process has
  // gone; nodetrace snapshots the maps at the hit and symbolizes itself.
  const env = isD ? {} : { BPFTRACE_NO_USER_SYMBOLS: '1' };
  return {
    tracer: o.tracer, mode: o.mode, script, file, text, derived, macros, env,
    args: tracerArgs(o.tracer, { script, destructive: true, macros }),
  };
}

// A derived program lives in a private directory; the argv then names it.
function writeDerivedProgram(program, dir) {
  const base = dir || fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-ebadf-'));
  const file = path.join(base, path.basename(program.file));
  fs.writeFileSync(file, program.text, { mode: 0o600 });
  return { dir: base, file, args: program.args.map((a) => (a === program.file ? file : a)) };
}

function displayProgramCommand(program, args = program.args) {
  const env = Object.entries(program.env).map(([k, v]) => `${k}=${v} `).join('');
  return env + displayCommand(program.tracer.path, args);
}

module.exports = { SCRIPTS, buildProgram, deriveProgram, needsDerivation, writeDerivedProgram, displayProgramCommand };
