'use strict';
// `nodetrace async`: the output of d-scripts/async.bt|.d -> per kind of
// asynchronous operation (AsyncWrap provider) what was created, called back,
// destroyed, how long operations waited and callbacks ran, and whether the
// kind is growing -> text or JSON. Pure.
const { describeIdentity, identityJson } = require('../proc/container');
const { parse } = require('../aggregation/parse');
const { percentile, totalCount, mergeBuckets } = require('../aggregation/model');
const { formatDuration } = require('../render/units');
const { percentileText } = require('../render/histogram');
const { jsonInteger, jsonEstimate, jsonHistogram } = require('../render/json');
const { safeText, safeJson } = require('../terminal-safe');
const { providerName } = require('./providers');
const { HOOK_KIND_BASE, HOOK_THREAD_SHIFT, POLL_MS: HOOK_POLL_MS } = require('./probes');
const { userFrames } = require('../tracer/stack-frames');
const { nameFromWords } = require('../tracer/name-words');

const JSON_VERSION = 1;
const ALIVE_MARK = /^ALIVE (\d+)$/;
const ALIVE_LINE = /^@alive\[(\d+)\]: (-?\d+)$/;
// Fewer samples than this (seconds) and no kind is called growing: too
// short a trace to tell a leak from a burst.
const MIN_TREND_SAMPLES = 4;
// Samples come each second; one less than this after the one before is the
// same second's, printed twice (async.d: two CPUs at once).
const MIN_SAMPLE_GAP_MS = 500;
// The functions kept per kind (most callback time first): in JSON; text shows fewer.
const FUNCTIONS_PER_KIND = 10;
const FUNCTIONS_IN_TEXT = 3;
// --stacks: the creation stacks kept per kind (most live operations
// first), in JSON; the rest are counted. Text shows fewer, and fewer frames.
const STACKS_PER_KIND = 10;
const STACKS_IN_TEXT = 3;
const FRAMES_IN_TEXT = 12;
// What async.bt keeps at once (its LIVE_KEPT): the bound said in the output.
const LIVE_KEPT = 16384;

function byKey(model, name) {
  const agg = model.aggregations.find((a) => a.name === name);
  const out = new Map();
  for (const e of agg ? agg.entries : []) out.set(e.key.join(','), e);
  return out;
}

/**
 * The created-minus-destroyed samples printed each second while tracing:
 * [{ ms, alive: Map(provider number -> count) }].
 */
function parseAliveSamples(during = []) {
  const samples = [];
  let skipping = false;
  for (const raw of during) {
    const line = String(raw).trim();
    const mark = ALIVE_MARK.exec(line);
    if (mark) {
      // async.d: two CPUs may print the same second's sample; one is kept.
      const last = samples[samples.length - 1];
      skipping = Boolean(last) && Number(mark[1]) - last.ms < MIN_SAMPLE_GAP_MS;
      if (!skipping) samples.push({ ms: Number(mark[1]), alive: new Map() });
      continue;
    }
    const m = ALIVE_LINE.exec(line);
    if (m && samples.length && !skipping) samples[samples.length - 1].alive.set(m[1], Number(m[2]));
  }
  return samples;
}

/**
 * Growing: created minus destroyed rose through the trace, not a burst or a
 * plateau. The samples are cut in four quarters: the mean of each is above
 * the one before, and the last sample is above zero.
 */
function isGrowing(series) {
  if (series.length < MIN_TREND_SAMPLES) return false;
  const means = [0, 1, 2, 3].map((q) => {
    const part = series.slice(Math.floor((q * series.length) / 4), Math.floor(((q + 1) * series.length) / 4));
    return part.reduce((s, v) => s + v, 0) / part.length;
  });
  return means.every((m, i) => i === 0 || m > means[i - 1]) && series[series.length - 1] > 0;
}

