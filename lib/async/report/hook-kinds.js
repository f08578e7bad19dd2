'use strict';
// The kinds async counts through the register hook (async.bt's @hook part),
// apart from the AsyncWraps: their names as the process's hook gave them,
// their keys (thread and kind), and one row per type over every thread.
// Pure.
const { mergeBuckets } = require('../../aggregation/model');
const { HOOK_KIND_BASE, HOOK_THREAD_SHIFT } = require('../probes');
const { nameFromWords } = require('../../tracer/name-words');
const { isGrowing } = require('./alive-samples');

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

module.exports = { splitHookNames, hookKindOf, unnamedHookKind, mergeHookThreads };
