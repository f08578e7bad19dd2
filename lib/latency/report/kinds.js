'use strict';
// The latency convention: nodetrace's latency programs name their maps
// total_<unit>, queue_wait_<unit>, run_<unit>, loop_wait_<unit> and
// max_<unit> (optionally sum_<unit>), all keyed by the kind of operation.
// buildKinds() lines those up per key: one "kind" per total_* entry with its
// breakdown and max, which the text and the JSON report both show. Without
// a total_* map, every distribution entry is a kind on its own. Pure.

const { safeText } = require('../../terminal-safe');
const { displayKey, estimatedTotal, isDistribution, keyId, mergeEntriesByName, totalCount, unitOf } = require('../../aggregation/model');
const { NS_PER } = require('../../render/units');

const ROLE_NAME = /^(total|queue_wait|run|loop_wait|max|sum)_(ns|nsecs|us|usecs|ms|msecs|s|secs)$/;
const PHASES = ['queue_wait', 'run', 'loop_wait'];

/**
 * The unit of maps whose names carry none: the one the user asked for, else
 * DTrace's nanoseconds (its timestamp); bpftrace's are unknown (null).
 */
function defaultUnit(tracer, requested) {
  if (requested !== undefined) return requested;
  return tracer === 'dtrace' ? 'ns' : null;
}

/** 'total'|'queue_wait'|'run'|'loop_wait'|'max'|'sum' for a latency-convention map name, else null. */
function latencyRole(name) {
  const match = ROLE_NAME.exec(name || '');
  return match ? match[1] : null;
}

function indexByKey(aggregation) {
  const index = new Map();
  if (aggregation) for (const entry of aggregation.entries) index.set(keyId(entry), entry);
  return index;
}

/** A subject as one line a terminal shows safely: the text, or what was folded. */
function subjectLabel(subject) {
  if (!subject) return '';
  if (subject.text === null) return `(other ${subject.field === 'host' ? 'hosts' : 'paths'})`;
  return safeText(subject.text, { oneLine: true }) + (subject.cut ? '\u2026' : '');
}

function kindName(kind) {
  const name = kind.key.map((field) => displayKey(field).func).join(', ');
  return kind.subject ? `${name} ${subjectLabel(kind.subject)}` : name;
}

const SORTERS = {
  // by estimated time spent (sum() when the program kept one), most first
  total: (a, b) => b.timeNs - a.timeNs,
  count: (a, b) => (a.count === b.count ? 0 : a.count > b.count ? -1 : 1),
  name: (a, b) => kindName(a).localeCompare(kindName(b)),
};

function timeInNs(value, unit) {
  return value * (NS_PER[unit] || 1);
}

// The exact max, converted to `unit` for capping percentiles; null when the
// units cannot be compared.
function limitIn(max, unit) {
  if (!max) return null;
  if (max.unit === unit) return Number(max.value);
  if (!max.unit || !unit) return null;
  return (Number(max.value) * NS_PER[max.unit]) / NS_PER[unit];
}

// One aggregation per name: a map printed in several blocks (DTrace printa
// per key, or output the parser saw split) counts as one.
function joinSameNamed(aggregations) {
  const joined = [];
  const byName = new Map();
  for (const a of aggregations) {
    if (a.name === null || !byName.has(a.name)) {
      const copy = { ...a, entries: a.entries.slice() };
      if (a.name !== null) byName.set(a.name, copy);
      joined.push(copy);
    } else {
      for (const e of a.entries) byName.get(a.name).entries.push(e);
    }
  }
  return joined;
}

/**
 * buildKinds(model, { unit }) -> { convention, kinds, other }
 *   kinds: [{ aggregation, key, entry, unit, count, timeNs, order, max: {value, unit}|null,
 *             limit: max in `unit` (for percentile()) | null, subject?,
 *             breakdown: { queue_wait?: {entry, unit, limit}, run?, loop_wait? } | null }]
 *          in the order the tracer printed them (sortKinds orders them)
 *   other: the merged aggregations not shown as kinds (scalars, stats, and
 *          distributions outside the convention when it is in use), in order.
 * Entries are merged by key first (mergeEntriesByName).  `unit` is the unit
 * of maps whose names carry none (defaultUnit).
 */
function buildKinds(model, { unit: fallback = null } = {}) {
  const aggregations = joinSameNamed(model.aggregations).map(mergeEntriesByName);
  const byRole = new Map();
  for (const aggregation of aggregations) {
    const role = latencyRole(aggregation.name);
    if (role && !byRole.has(role)) byRole.set(role, aggregation);
  }
  const convention = byRole.has('total');
  const sources = convention ? [byRole.get('total')] : aggregations.filter((a) => a.entries.some(isDistribution));
  const consumed = new Set(convention ? byRole.values() : sources);
  const maxByKey = indexByKey(convention ? byRole.get('max') : null);
  const sumByKey = indexByKey(convention ? byRole.get('sum') : null);
  const phaseByKey = PHASES.map((phase) => [phase, byRole.get(phase), indexByKey(byRole.get(phase))]);

  const kinds = [];
  sources.forEach((aggregation, order) => {
    const unit = unitOf(aggregation, fallback);
    for (const entry of aggregation.entries.filter(isDistribution)) {
      const id = keyId(entry);
      const kind = { aggregation: aggregation.name, key: entry.key, entry, unit, order, breakdown: null, max: null };
      if (entry.subject) kind.subject = entry.subject;
      kind.count = totalCount(entry);
      const sum = sumByKey.get(id);
      kind.timeNs = sum && sum.value !== undefined
        ? timeInNs(Number(sum.value), unitOf(byRole.get('sum'), fallback))
        : timeInNs(estimatedTotal(entry), unit);
      const max = maxByKey.get(id);
      if (max && max.value !== undefined) kind.max = { value: max.value, unit: unitOf(byRole.get('max'), fallback) };
      kind.limit = limitIn(kind.max, unit);
      for (const [phase, phaseAggregation, index] of phaseByKey) {
        const phaseEntry = index.get(id);
        if (phaseEntry && isDistribution(phaseEntry)) {
          const phaseUnit = unitOf(phaseAggregation, fallback);
          kind.breakdown = kind.breakdown || {};
          // no phase of an operation outlasts the whole operation
          kind.breakdown[phase] = { entry: phaseEntry, unit: phaseUnit, limit: limitIn(kind.max, phaseUnit) };
        }
      }
      kinds.push(kind);
    }
  });
  const other = aggregations.filter((aggregation) => !consumed.has(aggregation));
  return { convention, kinds, other };
}

/**
 * The kinds in the order asked for ('total': time spent, 'count', 'name'),
 * a new array. Stable: kinds from different maps stay grouped by map, in the
 * order the maps were printed.
 */
function sortKinds(kinds, sort = 'total') {
  const compare = SORTERS[sort] || SORTERS.total;
  return kinds.slice().sort((a, b) => a.order - b.order || compare(a, b));
}

module.exports = { PHASES, defaultUnit, latencyRole, subjectLabel, kindName, buildKinds, sortKinds };