/**
 * parseAsync({ during, maps }, { providers, attachedNs, stacks, hook }) -> {
 *   kinds: [{ number, source ('AsyncWrap' | 'async_hooks': the register hook's), name, created, callbacks, destroyed, alive, growing,
 *             series (alive each second), wait (entry|null), waitMaxUs,
 *             callback (entry|null), callbackMaxUs, callbackTotalNs, loopCallbackNs,
 *             threads (an async_hooks kind: the thread IDs whose hooks counted it; null) }],
 *   tracedNs, loopBusyNs, seconds (the span rates are over) }
 * Counts are BigInt, as in lib/aggregation's model. `providers`: the Node
 * version's table (lib/async/providers.js), or null (numbers shown).
 */
function parseAsync({ during = [], maps = '' } = {}, { providers = null, attachedNs = null, stacks = false, hook = false, tracer = 'bpftrace' } = {}) {
  const named = splitHookNames(during);
  const { rest: mapLines, hookNames } = splitHookNames(String(maps || '').replace(/\0/g, '').split('\n'), named.hookNames);
  const { rest, live } = splitLiveStacks(mapLines.join('\n'));
  const model = parse(rest, { tracer });
  const m = Object.fromEntries(['created', 'callbacks', 'destroyed', 'wait_us', 'wait_max_us', 'callback_us',
    'callback_max_us', 'callback_total_ns', 'loop_callback_ns', 'hook_created', 'hook_destroyed'].map((n) => [n, byKey(model, n)]));
  const scalar = (name) => { const e = byKey(model, name).get(''); return e ? e.value : null; };
  const samples = parseAliveSamples(named.rest);
  const { functions, totals } = functionsByKind(model);
  const numbers = new Set();
  for (const map of Object.values(m)) for (const k of map.keys()) if (/^\d+$/.test(k)) numbers.add(k);
  const value = (map, k) => (map.get(k) && typeof map.get(k).value === 'bigint' ? map.get(k).value : null);
  const hist = (map, k) => (map.get(k) && Array.isArray(map.get(k).buckets) && totalCount(map.get(k)) > 0n ? map.get(k)
    : null);
  const perThread = [...numbers].map((k) => {
    // The hook's kinds are counted in the process and summed (@hook_*).
    const created = value(m.created, k) || value(m.hook_created, k) || 0n;
    const destroyed = value(m.destroyed, k) || value(m.hook_destroyed, k) || 0n;
    // Before a kind's first sample it had no entry: nothing created yet.
    const series = samples.map((s) => s.alive.get(k) || 0);
    const hookKind = hookKindOf(k);
    return {
      number: Number(k),
      // A hook kind (async.bt's @hook part: the thread, HOOK_KIND_BASE and
      // its number there) by the type the thread named it; an AsyncWrap by
      // its provider number.
      source: hookKind ? 'async_hooks' : 'AsyncWrap',
      name: hookKind ? (hookNames.get(k) || unnamedHookKind(hookKind)) : providerName(providers, k),
      threads: hookKind ? [hookKind.thread] : null,
      created,
      callbacks: value(m.callbacks, k) || 0n,
      destroyed,
      alive: created - destroyed,
      series,
      growing: isGrowing(series),
      wait: hist(m.wait_us, k),
      waitMaxUs: value(m.wait_max_us, k),
      callback: hist(m.callback_us, k),
      callbackMaxUs: value(m.callback_max_us, k),
      // Every thread's callback time: the sum over the functions called
      // (older captures printed it as @callback_total_ns).
      callbackTotalNs: value(m.callback_total_ns, k) || totals.get(k) || 0n,
      loopCallbackNs: value(m.loop_callback_ns, k) || 0n,
      // The hook's callbacks keep no function (0): none to show.
      functions: (functions.get(k) || []).filter((f) => !(hookKind && f.sfi === '0')),
    };
  });
  const kinds = mergeHookThreads(perThread);
  // Most loop time first, then most created: the kinds that matter on top.
  kinds.sort((a, b) => cmp(b.loopCallbackNs, a.loopCallbackNs) || cmp(b.callbackTotalNs, a.callbackTotalNs)
    || cmp(b.created, a.created) || a.number - b.number);
  const tracedNs = scalar('traced_ns');
  const spanNs = attachedNs && attachedNs > 0 ? attachedNs : tracedNs !== null ? Number(tracedNs) : null;
  const unkept = byKey(model, 'unkept');
  for (const k of kinds) k.unkept = value(unkept, String(k.number)) || 0n;
  return {
    // Operations that found async.bt's @born full (its wait unmeasured: lib/render/map-full.js).
    fullBorn: Number(scalar('full_born') || 0),
    kinds, tracedNs, hook: hook || kinds.some((k) => k.source === 'async_hooks'), loopBusyNs: scalar('loop_busy_ns') || 0n, seconds: spanNs ? spanNs / 1e9 : null, samples: samples.length,
    // --stacks: the live operations grouped by kind and raw stack, to be
    // named (lib/loop/name-stacks.js) and then grouped per kind (groupLiveStacks).
    liveStacks: stacks ? groupRaw(live) : null,
  };
}

