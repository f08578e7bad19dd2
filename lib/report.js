'use strict';
// Tracer text -> what the user reads: parse, merge keys that print the same
// name, demangle, filter, then render as text or JSON. `latency` and `format`
// both end here, so a raw D script piped through `nodetrace format` reads the
// same as `nodetrace latency`.
const { parse } = require('./aggregation/parse');
const { mergeEntriesByName } = require('./aggregation/model');
const { renderReport, mangledNames, applyDemangled } = require('./render/report');
const { toJSON } = require('./render/json');
const { demangleNames } = require('./demangle');

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

function buildModel(text, { tracer, addonsOnly = false } = {}) {
  let model = parse(text, { tracer });
  const names = mangledNames(model);
  if (names.length) model = applyDemangled(model, demangleNames(names));
  // After demangling: two addresses, or two manglings, can print one name.
  model = { ...model, aggregations: model.aggregations.map(mergeEntriesByName) };
  if (addonsOnly) model = filterKinds(model, (k) => !isNodeInternal(k));
  return model;
}

function hasData(model) {
  return model.aggregations.some((a) => a.entries.length > 0);
}

function renderModel(model, { json = false, ...options } = {}) {
  if (json) return JSON.stringify(toJSON(model, options), null, 2) + '\n';
  return renderReport(model, options);
}

module.exports = { buildModel, renderModel, hasData, isNodeInternal };
