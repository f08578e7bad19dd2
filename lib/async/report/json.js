'use strict';
// async's report as JSON (`nodetrace async --json`): the same kinds as the
// text report, with numbers instead of prose, every kept function and
// stack. The shape is documented field by field in docs/json-format.md;
// bump JSON_VERSION when it changes incompatibly. Pure: a model
// (./build-model.js) in, its text out.
const { identityJson } = require('../../proc/container');
const { percentile } = require('../../aggregation/model');
const { jsonInteger, jsonEstimate, jsonHistogram } = require('../../render/json');
const { safeJson } = require('../../terminal-safe');
const { STACKS_PER_KIND, LIVE_KEPT } = require('./live-stacks');
const { perSecond, loopShare } = require('./summary');
const { threadsToJSON } = require('./threads');

const JSON_VERSION = 1;

function pct(entry, p, maxUs) {
  return entry ? percentile(entry, p, maxUs === null ? null : Number(maxUs)) : null;
}

function kindToJSON(k, r) {
  return {
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
    ...(k.live ? { live_stacks: liveStacksToJSON(k.live) } : {}),
  };
}

function liveStacksToJSON(live) {
  return {
    alive: live.tracked,
    stacks: live.stacks.map((s) => ({ count: s.count, frames: s.frames })),
    other_stacks: live.otherStacks,
    other_count: live.otherCount,
    without_stack: jsonInteger(live.unkept),
  };
}

/**
 * renderAsyncJSON(model, { pid, who, tracer, version, thread, workers, identityOf }) -> string
 * (docs/json-format.md); identityOf(tid): a thread's identity (lib/threads/identify.js) or null.
 */
function renderAsyncJSON(r, { pid, who, tracer, version, thread = null, workers = [], identityOf = null }) {
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
    kinds: r.kinds.map((k) => kindToJSON(k, r)),
    // The kinds' counts by the thread that created or called back each
    // (main, each Worker: its own loop); null in a capture without the maps.
    threads: threadsToJSON(r.threads, identityOf || ((tid) => (tid === pid ? { tid, role: 'main' } : null))),
  }) + '\n';
}

module.exports = { renderAsyncJSON };
