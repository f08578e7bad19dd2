'use strict';
// An async trace's output (d-scripts/async.bt|.d) -> the model its report
// is made from: per kind of asynchronous operation (an AsyncWrap provider,
// or a type the register hook counted) what was created, called back and
// destroyed, how long operations waited and callbacks ran, the functions
// the callbacks called, the alive count each second and whether the kind
// is growing; with --stacks, the live operations' raw stacks. Pure.
const { parse } = require('../../aggregation/parse');
const { totalCount } = require('../../aggregation/model');
const { providerName } = require('../providers');
const { parseAliveSamples, isGrowing } = require('./alive-samples');
const { splitHookNames, hookKindOf, unnamedHookKind, mergeHookThreads } = require('./hook-kinds');
const { splitLiveStacks, groupRaw } = require('./live-stacks');
const { threadsOf } = require('./threads');

// The functions kept per kind (most callback time first): in JSON; text shows fewer.
const FUNCTIONS_PER_KIND = 10;

// The maps keyed by kind.
const KIND_MAPS = ['created', 'callbacks', 'destroyed', 'wait_us', 'wait_max_us', 'callback_us',
  'callback_max_us', 'callback_total_ns', 'loop_callback_ns', 'hook_created', 'hook_destroyed'];

function byKey(model, name) {
  const agg = model.aggregations.find((a) => a.name === name);
  const out = new Map();
  for (const e of agg ? agg.entries : []) out.set(e.key.join(','), e);
  return out;
}

function cmp(a, b) { return a === b ? 0 : a > b ? 1 : -1; }

// A count or time of kind `k` (a BigInt), or null where none was printed.
function countOf(map, k) {
  return map.get(k) && typeof map.get(k).value === 'bigint' ? map.get(k).value : null;
}

// A histogram of kind `k` with at least one sample, or null.
function histogramOf(map, k) {
  return map.get(k) && Array.isArray(map.get(k).buckets) && totalCount(map.get(k)) > 0n ? map.get(k) : null;
}

/**
 * parseAsync({ during, maps }, { providers, attachedNs, stacks, hook }) -> {
 *   kinds: [{ number, source ('AsyncWrap' | 'async_hooks': the register hook's), name, created, callbacks, destroyed, alive, growing,
 *             series (alive each second), wait (entry|null), waitMaxUs,
 *             callback (entry|null), callbackMaxUs, callbackTotalNs, loopCallbackNs,
 *             threads (an async_hooks kind: the thread IDs whose hooks counted it; null) }],
 *   threads: each thread's own counts (./threads.js threadsOf), or null,
 *   tracedNs, loopBusyNs, seconds (the span rates are over) }
 * Counts are BigInt, as in lib/aggregation's model. `providers`: the Node
 * version's table (lib/async/providers.js), or null (numbers shown).
 */
function parseAsync({ during = [], maps = '' } = {}, { providers = null, attachedNs = null, stacks = false, hook = false, tracer = 'bpftrace' } = {}) {
  const named = splitHookNames(during);
  const { rest: mapLines, hookNames } = splitHookNames(String(maps || '').replace(/\0/g, '').split('\n'), named.hookNames);
  const { rest, live } = splitLiveStacks(mapLines.join('\n'));
  const model = parse(rest, { tracer });
  const m = Object.fromEntries(KIND_MAPS.map((n) => [n, byKey(model, n)]));
  const scalar = (name) => { const e = byKey(model, name).get(''); return e ? e.value : null; };
  const samples = parseAliveSamples(named.rest);
  const { functions, totals } = functionsByKind(model);
  const numbers = new Set();
  for (const map of Object.values(m)) for (const k of map.keys()) if (/^\d+$/.test(k)) numbers.add(k);
  const perThread = [...numbers].map((k) => kindOf(k, { m, samples, functions, totals, hookNames, providers }));
  // Each thread's own (./threads.js), before the hook's kinds are merged over threads.
  const threads = threadsOf(model, { nameOf: (k) => providerName(providers, k),
    hookKinds: perThread.filter((k) => k.source === 'async_hooks') });
  const kinds = mergeHookThreads(perThread);
  // Most loop time first, then most created: the kinds that matter on top.
  kinds.sort((a, b) => cmp(b.loopCallbackNs, a.loopCallbackNs) || cmp(b.callbackTotalNs, a.callbackTotalNs)
    || cmp(b.created, a.created) || a.number - b.number);
  const tracedNs = scalar('traced_ns');
  const spanNs = attachedNs && attachedNs > 0 ? attachedNs : tracedNs !== null ? Number(tracedNs) : null;
  const unkept = byKey(model, 'unkept');
  for (const k of kinds) k.unkept = countOf(unkept, String(k.number)) || 0n;
  return {
    // Operations that found async.bt's @born full (its wait unmeasured:
    // lib/render/map-full.js), chains @js_sfi could not keep; the keys of
    // the maps printed whole that can fill.
    fullBorn: Number(scalar('full_born') || 0),
    fullJs: Number(scalar('full_js') || 0),
    keysHeld: { hook_created: m.hook_created.size, function_ns: byKey(model, 'function_ns').size, thread_created: byKey(model, 'thread_created').size },
    kinds, threads, tracedNs, hook: hook || kinds.some((k) => k.source === 'async_hooks'), loopBusyNs: scalar('loop_busy_ns') || 0n, seconds: spanNs ? spanNs / 1e9 : null, samples: samples.length,
    // --stacks: the live operations grouped by kind and raw stack, to be
    // named (lib/loop/name-stacks.js) and then grouped per kind (groupLiveStacks).
    liveStacks: stacks ? groupRaw(live) : null,
  };
}

// One kind as one thread counted it (key `k`, decimal): an AsyncWrap's
// figures are every thread's already; a hook kind is merged over threads
// after (mergeHookThreads).
function kindOf(k, { m, samples, functions, totals, hookNames, providers }) {
  // The hook's kinds are counted in the process and summed (@hook_*).
  const created = countOf(m.created, k) || countOf(m.hook_created, k) || 0n;
  const destroyed = countOf(m.destroyed, k) || countOf(m.hook_destroyed, k) || 0n;
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
    callbacks: countOf(m.callbacks, k) || 0n,
    destroyed,
    alive: created - destroyed,
    series,
    growing: isGrowing(series),
    wait: histogramOf(m.wait_us, k),
    waitMaxUs: countOf(m.wait_max_us, k),
    callback: histogramOf(m.callback_us, k),
    callbackMaxUs: countOf(m.callback_max_us, k),
    // Every thread's callback time: the sum over the functions called
    // (older captures printed it as @callback_total_ns).
    callbackTotalNs: countOf(m.callback_total_ns, k) || totals.get(k) || 0n,
    loopCallbackNs: countOf(m.loop_callback_ns, k) || 0n,
    // The hook's callbacks keep no function (0): none to show.
    functions: (functions.get(k) || []).filter((f) => !(hookKind && f.sfi === '0')),
  };
}

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

module.exports = { parseAsync, functionAddresses };