// async.bt's @hook part names its kinds: `KIND KEY W0 ... W15`, the type
// the process's hook gave (any text a process chose) as the hex words of its
// first 128 bytes (lib/tracer/name-words.js), so that no type can break a
// line or pass for a map entry (docs/security.md: a type of
// `Y\n@created[1]: 4242424242` once added a forged row). Printed while
// tracing, or among the maps (a line of another CPU read after END's):
// taken out of both. Shown through safeText, never trusted as anything but
// a name.
// -> { rest: the other lines, hookNames: Map(KEY (decimal) -> TYPE) }
const HOOK_NAME = /^KIND (\d{1,20})((?: [0-9a-f]{1,16}){16})$/;
function splitHookNames(lines, hookNames = new Map()) {
  const rest = [];
  for (const line of lines) {
    const m = HOOK_NAME.exec(line);
    if (!m) { rest.push(line); continue; }
    const name = nameFromWords(m[2].trim().split(' '));
    if (name) hookNames.set(m[1], name.text || '(no name)');
  }
  return { rest, hookNames };
}

// A key of the @hook part: (thread ID << HOOK_THREAD_SHIFT) + HOOK_KIND_BASE
// + the kind as that thread numbers it (lib/async/probes.js); thread 0 in a
// capture made before threads were told apart. -> { thread, kind } or null
// (an AsyncWrap's provider number).
function hookKindOf(key) {
  const n = BigInt(key);
  const low = n & ((1n << BigInt(HOOK_THREAD_SHIFT)) - 1n);
  if (low < BigInt(HOOK_KIND_BASE)) return null;
  return { thread: Number(n >> BigInt(HOOK_THREAD_SHIFT)), kind: Number(low) - HOOK_KIND_BASE };
}

// A hook kind whose name was not seen: its number means something only in
// its thread, so it stays that thread's.
function unnamedHookKind({ thread, kind }) {
  return `async_hooks type ${kind}${thread ? ` (thread ${thread})` : ''}`;
}

// Each thread's hook numbers its kinds apart (async.bt keys them by thread):
// one row per type over every thread, as the AsyncWraps are counted over
// every thread. Counts, times and histograms add up; maxima take the larger;
// each second's alive count adds up, and growing is judged on the sum.
function mergeHookThreads(kinds) {
  const out = [];
  const byName = new Map();
  for (const k of kinds) {
    const named = k.source === 'async_hooks' && !k.name.startsWith('async_hooks type ');
    const seen = named ? byName.get(k.name) : undefined;
    if (!seen) {
      if (named) byName.set(k.name, k);
      out.push(k);
      continue;
    }
    for (const f of ['created', 'callbacks', 'destroyed', 'alive', 'callbackTotalNs', 'loopCallbackNs']) seen[f] += k[f];
    seen.series = seen.series.map((v, i) => v + k.series[i]);
    seen.growing = isGrowing(seen.series);
    seen.wait = addHistograms(seen.wait, k.wait);
    seen.callback = addHistograms(seen.callback, k.callback);
    seen.waitMaxUs = larger(seen.waitMaxUs, k.waitMaxUs);
    seen.callbackMaxUs = larger(seen.callbackMaxUs, k.callbackMaxUs);
    seen.threads = [...seen.threads, ...k.threads];
    seen.number = Math.min(seen.number, k.number);
  }
  return out;
}

