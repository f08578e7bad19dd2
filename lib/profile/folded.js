'use strict';
// Folded stacks: one line per distinct stack, root first, frames joined by
// ";", then a space and the sample count; the text flamegraph.pl, inferno
// and speedscope read. The thread's role is the root frame. Pure.
const { safeText } = require('../terminal-safe');

// ";" separates frames and a newline ends a stack: neither may appear in a
// name, and other control characters are shown, not kept (a name is the
// target's text: a function's, a process's).
function foldedName(name) {
  return safeText(String(name).replace(/[;\r\n]/g, ' '), { oneLine: true });
}

// The thread by what it is, where the command said (s.thread: lib/threads/roles.js threadLabel).
function rootFrame(s, pid) {
  return `${s.comm} (${s.thread || (s.tid === pid ? 'main thread' : 'thread')})`;
}

// A function inlined into its caller: its name marked `_[i]`, as perf's
// stackcollapse marks one, which flamegraph.pl (--color=java) draws in its
// own colour and strips from the name it shows.
const INLINED = '_[i]';

/** Lines "root;frame;frame N", merged and sorted, from nameStacks()'s output. */
function foldedLines(named, { pid } = {}) {
  const counts = new Map();
  for (const s of named.stacks) {
    const line = [foldedName(rootFrame(s, pid)), ...s.frames.map((f) => foldedName(f.name) + (f.inlined ? INLINED : ''))].join(';');
    counts.set(line, (counts.get(line) || 0) + s.count);
  }
  return [...counts.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

function renderFolded(named, o) {
  return foldedLines(named, o).map(([line, n]) => `${line} ${n}\n`).join('');
}

/** The inverse, for tests and for reading a folded file: [{ frames, count }]. */
function parseFolded(text) {
  const out = [];
  for (const line of String(text).split('\n')) {
    const m = /^(.*) (\d+)$/.exec(line);
    if (m) out.push({ frames: m[1].split(';'), count: Number(m[2]) });
  }
  return out;
}

module.exports = { renderFolded, parseFolded, foldedLines, foldedName };
