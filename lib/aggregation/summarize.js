'use strict';
// Tracer text -> what the user reads: parse, merge keys that print the same
// name, demangle, filter, then render as text or JSON. `latency` and `format`
// both end here, so a raw D script piped through `nodetrace format` reads the
// same as `nodetrace latency`.
const { parse } = require('./parse');
const { mergeEntriesByName } = require('./model');
const { renderReport, mangledNames, applyDemangled } = require('../render/text');
const { toJSON } = require('../render/json');
const { demangleNames } = require('../demangle');
const { discardImpossible } = require('./impossible');
const { safeText } = require('../terminal-safe');

// Node's own C++ lives in namespace node:: (and libuv's uv_*); add-ons don't.
// Keys still unresolved to an add-on after N-API attribution fall here too.
function isNodeInternal(keyText) {
  const name = keyText.replace(/^[^`]*`/, '');
  return /^(node::|uv_|uv__|v8::)/.test(name) || /^node`/.test(keyText) || /(^|\/)node(js)?`/.test(keyText);
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
    for (const e of agg.entries) for (const k of e.key) if (/^0x[0-9a-f]+$/i.test(k)) found.add(k);
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

// traceNs: how long the trace lasted (latency knows; `format` of saved output
// does not): longer samples cannot be true and are set apart, as are
// negative ones, whatever the tracer.
function buildModel(text, { tracer, addonsOnly = false, resolveAddresses, traceNs = null } = {}) {
  let model = parse(text, { tracer });
  if (resolveAddresses) {
    const raw = unresolvedKeys(model);
    if (raw.length) model = renameKeys(model, resolveAddresses(raw));
  }
  const names = mangledNames(model);
  if (names.length) model = applyDemangled(model, demangleNames(names));
  // Work named by its class's virtual DoThreadPoolWork() (addon-latency.bt,
  // Node 26+) may be reached through a thunk: the function is the name.
  model = renameKeys(model, { get: (k) => (k.startsWith(THUNK) ? k.slice(THUNK.length) : undefined) });
  // After demangling: two addresses, or two manglings, can print one name.
  model = { ...model, aggregations: model.aggregations.map(mergeEntriesByName) };
  if (addonsOnly) model = filterKinds(model, (k) => !isNodeInternal(k));
  // DTrace's maps without a unit in their name are nanoseconds (its timestamp).
  return discardImpossible(model, { traceNs, unit: model.tracer === 'dtrace' ? 'ns' : null });
}

function hasData(model) {
  return model.aggregations.some((a) => a.entries.length > 0);
}

function renderModel(model, { json = false, ...options } = {}) {
  if (json) return JSON.stringify(toJSON(model, options), null, 2) + '\n';
  // Keys are names from the target's binaries and perf map, or from stdin.
  return safeText(renderReport(model, options));
}

module.exports = { buildModel, renderModel, hasData, isNodeInternal };
