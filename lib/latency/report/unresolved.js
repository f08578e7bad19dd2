'use strict';
// Keys the tracer printed as bare addresses, in the text report: the first
// few shown, the rest lumped into one "(N unresolved addresses)", or a
// process without symbols would print one histogram (or row) per call site.
// Pure: kinds or table rows in, the ones to show out.

const { displayKey, isUnresolvedAddress, mergeBuckets } = require('../../aggregation/model');
const { PHASES } = require('./kinds');

function isUnresolvedKey(key) {
  return key.length > 0 && key.every((field) => isUnresolvedAddress(displayKey(field).func));
}

function unresolvedLabel(n) {
  return `(${n} unresolved address${n === 1 ? '' : 'es'})`;
}

// Adds one lumped kind's phase into the lump's; each kind's own max no longer
// bounds the sum, so the lump's percentiles are not capped.
function mergePhase(a, b) {
  if (!b) return a;
  if (!a) return { unit: b.unit, entry: b.entry, limit: null };
  return { unit: a.unit, entry: { ...a.entry, buckets: mergeBuckets(a.entry.buckets, b.entry.buckets) }, limit: null };
}

function lumpKinds(kinds) {
  const lump = {
    label: unresolvedLabel(kinds.length),
    aggregation: kinds[0].aggregation,
    key: [],
    unit: kinds[0].unit,
    entry: { key: [], kind: kinds[0].entry.kind, buckets: [] },
    count: 0n,
    timeNs: 0,
    max: null,
    limit: null,
    breakdown: null,
  };
  for (const kind of kinds) {
    lump.entry.buckets = mergeBuckets(lump.entry.buckets, kind.entry.buckets);
    lump.count += kind.count;
    lump.timeNs += kind.timeNs;
    if (kind.max && (!lump.max || kind.max.value > lump.max.value)) {
      lump.max = kind.max;
      lump.limit = kind.limit;
    }
    if (kind.entry.note) lump.entry.note = kind.entry.note;
    if (kind.breakdown) {
      lump.breakdown = lump.breakdown || {};
      for (const phase of PHASES) lump.breakdown[phase] = mergePhase(lump.breakdown[phase], kind.breakdown[phase]);
    }
  }
  if (lump.breakdown) for (const phase of PHASES) if (!lump.breakdown[phase]) delete lump.breakdown[phase];
  // The largest max is the lump's max only if every lumped kind had one.
  if (kinds.some((kind) => !kind.max)) {
    lump.max = null;
    lump.limit = null;
  }
  return lump;
}

/**
 * Keep the first `max` kinds keyed by a bare address and lump the rest into
 * one "(N unresolved addresses)" kind, at the end.
 */
function limitUnresolved(kinds, max) {
  const shown = [];
  const lumped = [];
  for (const kind of kinds) {
    if (isUnresolvedKey(kind.key) && shown.filter((k) => isUnresolvedKey(k.key)).length >= max) lumped.push(kind);
    else shown.push(kind);
  }
  if (lumped.length > 0) shown.push(lumpKinds(lumped));
  return shown;
}

/** Scalars of unresolved addresses beyond the first `max` are added into one row. */
function limitUnresolvedRows(entries, max) {
  const shown = [];
  const lumped = [];
  for (const entry of entries) {
    const unresolvedShown = shown.filter((e) => isUnresolvedKey(e.key)).length;
    if (entry.kind === 'scalar' && isUnresolvedKey(entry.key) && unresolvedShown >= max) lumped.push(entry);
    else shown.push(entry);
  }
  if (lumped.length > 0) {
    const value = lumped.reduce((sum, e) => sum + e.value, 0n);
    shown.push({ key: [], label: unresolvedLabel(lumped.length), kind: 'scalar', value });
  }
  return shown;
}

module.exports = { limitUnresolved, limitUnresolvedRows };
