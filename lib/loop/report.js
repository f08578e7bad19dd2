'use strict';
// `nodetrace loop`: the output of d-scripts/loop.bt|.d -> a report (busy time
// per turn of the event loop, the stalls, the stacks sampled during them) ->
// text, JSON or folded stacks.  Pure: text and numbers in, text out.
//
// Times in STALL/EARLY/OPEN lines are the tracer's clock: `mono` (bpftrace's
// nsecs, CLOCK_MONOTONIC) or `wall` (DTrace's walltimestamp).  A monotonic
// time becomes wall time with `wallMinusMonoNs`, which the caller measures
// (Date.now() against process.hrtime, both read at once).
const { describeIdentity, identityJson } = require('../proc/container');
const { parse } = require('../aggregation/parse');
const { percentile, totalCount } = require('../aggregation/model');
const { renderHistogram, percentileText } = require('../render/histogram');
const { formatDuration } = require('../render/units');
const { clockTime } = require('../render/text');
const { monoToWallMs } = require('../clock');
const { jsonInteger, jsonEstimate, jsonHistogram } = require('../render/json');
const { safeText, safeJson } = require('../terminal-safe');
const { foldedName } = require('../profile/folded');
// The frame a sample without a user stack shows, as every report does.
const { NO_USER_STACK: NO_STACK } = require('../render/map-full');
const { userFrames } = require('../tracer/stack-frames');

const JSON_VERSION = 1;
const EVENT = /^(STALL|EARLY|OPEN) (mono|wall) (\d+) (\d+)(?: ([01]))?$/;

// bpftrace 0.17 may print NUL padding before a stack map's first key.
function clean(text) {
  return String(text == null ? '' : text).replace(/\0/g, '');
}

// bpftrace: "@stall_stacks[\n    frame\n    ...\n, HASH]: N"; raw frames (the plan
// asks for them: nodetrace names them, lib/loop/name-stacks.js) as 0x...
function bpftraceStacks(lines) {
  const stacks = [];
  let frames = null;
  for (const line of lines) {
    if (frames === null) {
      if (/^@stall_stacks\[$/.test(line)) frames = [];
      // A sample whose user stack bpftrace lost from its map of stacks
      // (capabilities.userStackMap): the key on one line, no frames.
      const lost = /^@stall_stacks\[, (-?\d+)\]: (\d+)$/.exec(line);
      if (lost) stacks.push({ frames: [NO_STACK], samples: Number(lost[2]), lost: true });
      continue;
    }
    // (A second key: the hash of the sample's JavaScript chain, lib/profile/js-frames.js.)
    const end = /^(?:, (-?\d+))?\]: (\d+)$/.exec(line);
    if (end) {
      const stack = { frames: userFrames(frames), samples: Number(end[2]) };
      if (end[1] && end[1] !== '0') stack.chain = end[1];
      stacks.push(stack);
      frames = null;
    } else if (line.trim()) frames.push(line.trim());
  }
  return stacks;
}

// DTrace: after "stall stacks:", each key is the frames one a line and its
// count alone on the last line, blocks separated by blank lines.
function dtraceStacks(lines) {
  const stacks = [];
  const at = lines.indexOf('stall stacks:');
  if (at < 0) return stacks;
  let frames = [];
  for (const line of lines.slice(at + 1)) {
    const t = line.trim();
    if (/^\d+$/.test(t) && frames.length) {
      stacks.push({ frames, samples: Number(t) });
      frames = [];
    } else if (t) frames.push(t);
  }
  return stacks;
}

// loop.d prints its aggregations (printa, each under its "@name" line), then
// "stall stacks:" and the stacks.
function aggregationText(lines, tracer) {
  if (tracer !== 'dtrace') return lines.join('\n');
  const stop = lines.indexOf('stall stacks:');
  return (stop >= 0 ? lines.slice(0, stop) : lines).join('\n');
}

function scalar(model, name) {
  const agg = model.aggregations.find((a) => a.name === name);
  const entry = agg && agg.entries.find((e) => e.kind === 'scalar');
  return entry ? entry.value : null;
}

/**
 * parseLoop({ during, maps }, { tracer }) -> {
 *   busy: Entry|null (histogram of µs per turn), turns, busyTotalUs, busyMaxUs, tracedNs,
 *   stalls: [{ clock, atNs, busyUs }]  (atNs: when the stall ended),
 *   early: {...}|null  (the first turn, busy since before tracing),
 *   open: { clock, sinceNs, busyUs, sinceBeforeTrace }|null,
 *   stacks: [{ frames (innermost first), samples }] }
 * Numbers are BigInt as in lib/aggregation's model.
 */
