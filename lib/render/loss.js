'use strict';
// What became of the events (requests, records) each traced process's
// probes fired, said per process and by cause: one process's flood is its
// own loss, and a loss is never blamed on the wrong cause. Pure.
//
// Per process (pid; null: a process the tracer's output no longer names):
//   fired      what its probes fired (the program's own count)
//   full       left out in the kernel: the batch was full (the tracer behind)
//   over       left out in the kernel: over its share of a crowded batch
//   arrived    handed over whole
//   malformed  handed over but refused here (numbers no request can have),
//              with `why`, the first reason
// and what is left, fired - full - over - arrived - malformed, was lost between:
// the batch map full, or not read before the tracer ended.

const { plural, grouped, noun } = require('./text');

// At most this many processes are named; the rest are summed.
const NAMED = 10;

function addTo(counts, pid, field, n) {
  let c = counts.get(pid);
  if (!c) {
    c = { fired: 0, full: 0, over: 0, arrived: 0, malformed: 0, why: null };
    counts.set(pid, c);
  }
  c[field] += n;
  return c;
}

/**
 * Adds one tracer's per-process counts into `counts`: `maps` is
 * { fired, over, full, arrived, malformed }, each a Map pid -> n (any may be
 * left out); `why`: pid -> the reason its first malformed one was refused.
 */
function addMaps(counts, maps, why = new Map()) {
  for (const [field, byPid] of Object.entries(maps)) {
    for (const [pid, n] of byPid) {
      const c = addTo(counts, pid, field, n);
      if (field === 'malformed' && !c.why) c.why = why.get(pid) || null;
    }
  }
  return counts;
}

/** The losses of one process: { over, malformed, lost, fired, why }, or null when none. */
function lossOf(c) {
  const lost = Math.max(0, c.fired - c.full - c.over - c.arrived - c.malformed);
  return c.full || c.over || c.malformed || lost
    ? { full: c.full, over: c.over, malformed: c.malformed, lost, fired: c.fired, why: c.why } : null;
}

/**
 * Sentences for the user, one per process with a loss (most lost first).
 * @param {Map} counts pid -> { fired, over, arrived, malformed, why }
 * @param {object} o
 *   describe(pid) -> 'PID 4242 (mallory)'
 *   noun, nouns   'request', 'requests'
 *   share         why a process is held to its share, e.g. 'a process gets 256 a batch once 2,048 are taken'
 *   lostWhy       what the rest of a loss means, e.g. 'the batch map was full, or ...'
 */
function lossLines(counts, o) {
  const rows = [];
  for (const [pid, c] of counts) {
    const l = lossOf(c);
    if (l) rows.push({ pid, ...l, total: l.full + l.over + l.malformed + l.lost });
  }
  rows.sort((a, b) => b.total - a.total);
  const lines = rows.slice(0, NAMED).map((r) => {
    // "12 of 1,000 requests", or "12 requests" when the count is unknown.
    const some = (n) => (r.fired ? `${grouped(n)} of ${grouped(r.fired)} ${noun(r.fired, o.noun, o.nouns)}` : plural(n, o.noun, o.nouns));
    const parts = [];
    if (r.full) parts.push(`${some(r.full)} left out: the batch was full (the tracer could not keep up)`);
    if (r.over) parts.push(`${some(r.over)} left out: it was over its share of a crowded batch (${o.share})`);
    if (r.malformed) parts.push(`${plural(r.malformed, o.noun, o.nouns)} refused as malformed (${r.why || 'not as the program writes them'})`);
    if (r.lost) parts.push(`${some(r.lost)} seen by the probes but not reported (${o.lostWhy})`);
    const who = r.pid === null ? `processes the tracer's output did not name` : o.describe(r.pid);
    return `${who}: ${parts.join('; ')}.`;
  });
  const rest = rows.slice(NAMED);
  if (rest.length) {
    lines.push(`and ${plural(rest.length, 'more process', 'more processes')} lost ${plural(rest.reduce((n, r) => n + r.total, 0), o.noun, o.nouns)}.`);
  }
  return lines;
}

module.exports = { lossLines, lossOf, addTo, addMaps, NAMED };
