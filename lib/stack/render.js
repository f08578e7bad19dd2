'use strict';
// How a walked stack (lib/v8/walk.js frames) reads: one line a frame, for
// ebadf's hit and `nodetrace stack`; and the stacks of a core, in text and
// JSON. Pure: frames in, text out. Names, a core's command line and notes
// are the target's: each kept on its line, escaped (lib/terminal-safe.js).
const { safeText, safeJson } = require('../terminal-safe');

const MAX_FRAME = 160;

function clip(s, n = MAX_FRAME) {
  const line = safeText(s, { oneLine: true });
  return line.length > n ? line.slice(0, n - 1) + '…' : line;
}

/** One frame: `closeTwice (/app/x.js:39:20)  [JS, interpreted]`, `uv_run+756 (node)`. */
function frameLine(f) {
  if (f.kind === 'js') return clip(`${f.text}  [JS${f.tier ? ', ' + f.tier : ''}]`);
  if (f.kind === 'jit') return clip(`${f.text}  [JIT code, not named]`);
  return clip(f.module ? `${f.text} (${f.module})` : f.text);
}

const GAP = '… (frames of code that keeps no frame pointer: not shown)';

/**
 * Every frame's line, and where the walk went past a gap (lib/v8/walk.js
 * afterGap), a line saying so; above a compiled frame, the functions its
 * code inlined where it ran (lib/v8/inlining.js), innermost first.
 */
function frameLines(frames) {
  const lines = [];
  for (const f of frames) {
    if (f.afterGap) lines.push(GAP);
    for (const r of f.inlined || []) lines.push(clip(`${r ? r.text : '(unknown)'}  [JS, inlined]`));
    lines.push(frameLine(f));
  }
  return lines;
}

/**
 * Whether the way a walk ended is worth a line: not at the bottom of
 * native code (a C library's frames keep no frame pointer: the usual end
 * below main), but inside V8's frames, or at the depth bound.
 */
function endWorthSaying({ frames, ended }) {
  if (/^stopped at/.test(ended)) return true;
  if (/outermost/.test(ended)) return false;
  const last = frames[frames.length - 1];
  return Boolean(last && last.kind !== 'native');
}

/**
 * The stacks of a core, as `nodetrace stack` prints them.
 * @param {object} m { file, pid, command, v8 (version text or null), notes: [],
 *   threads: [{ tid, frames, ended }] }
 */
function renderStacksText(m) {
  const lines = [safeText(`core ${m.file}: PID ${m.pid}${m.command ? ` (${m.command})` : ''}, ${m.threads.length} thread(s)`
    + `${m.v8 ? `, V8 ${m.v8} in ${m.object}` : ''}`, { oneLine: true })];
  for (const n of m.notes) lines.push(safeText(`note: ${n}`, { oneLine: true }));
  for (const t of m.threads) {
    const js = t.frames.filter((f) => f.kind === 'js').length;
    lines.push('', `thread ${t.tid}${t.tid === m.pid ? ' (main)' : ''}: ${t.frames.length} frame(s), ${js} JavaScript, innermost first`);
    for (const l of frameLines(t.frames)) lines.push('  ' + l);
    if (endWorthSaying(t)) lines.push(safeText(`  (the walk ended at ${t.ended})`, { oneLine: true }));
  }
  return lines.join('\n') + '\n';
}

function frameJson(f) {
  const out = { kind: f.kind, text: f.text, pc: '0x' + f.pc.toString(16) };
  if (f.afterGap) out.afterGap = true;
  if (f.kind === 'js') {
    Object.assign(out, { name: f.name, inferred: Boolean(f.inferred), file: f.file, line: f.line, column: f.column,
      jsKind: f.jsKind, tier: f.tier || null });
    // Where a source map put it: the place V8 runs it (lib/source-maps.js).
    if (f.generated) out.generated = f.generated;
    // Innermost first; null where a function inlined could not be named.
    if (f.inlined) out.inlined = f.inlined.map((r) => (r
      ? { name: r.name, file: r.file, line: r.line, column: r.column, text: r.text,
        ...(r.generated ? { generated: r.generated } : {}) } : null));
  } else {
    if (f.symbol) Object.assign(out, { symbol: f.symbol, offset: f.offset });
    if (f.module) out.module = f.module;
    if (f.frameType) out.frameType = f.frameType;
  }
  return out;
}

function renderStacksJson(m) {
  return safeJson({
    core: m.file, pid: m.pid, command: m.command, v8: m.v8, object: m.object, notes: m.notes,
    threads: m.threads.map((t) => ({ tid: t.tid, main: t.tid === m.pid, ended: t.ended,
      frames: t.frames.map(frameJson) })),
  }) + '\n';
}

module.exports = { frameLine, frameLines, endWorthSaying, renderStacksText, renderStacksJson };