function parseLoop({ during = [], maps = '' } = {}, { tracer } = {}) {
  const lines = clean(maps).split('\n');
  const stalls = [];
  let early = null;
  let open = null;
  for (const line of during) {
    const m = EVENT.exec(clean(line));
    if (!m) continue;
    const [, kind, clock, time, us, flag] = m;
    if (kind === 'STALL') stalls.push({ clock, atNs: BigInt(time), busyUs: BigInt(us) });
    else if (kind === 'EARLY') early = { clock, atNs: BigInt(time), busyUs: BigInt(us) };
    else open = { clock, sinceNs: BigInt(time), busyUs: BigInt(us), sinceBeforeTrace: flag === '1' };
  }
  const model = parse(aggregationText(lines, tracer), { tracer });
  const busyAgg = model.aggregations.find((a) => a.name === 'busy_us');
  const busy = busyAgg ? busyAgg.entries.find((e) => Array.isArray(e.buckets)) || null : null;
  return {
    busy,
    turns: scalar(model, 'turns') || 0n,
    busyTotalUs: scalar(model, 'busy_total_us') || 0n,
    busyMaxUs: scalar(model, 'busy_max_us'),
    tracedNs: scalar(model, 'traced_ns'),
    turnsNs: scalar(model, 'turns_ns'),
    stalls,
    early,
    open,
    stacks: (tracer === 'dtrace' ? dtraceStacks(lines) : bpftraceStacks(lines)).sort((a, b) => b.samples - a.samples),
  };
}

// ---- time ------------------------------------------------------------------

// DTrace's walltimestamp is wall time already.
function wallMs(clock, ns, wallMinusMonoNs) {
  return monoToWallMs(ns, clock === 'wall' ? 0n : wallMinusMonoNs);
}

function longestFirst(stalls) {
  return stalls.slice().sort((a, b) => (a.busyUs === b.busyUs ? 0 : a.busyUs > b.busyUs ? -1 : 1));
}

// ---- stacks ----------------------------------------------------------------

// "node::Foo(int)+342" -> "node::Foo(int)"; "JS:*f /a.js:1:2+610" -> "JS:*f /a.js:1:2".
function frameName(frame) {
  return frame.replace(/\+(0x[0-9a-f]+|\d+)$/i, '');
}

/** Folded stacks (outermost frame first, ';'-separated, then the count), as flame graph tools read them. */
function foldedStacks(stacks, { processName = 'node' } = {}) {
  const byStack = new Map();
  for (const s of stacks) {
    const key = [processName, ...s.frames.map(frameName).reverse()].map(foldedName).join(';');
    byStack.set(key, (byStack.get(key) || 0) + s.samples);
  }
  return [...byStack].map(([k, n]) => `${k} ${n}\n`).join('');
}

// The frames that matter most: of each stack, the innermost named frames.
function topStacks(stacks, max) {
  return stacks.slice(0, max);
}

// ---- text ------------------------------------------------------------------

function percent(part, whole) {
  if (!whole) return '-';
  const p = (Number(part) / Number(whole)) * 100;
  return p > 0 && p < 1 ? '<1%' : `${Math.round(p)}%`;
}

// Whose loop: "Event loop of PID 4242" (the main thread's), "Event loop of
// Worker 2 "resize" (TID 4250) of PID 4242".
function whoseLoop(o) {
  const proc = o.who ? describeIdentity(o.who) : `PID ${o.pid}`;
  return o.thread && o.thread.role !== 'main' ? `${o.thread.label} (TID ${o.thread.tid}) of ${proc}` : proc;
}

// Said where the process runs Workers: each has an event loop of its own,
// which this one does not measure.
function workersLine(o) {
  const others = (o.workers || []).filter((w) => !o.thread || w.tid !== o.thread.tid);
  if (!others.length) return [];
  const onMain = !o.thread || o.thread.role === 'main';
  const which = others.map((w) => `${w.label.replace(/^Worker /, '')} (TID ${w.tid})`).join(', ');
  return ['', `${onMain ? 'This is the main thread\'s loop. ' : ''}The process also runs ${others.length === 1 ? 'a Worker, with an event loop of its own' : `${others.length} Workers, each with an event loop of its own`}: ${which}; measure one with --thread ID.`];
}

/**
 * renderLoopText(report, { pid, who, thread, workers, overUs, top, wallMinusMonoNs, stacksWanted, maxStacks }) -> string
 * who: the process as lib/proc/container.js identifies it; thread: the
 * thread measured { tid, role, label } (the main one when absent);
 * workers: [{ tid, label }] the process's Workers
 */
