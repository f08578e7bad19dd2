'use strict';
// Reading the fields of a report another nodetrace wrote (another host, a
// pod's file): each checked for the type the command's JSON gives it
// (docs/json-format.md) and bounded in length, so that a damaged or forged
// report is refused in one line naming the field, never half added. Pure.
const { MergeError, toBigInt } = require('./histogram');

// Lists in a report: kinds, groups, stalls, stacks, frames. The largest a
// command writes: profile's 65,536 distinct stacks (its maps' size, mapKeysEnv).
const MAX_LIST = 65536;
// Histogram buckets: log-linear ones reach 36 x 64 (lib/aggregation/log-linear.js).
const MAX_BUCKETS = 4096;
// A name, route or frame: latency's names are C++ signatures of a few KB.
const MAX_TEXT = 64 * 1024;

function object(v, what) {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new MergeError(`${what} is not an object`);
  return v;
}

function objectOrNull(v, what) {
  return v === null || v === undefined ? null : object(v, what);
}

function list(v, what, max = MAX_LIST) {
  if (!Array.isArray(v)) throw new MergeError(`${what} is not a list`);
  if (v.length > max) throw new MergeError(`${what} holds ${v.length} entries, more than ${max}`);
  return v;
}

function text(v, what) {
  if (typeof v !== 'string') throw new MergeError(`${what} is not a string`);
  if (v.length > MAX_TEXT) throw new MergeError(`${what} is longer than ${MAX_TEXT} characters`);
  return v;
}

function textOrNull(v, what) {
  return v === null || v === undefined ? null : text(v, what);
}

function integer(v, what) {
  return toBigInt(v, what);
}

function integerOrNull(v, what) {
  return v === null || v === undefined ? null : toBigInt(v, what);
}

function number(v, what) {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new MergeError(`${what} is not a number`);
  return v;
}

function numberOrNull(v, what) {
  return v === null || v === undefined ? null : number(v, what);
}

function boolean(v, what) {
  if (typeof v !== 'boolean') throw new MergeError(`${what} is not true or false`);
  return v;
}

/** Where every report names its process (lib/proc/container.js identityJson), or null. */
function processOf(report, what = 'process') {
  const p = objectOrNull(report.process, what);
  if (!p) return null;
  const container = objectOrNull(p.container, `${what}.container`);
  return {
    pid: numberOrNull(p.pid, `${what}.pid`),
    pid_inside: numberOrNull(p.pid_inside, `${what}.pid_inside`),
    container: container ? {
      id: textOrNull(container.id, `${what}.container.id`),
      runtime: textOrNull(container.runtime, `${what}.container.runtime`),
      name: textOrNull(container.name, `${what}.container.name`),
    } : null,
    ...(p.pod !== undefined ? { pod: podOf(p.pod, `${what}.pod`) } : {}),
  };
}

function podOf(v, what) {
  const pod = objectOrNull(v, what);
  return pod ? { uid: textOrNull(pod.uid, `${what}.uid`), name: textOrNull(pod.name, `${what}.name`), namespace: textOrNull(pod.namespace, `${what}.namespace`) } : null;
}

/** The value all of `values` share, or null when they differ. */
/**
 * Each report's rows (kinds, groups) gathered with the like rows of the
 * others, the rows of one id together, in the order first seen ->
 * [[{ source, [as]: row }, ...], ...]. `rowsOf(report)`: its rows;
 * `idOf(row)`: what makes two rows one.
 */
function gatherRows(inputs, rowsOf, idOf, as) {
  const byId = new Map();
  for (const { source, report } of inputs) {
    for (const row of rowsOf(report)) {
      const id = idOf(row);
      if (!byId.has(id)) byId.set(id, []);
      byId.get(id).push({ source, [as]: row });
    }
  }
  return [...byId.values()];
}

function common(values) {
  return values.every((v) => v === values[0]) ? values[0] : null;
}

module.exports = {
  object, objectOrNull, list, text, textOrNull, integer, integerOrNull, number, numberOrNull, boolean, processOf,
  common, gatherRows, MAX_BUCKETS,
};
