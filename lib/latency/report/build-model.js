'use strict';
// A latency trace's output -> the model its report is made from: parse,
// set the pool's maps apart, name --paths/--hosts kinds, name bare
// addresses, demangle, merge keys that print the same name, filter, give
// Node's own work the names its users know, set impossible samples apart.
// `latency` and `format` both start here, so a raw D script piped through
// `nodetrace format` reads the same as `nodetrace latency`.
const { parse } = require('../../aggregation/parse');
const { TEXT_KEYS } = require('../../aggregation/text-keys');
const { mangledNames, applyDemangled, mergeEntriesByName } = require('../../aggregation/model');
const { discardImpossible } = require('../../aggregation/impossible');
const { demangleNames } = require('../../demangle');
const { userFacingName, symbolOf, isLibuvRequest, fsType } = require('./kind-names');
const { splitPoolMaps } = require('./pool');
const { splitThreadMaps } = require('./threads');
const { withNamedEntries, foldNamedKinds } = require('./named-kinds');
const { defaultUnit } = require('./kinds');

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
    for (const e of agg.entries) for (const k of e.key) if (/^0x[0-9a-f]+$/i.test(k)
      && fsType(k) === null) found.add(k);
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
  // Kinds are keyed by the function's name, the process's text: read whole
  // (`format` reads either program's output).
  const textKeys = { ...TEXT_KEYS['addon-latency'], ...TEXT_KEYS['addon-latency-every-function'] };
  let model = parse(maps, { tracer, textKeys });
  // The program's own length of the trace (@traced_ns: addon-latency.bt's
  // window, from nodetrace's signal that opened it to the one that closed
  // it), not a kind of work.
  const traced = model.aggregations.find((a) => a.name === 'traced_ns');
  const tracedEntry = traced && traced.entries.length === 1 && traced.entries[0].kind === 'scalar' ? traced.entries[0] : null;
  // The pool's own maps describe the pool, not kinds of work (./pool.js).
  const split = splitPoolMaps(model.aggregations.filter((a) => a !== traced));
  // Whose work it was, by thread (./threads.js): not a kind either.
  const byThread = splitThreadMaps(split.rest);
  model = { ...model, aggregations: byThread.rest, pool: split.pool, threads: byThread.threads,
    programTracedNs: tracedEntry ? tracedEntry.value : null };
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
  // Unnamed maps in the tracer's own unit (DTrace's ns): format's --unit
  // only changes how the report shows them.
  return discardImpossible(model, { traceNs, unit: defaultUnit(model.tracer) });
}

module.exports = { buildModel, isNodeInternal };
