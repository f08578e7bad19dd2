'use strict';
// What nodetrace ebadf prints for each hit, and how to open the cores.
// Pure: records in, text out.
const path = require('path');
const { formatBytes } = require('./core');
const { displayCommand } = require('../tracer/plan');
const { containerText } = require('../proc/container');
const { describeErrno } = require('./errno');
const { crossCheck } = require('./js-stack');
const { safeText } = require('../terminal-safe');
const { frameLines, endWorthSaying } = require('../stack/render');

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

// The walk with V8's metadata (lib/ebadf/js-stack.js), when it gave frames.
function walked(rec) {
  const w = rec.jsStack;
  return w && w.frames && w.frames.length ? w : null;
}

// Lines saying whether JavaScript frames could be named, how, and why not.
function jsNotes(rec) {
  const sym = rec.symbolized;
  const w = walked(rec);
  if (w) {
    const notes = [];
    if (w.note) notes.push(`${w.note}.`);
    if (endWorthSaying(w)) notes.push(`The walk ended at ${w.ended}.`);
    // Not needed for names now, but what sits at the perf map's path (a
    // FIFO, another user's file, a huge one) is still worth knowing.
    if (rec.perfMapRefused) notes.push(`${rec.perfMapRefused}; the walk did not need it.`);
    if (rec.perfMap && sym) {
      const check = crossCheck(w.frames, sym.frames);
      if (check.compared && !check.differ.length) notes.push(`${rec.perfMap} names the ${check.compared} JavaScript frame(s) it has the same.`);
      for (const d of check.differ) notes.push(`${rec.perfMap} names ${d.walk} otherwise: ${d.perfMap}.`);
    }
    return notes;
  }
  if (!rec.isNode || !sym) return [];
  const why = rec.jsStack && (rec.jsStack.error || rec.jsStack.note);
  if (rec.perfMapRefused) return [`JavaScript frames are not named: ${why ? `${why}; ` : ''}${rec.perfMapRefused}.`];
  if (!rec.perfMap) {
    return [`JavaScript frames are not named: ${why || 'the stopped process was not walked'}.`];
  }
  const notes = why ? [`JavaScript frames named from ${rec.perfMap} only: ${why}.`] : [];
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
  const w = walked(rec);
  if (w) return frameLines(w.frames).map((l) => '    ' + l);
  const sym = rec.symbolized;
  if (!sym || sym.frames.length === 0) {
    if (rec.coreStackError) return [`    (no stack: ${rec.coreStackError})`];
    if (rec.stackMissing) return ['    (the tracer did not print the stack)'];
    // Every hit is at a system call's return: the thread was in user code,
    // so an empty user stack is one the tracer lost (bpftrace before 0.25
    // drops a stack whose place in its stack map another holds:
    // docs/platforms.md, "where ustack is kept").
    return ['    (no user stack: the tracer printed none, though the thread was returning from a system call;'
      + ' bpftrace before 0.25 loses a stack whose place in its stack map another took: docs/platforms.md)'];
  }
  return sym.frames.map((f) => '    ' + clip(frameText(f)));
}

function stackHeading(rec) {
  const parts = ['innermost first'];
  const w = walked(rec);
  if (w) {
    parts.push(`walked in the ${w.from === 'core' ? 'core' : 'stopped process'}, JavaScript frames named from V8's own metadata`);
  } else {
    if (rec.coreFrames) parts.push('read from the core with gdb (the tracer\'s own would have blocked gcore)');
    if (rec.perfMap && rec.symbolized && rec.symbolized.perfMapUsed) parts.push(`JavaScript frames named from ${rec.perfMap}`);
  }
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
  // The thread's name, paths and frames are the target's: each line kept one.
  return lines.map((l) => safeText(l, { oneLine: true })).join('\n') + '\n';
}

/** How to open the cores that were saved. */
function renderOpenHelp(records) {
  const saved = records.filter((r) => r.core && r.core.ok);
  if (!saved.length) return '';
  const lines = ['', 'Open the core:'];
  for (const r of saved) {
    // A process in a container: its files beside the core (the sysroot).
    const root = r.sysroot && r.sysroot.root;
    const exe = r.exe ? (root ? path.join(root, r.exe) : r.exe) : 'PROGRAM';
    if (r.isNode) lines.push(`  ${displayCommand('nodetrace', ['stack', r.core.file, ...(root ? ['--root', root] : [])])}    # every thread's JavaScript and native stack`);
    lines.push(`  ${displayCommand('gdb', [...(root ? ['-iex', `set sysroot ${root}`] : []), exe, r.core.file])}`);
  }
  const r = saved[0];
  lines.push(`In gdb, \`thread find ${r.hit.tid}\` names the thread whose call failed; \`thread N\` then \`bt\` shows its stack.`);
  return lines.join('\n') + '\n';
}

module.exports = { renderHit, renderOpenHelp, seconds, jsNotes };
