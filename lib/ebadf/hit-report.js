'use strict';
// What nodetrace ebadf prints for each hit, and how to open the cores.
// Pure: records in, text out.
const path = require('path');
const { formatBytes } = require('./core');
const { displayCommand } = require('../tracer/plan');
const { containerText } = require('../proc/container');
const { describeErrno } = require('./errno');

const MAX_FRAME = 160;

function seconds(ms) {
  if (ms == null) return '?';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

function errnoText(rec) {
  const name = rec.errnoName || `errno ${rec.hit.errno}`;
  const desc = describeErrno(rec.hit.errno);
  return `${name} (errno ${rec.hit.errno}${desc ? ', ' + desc : ''})`;
}

function clip(s, n = MAX_FRAME) {
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

// Lines saying whether JavaScript frames could be named, and why not.
function jsNotes(rec) {
  const sym = rec.symbolized;
  if (!rec.isNode || !sym) return [];
  if (rec.perfMapRefused) return [`JavaScript frames are not named: ${rec.perfMapRefused}.`];
  if (!rec.perfMap) {
    return ['JavaScript frames are not named: the process was not started with --perf-basic-prof',
      '(run node with --perf-basic-prof --interpreted-frames-native-stack to name them).'];
  }
  const notes = [];
  if (sym.interpreted > 0) {
    notes.push(`${sym.interpreted} frame(s) ran in V8's interpreter and show as Builtins_InterpreterEntryTrampoline:`,
      'add --interpreted-frames-native-stack to node\'s options to name those too.');
  }
  if (sym.jitUnnamed > 0) notes.push(`${sym.jitUnnamed} JIT frame(s) are not in ${rec.perfMap}.`);
  return notes;
}

function frameText(f) {
  if (f.kind === 'js') return `${f.symbol}  [JS]`;
  if (f.kind === 'jit') return `${f.text}  [JIT code, not named]`;
  if (f.kind === 'named') return f.text;
  return f.module ? `${f.text} (${f.module})` : f.text;
}

function stackLines(rec) {
  const sym = rec.symbolized;
  if (!sym || sym.frames.length === 0) {
    if (rec.coreStackError) return [`    (no stack: ${rec.coreStackError})`];
    return rec.stackMissing ? ['    (the tracer did not print the stack)'] : ['    (no user stack: the thread was not in user code)'];
  }
  return sym.frames.map((f) => '    ' + clip(frameText(f)));
}

function stackHeading(rec) {
  const parts = ['innermost first'];
  if (rec.coreFrames) parts.push('read from the core with gdb (the tracer\'s own would have blocked gcore)');
  if (rec.perfMap && rec.symbolized && rec.symbolized.perfMapUsed) parts.push(`JavaScript frames named from ${rec.perfMap}`);
  if (rec.symbolized && rec.symbolized.unavailable) parts.push(rec.symbolized.unavailable);
  return `stack    ${parts.join('; ')}`;
}

// Where the process runs, as its container knows it: "PID 1, thread 7 in
// podman container web (2548ee601a87); /usr/local/bin/node is its path there".
function insideLine(rec) {
  const who = rec.who;
  if (!who || (who.pidInside === null && !who.container)) return null;
  const ids = who.pidInside !== null ? `PID ${who.pidInside}${rec.tidInside !== null && rec.tidInside !== undefined ? `, thread ${rec.tidInside}` : ''} ` : '';
  const where = containerText(who.container) || 'its own PID namespace';
  const exe = rec.exe && who.otherMounts ? `; ${rec.exe} is its path there` : '';
  return `${ids}in ${where}${exe}`;
}

/** @param {object} rec a hit record from lib/ebadf/watch.js */
function renderHit(rec) {
  const h = rec.hit;
  const lines = [];
  lines.push(`hit ${rec.n}${rec.of ? ` of ${rec.of}` : ''} at ${new Date(rec.wallMs).toISOString()}`);
  lines.push(`  process  PID ${h.pid} (${h.comm}), thread ${h.tid}${rec.exe ? ', ' + rec.exe : ''}`);
  const inside = insideLine(rec);
  if (inside) lines.push(`           ${inside}`);
  lines.push(`  call     ${h.syscall}() failed with ${errnoText(rec)}`);
  lines.push(`  action   ${rec.mode === 'abort' ? 'SIGABRT sent' : 'stopped (SIGSTOP)'} in the kernel as the call returned, before the program saw the error`);
  lines.push('  ' + stackHeading(rec));
  lines.push(...stackLines(rec).map((l) => '  ' + l));
  for (const note of jsNotes(rec)) lines.push('  ' + note);
  if (rec.mode === 'abort') {
    lines.push(`  outcome  ${rec.outcome}`);
    if (rec.coreNote) lines.push(`  core     ${rec.coreNote}`);
  } else {
    if (rec.beyondCount) {
      lines.push('  core     none: this hit came after the --count requested (several at once); resumed without a core');
    } else if (rec.core && rec.core.ok) {
      lines.push(`  core     ${rec.core.file} (${formatBytes(rec.core.size)}, owner-only -rw-------)`);
      if (rec.sysroot && rec.sysroot.root) lines.push(`  files    ${rec.sysroot.root}: its executable and libraries, at their paths in the container (${formatBytes(rec.sysroot.bytes)})`);
      else if (rec.sysroot) lines.push(`  files    its executable and libraries NOT saved beside the core: ${rec.sysroot.error}`);
    } else if (rec.core) {
      lines.push(`  core     NOT SAVED: ${rec.core.reason}`);
    } else if (rec.outcome) {
      lines.push(`  core     none: ${rec.outcome}`);
    }
    if (rec.stoppedMs != null) {
      lines.push(`  stopped  ${seconds(rec.stoppedMs)}${rec.core && rec.core.ok ? ` (gcore took ${seconds(rec.core.ms)})` : ''}`);
    }
    lines.push(`  resumed  ${rec.resumeText || '?'}`);
  }
  return lines.join('\n') + '\n';
}

/** How to open the cores that were saved. */
function renderOpenHelp(records, { llnode }) {
  const saved = records.filter((r) => r.core && r.core.ok);
  if (!saved.length) return '';
  const lines = ['', 'Open the core:'];
  for (const r of saved) {
    // A process in a container: its files beside the core (the sysroot).
    const root = r.sysroot && r.sysroot.root;
    const exe = r.exe ? (root ? path.join(root, r.exe) : r.exe) : 'PROGRAM';
    lines.push(`  ${displayCommand('gdb', [...(root ? ['-iex', `set sysroot ${root}`] : []), exe, r.core.file])}`);
    if (r.isNode && llnode) lines.push(`  ${displayCommand('llnode', [exe, '-c', r.core.file])}    # JavaScript stack and objects: v8 bt, v8 findjsobjects`);
  }
  if (saved.some((r) => r.isNode) && !llnode) {
    lines.push('  (for JavaScript stacks and objects, llnode reads the same core: npm install -g llnode)');
  }
  const r = saved[0];
  lines.push(`In gdb, \`thread find ${r.hit.tid}\` names the thread whose call failed; \`thread N\` then \`bt\` shows its stack.`);
  return lines.join('\n') + '\n';
}

module.exports = { renderHit, renderOpenHelp, seconds, jsNotes };
