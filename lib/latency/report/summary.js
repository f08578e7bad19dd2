'use strict';
// What the latency report says, decided once for its text (./text.js) and
// its JSON (./json.js): the unit of maps whose names carry none, the kinds
// in the order asked for with their breakdown, the maps that are not kinds,
// the samples set apart, and the thread pool's figures. Pure: a model
// (./build-model.js, or any parsed output) in, a summary out.
const { buildKinds, sortKinds, defaultUnit, subjectLabel } = require('./kinds');
const { summarizePool, runMicroseconds } = require('./pool');

// The pool as a resource (./pool.js), where the program measured it and the
// trace's length is known.
function poolOf(model, kinds) {
  if (!model.pool || !model.poolNs) return null;
  const runs = kinds.map((k) => ({ name: k.key.join(', ') + (k.subject ? ` ${subjectLabel(k.subject)}` : ''), runUs: runMicroseconds(k) }));
  return summarizePool(model.pool, runs, model.poolNs / 1000);
}

/**
 * summarize(model, { sort, unit }) -> { tracer, unit, sort, convention, kinds,
 *   other, discarded, symbols, pool, hasEntries }
 *   sort: 'total' | 'count' | 'name', the order of the kinds
 *   unit: of maps whose names carry none (default: DTrace's ns; kinds.defaultUnit)
 */
function summarize(model, { sort = 'total', unit } = {}) {
  const chosen = defaultUnit(model.tracer, unit);
  const view = buildKinds(model, { unit: chosen });
  return {
    tracer: model.tracer,
    unit: chosen,
    sort,
    convention: view.convention,
    kinds: sortKinds(view.kinds, sort),
    other: view.other,
    discarded: model.discarded || null,
    // user's name -> the C++ or libuv functions it stands for (buildModel)
    symbols: model.symbols || null,
    // The pool ranks kinds by their share of its time; ties by time spent,
    // whatever order the report shows them in.
    pool: poolOf(model, sortKinds(view.kinds, 'total')),
    hasEntries: model.aggregations.some((a) => a.entries.length > 0),
    // By the thread that queued the work (./threads.js), null where the program printed none.
    threads: model.threads || null,
    // The trace's length in ns (a BigInt), where known (latency; not format).
    tracedNs: model.tracedNs === undefined ? null : model.tracedNs,
  };
}

/**
 * Something to show: kinds of work, or the pool's own measures (a pool so
 * saturated that no operation queued while tracing finished still has a
 * queue to show).
 */
function hasData(summary) {
  return summary.hasEntries || summary.pool !== null;
}

module.exports = { summarize, hasData };