function renderLoopText(r, o) {
  const us = (v) => formatDuration(v, 'us');
  const out = [];
  const traced = r.tracedNs !== null ? formatDuration(r.tracedNs, 'ns') : 'unknown';
  // Of the time whole turns were seen in (from the start of the first to
  // the end of the last): the trace's length, from every probe attached
  // to the end asked for, is not quite the window the turns fell in.
  const over = r.turnsNs || r.tracedNs;
  const busyShare = over ? percent(r.busyTotalUs * 1000n, over) : '-';
  out.push(`Event loop of ${whoseLoop(o)}, traced ${traced}: ${r.turns} turns, busy ${us(r.busyTotalUs)} in them (${busyShare} of the time).`);
  if (r.busy && totalCount(r.busy) > 0n) {
    out.push('', 'Busy time per turn (running callbacks, not waiting for I/O):');
    out.push(...renderHistogram(r.busy, 'us', { width: 40 }));
    const limit = r.busyMaxUs === null ? null : Number(r.busyMaxUs);
    // Each percentile as the bucket of the tracer's histogram that holds it.
    const ps = [50, 90, 99].map((p) => `p${p} ${percentileText(r.busy, p, 'us', { limit })}`);
    out.push(`  count ${totalCount(r.busy)}, ${ps.join(', ')}${r.busyMaxUs !== null ? `, max ${us(r.busyMaxUs)}` : ''}`);
  }
  const stalls = longestFirst(r.stalls);
  out.push('');
  if (stalls.length) {
    const shown = stalls.slice(0, o.top);
    out.push(`Stalls over ${us(o.overUs)}: ${stalls.length}${stalls.length > shown.length ? `, the ${shown.length} longest` : ''} (ended at, busy for):`);
    for (const s of shown) out.push(`  ${clockTime(wallMs(s.clock, s.atNs, o.wallMinusMonoNs))}  ${us(s.busyUs)}`);
  } else {
    out.push(`No turn was busy for more than ${us(o.overUs)}.`);
  }
  if (r.early) {
    out.push(`Busy when tracing began, until ${clockTime(wallMs(r.early.clock, r.early.atNs, o.wallMinusMonoNs))}: at least ${us(r.early.busyUs)} (not in the histogram).`);
  }
  if (r.open) {
    out.push(r.open.sinceBeforeTrace
      ? `The loop never waited for I/O while tracing: blocked for all ${us(r.open.busyUs)} of it, since before tracing began.`
      : `Still busy when tracing ended: blocked for ${us(r.open.busyUs)} since ${clockTime(wallMs(r.open.clock, r.open.sinceNs, o.wallMinusMonoNs))}.`);
  }
  out.push(...workersLine(o));
  if (o.stacksWanted) {
    out.push('');
    const total = r.stacks.reduce((n, s) => n + s.samples, 0);
    if (!total) out.push(`No stack samples: no stall lasted past ${us(o.overUs)} long enough to be sampled (99 Hz).`);
    else {
      out.push(`Stacks sampled during stalls (99 Hz, after ${us(o.overUs)} of busy time), ${total} samples, most first:`);
      for (const s of topStacks(r.stacks, o.maxStacks || 5)) {
        out.push('', `  ${s.samples} samples (${percent(s.samples, total)}):`);
        for (const f of s.frames) out.push(`    ${safeText(f, { oneLine: true })}`);
      }
    }
  }
  return safeText(out.join('\n') + '\n');
}

// ---- JSON ------------------------------------------------------------------

function threadJson(t) {
  return { tid: t.tid, role: t.role, label: t.label,
    ...(t.worker ? { worker: { thread_id: t.worker.threadId, name: t.worker.name || null } } : {}) };
}

function renderLoopJSON(r, o) {
  const limit = r.busyMaxUs === null ? null : Number(r.busyMaxUs);
  const busy = r.busy ? {
    unit: 'us',
    count: jsonInteger(totalCount(r.busy)),
    p50: jsonEstimate(percentile(r.busy, 50, limit)),
    p90: jsonEstimate(percentile(r.busy, 90, limit)),
    p99: jsonEstimate(percentile(r.busy, 99, limit)),
    max: jsonInteger(r.busyMaxUs),
    histogram: jsonHistogram(r.busy),
  } : null;
  const at = (clock, ns) => new Date(wallMs(clock, ns, o.wallMinusMonoNs)).toISOString();
  return safeJson({
    version: JSON_VERSION,
    command: 'loop',
    pid: o.pid,
    ...(o.who ? { process: identityJson(o.who) } : {}),
    tracer: o.tracer,
    // The thread whose loop this is, and the process's Workers (each with a loop of its own).
    thread: o.thread ? threadJson(o.thread) : null,
    workers: (o.workers || []).map(threadJson),
    traced_ns: jsonInteger(r.tracedNs),
    turns_ns: jsonInteger(r.turnsNs),
    turns: jsonInteger(r.turns),
    busy_total_us: jsonInteger(r.busyTotalUs),
    over_us: o.overUs,
    busy,
    stalls: longestFirst(r.stalls).map((s) => ({ ended_at: at(s.clock, s.atNs), busy_us: jsonInteger(s.busyUs) })),
    early: r.early ? { ended_at: at(r.early.clock, r.early.atNs), busy_us_at_least: jsonInteger(r.early.busyUs) }
      : null,
    open: r.open ? {
      since: r.open.sinceBeforeTrace ? null : at(r.open.clock, r.open.sinceNs),
      since_before_trace: r.open.sinceBeforeTrace,
      busy_us: jsonInteger(r.open.busyUs),
    } : null,
    stacks: o.stacksWanted ? r.stacks.map((s) => ({ samples: s.samples, frames: s.frames })) : null,
  }) + '\n';
}

/** Samples whose user stack the tracer lost (bpftraceStacks: NO_STACK). */
function lostStackSamples(stacks) {
  return stacks.reduce((n, s) => n + (s.lost ? s.samples : 0), 0);
}

module.exports = { lostStackSamples, parseLoop, renderLoopText, renderLoopJSON, foldedStacks, frameName, JSON_VERSION };