function addHistograms(a, b) {
  if (!a || !b) return a || b;
  return { ...a, buckets: mergeBuckets(a.buckets, b.buckets) };
}

function larger(a, b) {
  if (a === null || b === null) return a === null ? b : a;
  return a > b ? a : b;
}

// ---- --stacks: where the live operations were created ------------------------

// async.bt's maps of live operations, keyed by the AsyncWrap's address:
//   @live_kind[ADDR]: KIND+1     @live_js[ADDR]: HASH (of the JavaScript chain)
//   @live_stack[ADDR]:           (then its frames, one a line: indented
//                                 0x... on 0.17, bare hex ending in 0 on 0.23+)
// and the JavaScript chain's @js_prev (read by lib/profile/js-frames.js).
// -> { rest: the other maps' text, live: Map(addr -> { kind, chain, frames }) }
const LIVE_NUMBER = /^@(live_kind|live_js)\[(\d+)\]: (-?\d+)$/;
const LIVE_STACK = /^@live_stack\[(\d+)\]:\s*$/;
function splitLiveStacks(text) {
  const rest = [];
  const live = new Map();
  const entry = (addr) => {
    if (!live.has(addr)) live.set(addr, { kind: null, chain: '0', frames: [] });
    return live.get(addr);
  };
  let frames = null;
  for (const line of text.split('\n')) {
    if (frames) {
      // A frame a line (indented; bare hex ending in 0 in 0.23+'s raw
      // mode), to a blank line or the next map's line.
      if (line.trim() && !line.startsWith('@')) { frames.push(line.trim()); continue; }
      frames = null;
      if (!line.trim()) continue;
    }
    const n = LIVE_NUMBER.exec(line.trim());
    if (n) {
      const v = BigInt.asUintN(64, BigInt(n[3]));
      if (n[1] === 'live_kind') entry(n[2]).kind = String(v - 1n);
      else entry(n[2]).chain = String(v);
      continue;
    }
    const st = LIVE_STACK.exec(line.trim());
    if (st) { frames = entry(st[1]).frames; continue; }
    if (/^@js_(prev|sfi)\[/.test(line.trim())) continue;
    rest.push(line);
  }
  return { rest: rest.join('\n'), live };
}

// Live operations -> [{ kind, count, stack: { frames, chain } }], one per
// kind and raw stack, most first. An operation whose kind was not printed
// (the map cut short) is left out.
function groupRaw(live) {
  const groups = new Map();
  for (const e of live.values()) {
    if (e.kind === null) continue;
    const frames = userFrames(e.frames);
    const key = `${e.kind}|${e.chain}|${frames.join(' ')}`;
    if (!groups.has(key)) groups.set(key, { kind: e.kind, count: 0, stack: { frames, ...(e.chain !== '0' ? { chain: e.chain } : {}) } });
    groups.get(key).count++;
  }
  return [...groups.values()].sort((a, b) => b.count - a.count);
}

/**
 * After the frames are named: each kind's live operations by creation
 * stack (raw stacks that name alike are one) -> kind.live = { tracked,
 * stacks: [{ count, frames }] (STACKS_PER_KIND at most, most first),
 * otherStacks, otherCount, unkept }. Pure; sets nothing without --stacks.
 */
function groupLiveStacks(r) {
  if (!r.liveStacks) return r;
  const perKind = new Map();
  for (const g of r.liveStacks) {
    if (!perKind.has(g.kind)) perKind.set(g.kind, new Map());
    const named = perKind.get(g.kind);
    const key = g.stack.frames.join('\n');
    if (!named.has(key)) named.set(key, { count: 0, frames: g.stack.frames });
    named.get(key).count += g.count;
  }
  for (const k of r.kinds) {
    const all = [...(perKind.get(String(k.number)) || new Map()).entries()]
      .sort(([ka, a], [kb, b]) => b.count - a.count || (ka < kb ? -1 : ka > kb ? 1 : 0)).map(([, v]) => v);
    const kept = all.slice(0, STACKS_PER_KIND);
    const others = all.slice(STACKS_PER_KIND);
    k.live = {
      tracked: all.reduce((n, s) => n + s.count, 0),
      stacks: kept,
      otherStacks: others.length,
      otherCount: others.reduce((n, s) => n + s.count, 0),
      unkept: k.unkept,
    };
  }
  return r;
}

function cmp(a, b) { return a === b ? 0 : a > b ? 1 : -1; }

// @function_ns[KIND, SFI] and @function_calls[KIND, SFI] -> { functions:
// Map(kind -> [{ sfi (decimal string; '0': not read), ns, calls, name: null }]),
// most time first, bounded; totals: Map(kind -> ns over every function) }.
function functionsByKind(model) {
  const agg = (name) => model.aggregations.find((a) => a.name === name);
  const ns = agg('function_ns');
  const calls = byKey(model, 'function_calls');
  const out = new Map();
  const totals = new Map();
  for (const e of ns ? ns.entries : []) {
    if (e.key.length !== 2 || typeof e.value !== 'bigint') continue;
    const [kind, sfi] = e.key.map(String);
    totals.set(kind, (totals.get(kind) || 0n) + e.value);
    const c = calls.get(e.key.join(','));
    if (!out.has(kind)) out.set(kind, []);
    out.get(kind).push({ sfi, ns: e.value, calls: c && typeof c.value === 'bigint' ? c.value : null, name: null });
  }
  for (const [kind, list] of out) out.set(kind, list.sort((a, b) => cmp(b.ns, a.ns) || (a.sfi < b.sfi ? -1 : 1))
    .slice(0, FUNCTIONS_PER_KIND));
  return { functions: out, totals };
}

/** The SFI addresses worth naming (every kind's kept functions), decimal strings. */
function functionAddresses(r) {
  return [...new Set(r.kinds.flatMap((k) => k.functions.map((f) => f.sfi)).filter((a) => a !== '0'))];
}

function functionLabel(f) {
  if (f.name) return f.name;
  return f.sfi === '0' ? '(function not read)' : `(function at 0x${BigInt(f.sfi).toString(16)})`;
}

function pct(entry, p, maxUs) {
  return entry ? percentile(entry, p, maxUs === null ? null : Number(maxUs)) : null;
}

function perSecond(count, seconds) {
  return seconds ? Number(count) / seconds : null;
}

function loopShare(k, loopBusyNs) {
  return loopBusyNs > 0n ? Number(k.loopCallbackNs) / Number(loopBusyNs) : null;
}

// ---- text --------------------------------------------------------------------

const us = (v) => (v === null || v === undefined ? '-' : formatDuration(v, 'us', { ascii: true }));
// A percentile as the bucket of the tracer's histogram that holds it, its
// top capped by the exact max.
const range = (entry, p, maxUs) => percentileText(entry, p, 'us', { ascii: true, limit: maxUs === null ? null : Number(maxUs) });
const rate = (v) => (v === null ? '-' : v === 0 ? '0' : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
const percent = (v) => (v === null ? '-' : v > 0 && v < 0.001 ? '<0.1%' : `${(v * 100).toFixed(1)}%`);

/** renderAsyncText(report, { pid, who, version, top }) -> string */
// A kind's name on one line of text: a hook kind's is a type the process
// chose (a line break in it must not start a row of its own).
function kindLabel(k) {
  return safeText(k.name, { oneLine: true });
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

function renderAsyncText(r, { pid, who, version, top = 15, thread = null, workers = [] }) {
  const out = [];
  const span = r.seconds ? `${r.seconds.toFixed(1)} s` : 'an unknown time';
  const callbacksNs = r.kinds.reduce((s, k) => s + k.loopCallbackNs, 0n);
  out.push(`Asynchronous operations of ${who ? describeIdentity(who) : `PID ${pid}`}${version ? ` (Node v${version})` : ''}, ${span}:`);
  out.push(`  the event loop${thread && thread.role !== 'main' ? ` of ${thread.label}` : ''} was busy ${formatDuration(r.loopBusyNs, 'ns', { ascii: true })}${r.seconds ? ` (${percent(Number(r.loopBusyNs) / 1e9 / r.seconds)} of the time)` : ''}; ${r.hook ? 'callbacks (AsyncWraps and the hook\'s kinds)' : 'AsyncWrap callbacks'} ${formatDuration(callbacksNs, 'ns', { ascii: true })} of it${r.loopBusyNs > 0n ? ` (${percent(Number(callbacksNs) / Number(r.loopBusyNs))})` : ''}.`);
  out.push(...threadsLines({ thread, workers }));
  if (!r.kinds.length) {
    out.push('', 'No asynchronous operation was created or called back while tracing.');
    return safeText(out.join('\n') + '\n');
  }
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
  out.push('', line(header), ...rows.map(line));
  if (r.kinds.length > top) {
    const rest = r.kinds.slice(top);
    out.push(`  ... ${rest.length} more kind${rest.length > 1 ? 's' : ''} (--top ${r.kinds.length} shows all): ${rest.map(kindLabel).join(', ')}`);
  }
  const named = r.kinds.slice(0, top).filter((k) => k.functions.length);
  if (named.length) {
    out.push('', 'The functions callbacks called, most time first:');
    for (const k of named) {
      for (const [i, f] of k.functions.slice(0, FUNCTIONS_IN_TEXT).entries()) {
        out.push(`  ${(i === 0 ? kindLabel(k) : '').padEnd(widths[0])}  ${formatDuration(f.ns, 'ns', { ascii: true }).padStart(8)}  ${String(f.calls === null ? '?' : f.calls).padStart(6)} calls  ${functionLabel(f)}`);
      }
    }
  }
  if (r.liveStacks) out.push('', ...liveStacksText(r.kinds.slice(0, top), widths[0]));
  const growing = r.kinds.filter((k) => k.growing);
  out.push('');
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
  const w = workers ? `${workers} worker thread${workers === 1 ? '' : 's'}` : '';
  return `in ${main ? `the main thread${w ? ` and ${w}` : ''}` : w}`;
}

// A frame named from V8's metadata (lib/profile/js-frames.js profileFrame):
// `name file:line:column`, where native ones read `symbol+offset`.
function isJsFrame(f) {
  return /\s\S+:\d+:\d+$/.test(f) && !/\+\d+$/.test(f);
}

// The frames that say nothing of who created it: AsyncReset and the
// constructors of the wrap's classes (`node::HandleWrap::HandleWrap(...)`).
function isConstructorFrame(f) {
  const m = /^node::(?:[\w<>, ]+::)*(\w+)(?:<[^(]*>)?::(\w+)\(/.exec(f);
  return Boolean(m && (m[1] === m[2] || /^node::AsyncWrap::AsyncReset\(/.test(f)));
}

/**
 * A kind's stacks as text shows them: from the first JavaScript frame where
 * there is one (node's and V8's way into the constructor above it), else
 * from the first frame past the constructors; stacks that show alike
 * (V8's tiers: a construct stub more or less) are one. Most first.
 */
function textStacks(stacks) {
  const merged = new Map();
  for (const st of stacks) {
    const js = st.frames.findIndex(isJsFrame);
    let from = js;
    if (from < 0) {
      from = 0;
      while (from < st.frames.length - 1 && isConstructorFrame(st.frames[from])) from++;
    }
    const frames = st.frames.length ? st.frames.slice(from) : ['(no frame)'];
    const key = frames.join('\n');
    if (!merged.has(key)) merged.set(key, { count: 0, frames, skipped: from });
    merged.get(key).count += st.count;
  }
  return [...merged.values()].sort((a, b) => b.count - a.count);
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
      out.push(`    ${restStacks} more stack${restStacks === 1 ? '' : 's'} of ${l.tracked - shownCount} alive (--json keeps ${STACKS_PER_KIND} a kind, counts the rest)`);
    }
    if (l.unkept > 0n) out.push(`    ${l.unkept} more created without their stack: more than ${LIVE_KEPT} alive at once`);
  }
  return out;
}

// ---- JSON --------------------------------------------------------------------

/** renderAsyncJSON(report, { pid, who, tracer, version }) -> string (docs/json-format.md) */
function renderAsyncJSON(r, { pid, who, tracer, version, thread = null, workers = [] }) {
  const kinds = r.kinds.map((k) => ({
    provider: k.source === 'AsyncWrap' ? k.number : null,
    source: k.source,
    name: k.name,
    // An async_hooks kind: how many threads' hooks counted it (each thread,
    // main and workers, runs its own). AsyncWraps are counted over every
    // thread without telling them apart: null.
    threads: k.threads ? new Set(k.threads).size : null,
    created: jsonInteger(k.created),
    created_per_s: jsonEstimate(perSecond(k.created, r.seconds)),
    callbacks: jsonInteger(k.callbacks),
    destroyed: jsonInteger(k.destroyed),
    alive_delta: jsonInteger(k.alive),
    growing: k.growing,
    alive_each_second: k.series,
    wait: {
      p50_us: jsonEstimate(pct(k.wait, 50, k.waitMaxUs)),
      p99_us: jsonEstimate(pct(k.wait, 99, k.waitMaxUs)),
      max_us: jsonInteger(k.waitMaxUs),
      histogram: k.wait ? jsonHistogram(k.wait) : [],
    },
    callback: {
      p50_us: jsonEstimate(pct(k.callback, 50, k.callbackMaxUs)),
      p99_us: jsonEstimate(pct(k.callback, 99, k.callbackMaxUs)),
      max_us: jsonInteger(k.callbackMaxUs),
      total_ns: jsonInteger(k.callbackTotalNs),
      loop_ns: jsonInteger(k.loopCallbackNs),
      loop_share: jsonEstimate(loopShare(k, r.loopBusyNs)),
      histogram: k.callback ? jsonHistogram(k.callback) : [],
      functions: k.functions.map((f) => ({
        function: f.name, address: f.sfi === '0' ? null : `0x${BigInt(f.sfi).toString(16)}`, calls: jsonInteger(f.calls), total_ns: jsonInteger(f.ns),
      })),
    },
    ...(k.live ? {
      live_stacks: {
        alive: k.live.tracked,
        stacks: k.live.stacks.map((s) => ({ count: s.count, frames: s.frames })),
        other_stacks: k.live.otherStacks,
        other_count: k.live.otherCount,
        without_stack: jsonInteger(k.live.unkept),
      },
    } : {}),
  }));
  return safeJson({
    version: JSON_VERSION, command: 'async', pid, ...(who ? { process: identityJson(who) } : {}), tracer,
    node_version: version || null,
    seconds: r.seconds === null ? null : jsonEstimate(r.seconds),
    traced_ns: jsonInteger(r.tracedNs),
    loop_busy_ns: jsonInteger(r.loopBusyNs),
    // Whose loop loop_busy_ns and each kind's loop_ns are (the main thread's
    // unless --thread chose a Worker); the Workers whose operations the
    // counts hold too.
    loop_thread: thread ? { tid: thread.tid, role: thread.role, label: thread.label } : null,
    workers: workers.map((w) => ({ tid: w.tid, label: w.label })),
    hook: r.hook,
    unit: 'us',
    ...(r.liveStacks ? { live_stacks_kept: { per_kind: STACKS_PER_KIND, alive_at_once: LIVE_KEPT } } : {}),
    kinds,
  }) + '\n';
}

module.exports = {
  parseAsync, parseAliveSamples, isGrowing, splitHookNames, functionAddresses, renderAsyncText, renderAsyncJSON,
  groupLiveStacks, splitLiveStacks,
  MIN_TREND_SAMPLES, STACKS_PER_KIND, LIVE_KEPT,
};
