'use strict';
// Tracer text -> what the user reads: parse, merge keys that print the same
// name, demangle, filter, then render as text or JSON. `latency` and `format`
// both end here, so a raw D script piped through `nodetrace format` reads the
// same as `nodetrace latency`.
const { parse } = require('./parse');
const { renderReport, mangledNames, applyDemangled } = require('../render/text');
const { toJSON } = require('../render/json');
const { demangleNames } = require('../demangle');
const { discardImpossible } = require('./impossible');
const { safeText } = require('../terminal-safe');
const { userFacingName, symbolOf, isLibuvRequest, fsType } = require('../latency/report/kind-names');
const { splitPoolMaps, summarizePool, runMicroseconds, poolLines } = require('../latency/report/pool');
const { withNamedEntries, foldNamedKinds } = require('../latency/report/named-kinds');
const { buildKinds, mergeEntriesByName, subjectLabel } = require('./model');

// Node's own C++ lives in namespace node:: (and libuv's uv_*); add-ons don't.
// Keys still unresolved to an add-on after N-API attribution fall here too.
function isNodeInternal(keyText) {
  const name = keyText.replace(/^[^`]*`/, '');
  return /^(node::|uv_|uv__|v8::)/.test(name) || /^node`/.test(keyText) || /(^|\/)node(js)?`/.test(keyText)
    || isLibuvRequest(keyText);
}

function filterKinds(model, keep) {
  return {
    ...model,
    aggregations: model.aggregations.map((agg) => ({
      ...agg,
      entries: agg.entries.filter((e) => keep(e.key.join(' '))),
    })),
  };
}

const THUNK = 'non-virtual thunk to ';

// Keys the tracer left as bare addresses ('0x7f2af143e731'), for a caller
// that can still name them (lib/symbolize.js).
function unresolvedKeys(model) {
  const found = new Set();
  for (const agg of model.aggregations) {
    for (const e of agg.entries) for (const k of e.key) if (/^0x[0-9a-f]+$/i.test(k) && fsType(k) === null) found.add(k);
  }
  return [...found];
}

function renameKeys(model, names) {
  return {
    ...model,
    aggregations: model.aggregations.map((agg) => ({
      ...agg,
      entries: agg.entries.map((e) => ({ ...e, key: e.key.map((k) => names.get(k) || k) })),
    })),
  };
}

// `output`: the tracer's output in its two parts (lib/tracer/output-formats.js
// splitAtEndMarker: `during`, the lines printed while tracing, and `maps`).
// traceNs: how long the trace lasted (latency knows; `format` of saved output
// does not): longer samples cannot be true and are set apart, as are
// negative ones, whatever the tracer.
function buildModel({ during = [], maps = '' }, { tracer, addonsOnly = false, resolveAddresses, traceNs = null, poolNs = null, symbols = false } = {}) {
  let model = parse(maps, { tracer });
  // The pool's own maps describe the pool, not kinds of work (lib/latency/report/pool.js).
  const split = splitPoolMaps(model.aggregations);
  model = { ...model, aggregations: split.rest, pool: split.pool };
  // latency --paths / --hosts: kinds split by what they were done to.
  model = withNamedEntries(model, during);
  if (resolveAddresses) {
    const raw = unresolvedKeys(model);
    if (raw.length) model = renameKeys(model, resolveAddresses(raw));
  }
  const names = mangledNames(model);
  if (names.length) model = applyDemangled(model, demangleNames(names));
  // Work named by its class's virtual DoThreadPoolWork() (addon-latency.bt,
  // Node 26+) may be reached through a thunk: the function is the name.
  model = renameKeys(model, { get: (k) => (k.startsWith(THUNK) ? k.slice(THUNK.length) : undefined) });
  if (addonsOnly) model = filterKinds(model, (k) => !isNodeInternal(k));
  // Node's own work by the name its users know (fs.read, dns.lookup, zlib,
  // crypto.pbkdf2); the C++ or libuv name stays in model.symbols (--json), or
  // in place with --symbols.
  const named = new Map();   // user's name -> the names it was given for
  if (!symbols) {
    model = renameKeys(model, {
      get: (k) => {
        const name = userFacingName(k);
        if (name) named.set(name, new Set([...(named.get(name) || []), symbolOf(k)]));
        return name || undefined;
      },
    });
  }
  model.symbols = new Map([...named].map(([name, raw]) => [name, [...raw].sort()]));
  // After demangling and naming: two addresses, manglings or classes can print one name.
  model = { ...model, aggregations: model.aggregations.map(mergeEntriesByName) };
  model = foldNamedKinds(model);
  model.poolNs = poolNs || traceNs;
  // DTrace's maps without a unit in their name are nanoseconds (its timestamp).
  return discardImpossible(model, { traceNs, unit: model.tracer === 'dtrace' ? 'ns' : null });
}

// The pool as a resource (lib/latency/report/pool.js), where the program measured it
// and the trace's length is known.
function poolOf(model) {
  if (!model.pool || !model.poolNs) return null;
  const view = buildKinds(model, { unit: model.tracer === 'dtrace' ? 'ns' : null });
  const kinds = view.kinds.map((k) => ({ name: k.key.join(', ') + (k.subject ? ` ${subjectLabel(k.subject)}` : ''), runUs: runMicroseconds(k) }));
  return summarizePool(model.pool, kinds, model.poolNs / 1000);
}

function poolToJSON(summary) {
  if (!summary) return null;
  const round = (x) => (x === null ? null : Math.round(x * 1000) / 1000);
  return {
    threads: summary.threads,
    busy_share: round(summary.busyShare),
    busy_us_by_thread: summary.perThread.map((t) => ({ tid: t.tid, busy_us: t.busyUs })),
    waiting_share: round(summary.waitingShare),
    queued_at_start: summary.queue ? { p50: round(summary.queue.p50), p99: round(summary.queue.p99), at_most: summary.queue.maxAtMost, starts: summary.queue.starts } : null,
    run_share_by_kind: summary.byKind.map((k) => ({ name: k.name, share: round(k.share) })),
    saturated: summary.saturated,
  };
}

// Kinds of work, or the pool's own measures (a pool so saturated that no
// operation queued while tracing finished still has a queue to show).
function hasData(model) {
  return model.aggregations.some((a) => a.entries.length > 0) || poolOf(model) !== null;
}

function renderModel(model, { json = false, ...options } = {}) {
  const pool = poolOf(model);
  if (json) {
    const out = toJSON(model, options);
    // The C++ or libuv functions behind a name given for users.
    for (const kind of out.kinds) kind.symbols = (model.symbols && model.symbols.get(kind.name)) || null;
    out.pool = poolToJSON(pool);
    // JSON.stringify escapes C0 controls but not DEL and C1 (which some
    // terminals obey): paths and host names come from the traced process.
    return JSON.stringify(out, null, 2).replace(/[\u007f-\u009f]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`) + '\n';
  }
  const lines = poolLines(pool);
  // Keys are names from the target's binaries and perf map, or from stdin.
  return safeText(renderReport(model, options) + (lines.length ? '\n' + lines.join('\n') + '\n' : ''));
}

module.exports = { buildModel, renderModel, hasData, isNodeInternal };
