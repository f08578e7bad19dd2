'use strict';
// async's report as text: whose operations and over what span, the event
// loop's busy time, one row per kind (rates, waits, callback times, loop
// share, alive), the functions the callbacks called, with --stacks where
// the operations left alive were created, and the growing verdict. Pure: a
// model (./build-model.js) in, a string a terminal shows safely out.
const { describeIdentity } = require('../../proc/container');
const { formatDuration } = require('../../render/units');
const { noun } = require('../../render/text');
const { percentileText } = require('../../render/histogram');
const { safeText } = require('../../terminal-safe');
const { POLL_MS: HOOK_POLL_MS } = require('../probes');
const { MIN_TREND_SAMPLES } = require('./alive-samples');
const { STACKS_PER_KIND, LIVE_KEPT } = require('./live-stacks');
const { perSecond, loopShare } = require('./summary');
const { textStacks } = require('./text-stacks');
const { threadLines } = require('./threads');

// A kind's functions shown (JSON keeps more: ./build-model.js).
const FUNCTIONS_IN_TEXT = 3;
// --stacks: a kind's stacks shown, and each one's frames (JSON keeps
// STACKS_PER_KIND, and every frame).
const STACKS_IN_TEXT = 3;
const FRAMES_IN_TEXT = 12;

const us = (v) => (v === null || v === undefined ? '-' : formatDuration(v, 'us', { ascii: true }));
// A percentile as the bucket of the tracer's histogram that holds it, its
// top capped by the exact max.
const range = (entry, p, maxUs) => percentileText(entry, p, 'us', { ascii: true, limit: maxUs === null ? null : Number(maxUs) });
const rate = (v) => (v === null ? '-' : v === 0 ? '0' : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
const percent = (v) => (v === null ? '-' : v > 0 && v < 0.001 ? '<0.1%' : `${(v * 100).toFixed(1)}%`);

// A kind's name on one line of text: a hook kind's is a type the process
// chose (a line break in it must not start a row of its own).
function kindLabel(k) {
  return safeText(k.name, { oneLine: true });
}

function functionLabel(f) {
  if (f.name) return f.name;
  return f.sfi === '0' ? '(function not read)' : `(function at 0x${BigInt(f.sfi).toString(16)})`;
}

// Whose event loop the loop figures are (the main thread's unless
// --thread chose a Worker), and that every other figure is every thread's.
function threadsLines({ thread, workers = [] }) {
  const onWorker = thread && thread.role !== 'main';
  if (!onWorker && !workers.length) return [];
  const loop = onWorker ? `${thread.label} (TID ${thread.tid})` : 'the main thread';
  const list = workers.map((w) => `${w.label.replace(/^Worker /, '')} (TID ${w.tid})`).join(', ');
  return [`  The event loop above, and the LOOP column, are ${loop}'s (--thread chooses); the counts, waits and callback times are of every thread,`,
    `  the main thread and ${workers.length === 1 ? 'its Worker' : `its ${workers.length} Workers`}${list ? ` (${list})` : ''}, together.`];
}

// Whose operations, over what span, and how busy the loop was.
function headingLines(r, { pid, who, version, thread, workers }) {
  const span = r.seconds ? `${r.seconds.toFixed(1)} s` : 'an unknown time';
  const callbacksNs = r.kinds.reduce((s, k) => s + k.loopCallbackNs, 0n);
  return [`Asynchronous operations of ${who ? describeIdentity(who) : `PID ${pid}`}${version ? ` (Node v${version})` : ''}, ${span}:`,
    `  the event loop${thread && thread.role !== 'main' ? ` of ${thread.label}` : ''} was busy ${formatDuration(r.loopBusyNs, 'ns', { ascii: true })}${r.seconds ? ` (${percent(Number(r.loopBusyNs) / 1e9 / r.seconds)} of the time)` : ''}; ${r.hook ? 'callbacks (AsyncWraps and the hook\'s kinds)' : 'AsyncWrap callbacks'} ${formatDuration(callbacksNs, 'ns', { ascii: true })} of it${r.loopBusyNs > 0n ? ` (${percent(Number(callbacksNs) / Number(r.loopBusyNs))})` : ''}.`,
    ...threadsLines({ thread, workers })];
}

// The table of the `top` kinds, and the names of the rest. -> { lines,
// width: the KIND column's, which the lines below align to }
function kindTable(r, top) {
  const header = ['KIND', 'CREATED/S', 'CALLBACKS', 'WAIT p50', 'p99', 'max', 'CALLBACK p50', 'p99', 'max', 'LOOP', 'ALIVE +/-'];
  const rows = r.kinds.slice(0, top).map((k) => [
    kindLabel(k),
    rate(perSecond(k.created, r.seconds)),
    String(k.callbacks),
    range(k.wait, 50, k.waitMaxUs), range(k.wait, 99, k.waitMaxUs), us(k.waitMaxUs),
    range(k.callback, 50, k.callbackMaxUs), range(k.callback, 99, k.callbackMaxUs), us(k.callbackMaxUs),
    percent(loopShare(k, r.loopBusyNs)),
    `${k.alive > 0n ? '+' : ''}${k.alive}${k.growing ? ' growing' : ''}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  const lines = [line(header), ...rows.map(line)];
  if (r.kinds.length > top) {
    const rest = r.kinds.slice(top);
    lines.push(`  ... ${rest.length} more ${noun(rest.length, 'kind')} (--top ${r.kinds.length} shows all): ${rest.map(kindLabel).join(', ')}`);
  }
  return { lines, width: widths[0] };
}

// The functions the shown kinds' callbacks called, most time first.
function functionLines(kinds, width) {
  const named = kinds.filter((k) => k.functions.length);
  if (!named.length) return [];
  const out = ['', 'The functions callbacks called, most time first:'];
  for (const k of named) {
    for (const [i, f] of k.functions.slice(0, FUNCTIONS_IN_TEXT).entries()) {
      out.push(`  ${(i === 0 ? kindLabel(k) : '').padEnd(width)}  ${formatDuration(f.ns, 'ns', { ascii: true }).padStart(8)}  ${String(f.calls === null ? '?' : f.calls).padStart(6)} calls  ${functionLabel(f)}`);
    }
  }
  return out;
}

// The growing verdict, what WAIT and CALLBACK mean, and what was counted
// through the register hook (or that it was not on).
function closingLines(r, pid) {
  const out = [];
  const growing = r.kinds.filter((k) => k.growing);
  if (growing.length) {
    for (const k of growing) {
      out.push(`${kindLabel(k)} is growing: ${k.created} created, ${k.destroyed} destroyed, rising through the trace (${k.series.join(' ')} alive each second): a leak suspect.`);
    }
  } else if (r.samples < MIN_TREND_SAMPLES) {
    out.push(`Too short to tell a growing kind (${r.samples} of the ${MIN_TREND_SAMPLES} seconds it takes).`);
  } else {
    out.push('No kind is growing.');
  }
  out.push('WAIT: from creation to its first callback. CALLBACK: time on the thread, nested callbacks not included.');
  if (r.hook) {
    const hooked = r.kinds.filter((k) => k.source === 'async_hooks');
    out.push(`Through the register hook (async_hooks ${hookThreadsText(hooked, pid)}, on within ${HOOK_POLL_MS} ms of the attach): ${hooked.length ? hooked.map(kindLabel).join(', ') : 'none created'}; the rest are AsyncWraps.`);
  } else {
    out.push('Timers, setImmediate and promises are not AsyncWraps: not counted here',
      '(node -r nodetrace/register counts them: docs/reading-output.md#nodetrace-async).');
  }
  return out;
}

/**
 * renderAsyncText(model, { pid, who, version, top, thread, workers, identityOf }) -> string;
 * identityOf(tid): a thread's identity (lib/threads/identify.js) or null (default: the PID is the main thread, no other looked up).
 */
function renderAsyncText(r, { pid, who, version, top = 15, thread = null, workers = [], identityOf = null }) {
  const out = headingLines(r, { pid, who, version, thread, workers });
  if (!r.kinds.length) {
    out.push('', 'No asynchronous operation was created or called back while tracing.');
    return safeText(out.join('\n') + '\n');
  }
  const table = kindTable(r, top);
  out.push('', ...table.lines);
  const byThread = threadLines(r.threads, identityOf || ((tid) => (tid === pid ? { tid, role: 'main' } : undefined)));
  if (byThread.length) out.push('', ...byThread);
  out.push(...functionLines(r.kinds.slice(0, top), table.width));
  if (r.liveStacks) out.push('', ...liveStacksText(r.kinds.slice(0, top), table.width));
  out.push('', ...closingLines(r, pid));
  return safeText(out.join('\n') + '\n');
}

// Where the hook's kinds were counted: the main thread (its thread ID is the
// PID) and how many workers; a capture whose keys hold no thread (0), or no
// hook kind at all, says each thread, as the hook runs in each.
function hookThreadsText(hooked, pid) {
  const ids = new Set(hooked.flatMap((k) => k.threads).filter((t) => t !== 0));
  if (!ids.size) return 'in each thread';
  const main = ids.has(Number(pid));
  const workers = ids.size - (main ? 1 : 0);
  const w = workers ? `${workers} ${noun(workers, 'worker thread')}` : '';
  return `in ${main ? `the main thread${w ? ` and ${w}` : ''}` : w}`;
}

// --stacks, text: per kind with operations left alive, its top creation stacks.
function liveStacksText(kinds, width) {
  const out = [];
  const withLive = kinds.filter((k) => k.live && (k.live.tracked > 0 || k.live.unkept > 0n))
    .sort((a, b) => b.live.tracked - a.live.tracked);
  if (!withLive.length) {
    return ['Where live operations were created: none created while tracing was left alive.'];
  }
  out.push('Where the operations left alive were created (created while tracing, not destroyed by its end), most first:');
  for (const k of withLive) {
    const l = k.live;
    out.push(`  ${kindLabel(k).padEnd(width)}  ${l.tracked} alive`);
    const shown = textStacks(l.stacks);
    for (const s of shown.slice(0, STACKS_IN_TEXT)) {
      const lead = s.skipped ? ['(node\'s and V8\'s own frames above this one: --json has them)'] : [];
      [...lead, ...s.frames.slice(0, FRAMES_IN_TEXT)].forEach((f, i) => out.push(`    ${(i === 0 ? String(s.count) : '').padStart(6)}  ${f}`));
      if (s.frames.length > FRAMES_IN_TEXT) out.push(`            ... ${s.frames.length - FRAMES_IN_TEXT} more frames (--json has them all)`);
    }
    const restStacks = shown.length - Math.min(shown.length, STACKS_IN_TEXT) + l.otherStacks;
    if (restStacks > 0) {
      const shownCount = shown.slice(0, STACKS_IN_TEXT).reduce((n, s) => n + s.count, 0);
      out.push(`    ${restStacks} more ${noun(restStacks, 'stack')} of ${l.tracked - shownCount} alive (--json keeps ${STACKS_PER_KIND} a kind, counts the rest)`);
    }
    if (l.unkept > 0n) out.push(`    ${l.unkept} more created without their stack: more than ${LIVE_KEPT} alive at once`);
  }
  return out;
}

module.exports = { renderAsyncText };
