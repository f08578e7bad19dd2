'use strict';
// Which other processes pay for a trace: a uprobe is set in the probed
// file's code, so every process that maps the file takes its trap unless
// the tracer filters by process in the kernel (bpftrace from 0.20, with -p:
// lib/tracer/capabilities.js filtersUprobesByPid, uprobesWithPid). With
// bpftrace 0.17 (Debian 12's) a neighbour on the same node binary ran at
// 0.33x of its untraced rate while `latency -p` traced another process
// (docs/performance.md, "What tracing one process costs the others"). Said
// before attaching, so that no one is surprised by it.
const fs = require('fs');
const { allPids, readProcFile, processName } = require('../proc');
const { filtersUprobesByPid } = require('./capabilities');
const { safeText } = require('../terminal-safe');
const { plural } = require('../render/text');

// The names shown, at most.
const SHOWN = 5;

// A file's device and inode as /proc/PID/maps writes them ("fe:00 1234"), or null.
function mapsKey(file) {
  let st;
  try { st = fs.statSync(file); } catch { return null; }
  const major = (st.dev >> 8) & 0xfff;
  const minor = (st.dev & 0xff) | ((st.dev >> 12) & 0xfff00);
  const hex = (n) => n.toString(16).padStart(2, '0');
  return `${hex(major)}:${hex(minor)} ${st.ino}`;
}

/** Pure: whether one process's maps text maps any of these "dev inode" keys. */
function mapsAny(mapsText, keys) {
  for (const line of mapsText.split('\n')) {
    const f = line.split(/\s+/);
    if (f.length >= 5 && keys.has(`${f[3]} ${f[4]}`)) return true;
  }
  return false;
}

/**
 * The other processes that would take the plan's uprobe hits: [] where the
 * tracer filters by process in the kernel (-p), else every process but the
 * target that maps one of plan.uprobeFiles -> [{ pid, name }].
 */
function payingNeighbours(plan, { pids = allPids, maps = (p) => readProcFile(p, 'maps'), name = processName } = {}) {
  const files = plan.uprobeFiles || [];
  if (!files.length || plan.tracer.name !== 'bpftrace') return [];
  const target = plan.target ? plan.target.pid : null;
  const filtered = filtersUprobesByPid(plan.tracer) && target && plan.argv.includes('-p');
  if (filtered) return [];
  const keys = new Set(files.map(mapsKey).filter(Boolean));
  if (!keys.size) return [];
  const out = [];
  for (const pid of pids()) {
    if (pid === target || pid === process.pid) continue;
    const text = maps(pid);
    if (text && mapsAny(text, keys)) out.push({ pid, name: name(pid) });
  }
  return out;
}

/** The warning for those neighbours, one line, or null. */
function neighbourWarning(plan, neighbours) {
  if (!neighbours.length) return null;
  const shown = neighbours.slice(0, SHOWN).map((n) => `${n.pid} ${n.name}`).join(', ');
  const more = neighbours.length > SHOWN ? ` and ${neighbours.length - SHOWN} more` : '';
  const why = filtersUprobesByPid(plan.tracer)
    ? `bpftrace ${plan.tracer.version} runs this trace without -p, so it sets its uprobes in every process that maps the probed file`
    : `bpftrace ${plan.tracer.version} sets uprobes in every process that maps the probed file`;
  return safeText(`${why}: ${plural(neighbours.length, 'other process', 'other processes')} (PID ${shown}${more}) `
    + 'will take each probe hit too, slowing their work while this runs. bpftrace 0.20 or later filters by process in the kernel '
    + '(NODETRACE_BPFTRACE=/path/to/bpftrace; docs/platforms.md, "bpftrace versions").', { oneLine: true });
}

// The commands that set uprobes in node's own code (lib/commands: those
// whose plan gives uprobeFiles).
const UPROBE_COMMANDS = 'latency, gc and async';

/**
 * Pure: what a trace with this tracer costs the host's other Node
 * processes, one line for `doctor` and `ps` -> { ok, detail }. Said before
 * any trace, so that the cost is known before it is paid.
 */
function hostNeighbourNote(tracer) {
  if (!tracer || tracer.name !== 'bpftrace') return { ok: true, detail: 'the tracer sets its probes in the traced process only: other processes do not pay' };
  if (filtersUprobesByPid(tracer)) {
    return { ok: true, detail: `bpftrace ${tracer.version} sets uprobes in the traced process only (-p, in the kernel): other Node processes do not pay` };
  }
  return {
    ok: false,
    detail: `bpftrace ${tracer.version} sets uprobes in every process that maps the probed file: ${UPROBE_COMMANDS} on one process `
      + 'slow every other process running the same node while they run (to 0.33x measured); to avoid it, bpftrace 0.20 or later '
      + '(NODETRACE_BPFTRACE=/path/to/bpftrace; docs/platforms.md, "bpftrace versions")',
  };
}

module.exports = { payingNeighbours, neighbourWarning, hostNeighbourNote, mapsAny, mapsKey };
