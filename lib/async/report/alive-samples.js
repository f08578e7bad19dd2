'use strict';
// async's created-minus-destroyed samples, printed each second while
// tracing (`ALIVE MS` then `@alive[KIND]: N` lines), and the verdict drawn
// from them: is a kind growing (a leak suspect) or was it a burst or a
// plateau. Pure.

const ALIVE_MARK = /^ALIVE (\d+)$/;
const ALIVE_LINE = /^@alive\[(\d+)\]: (-?\d+)$/;
// Fewer samples than this (seconds) and no kind is called growing: too
// short a trace to tell a leak from a burst.
const MIN_TREND_SAMPLES = 4;
// Samples come each second; one less than this after the one before is the
// same second's, printed twice (async.d: two CPUs at once).
const MIN_SAMPLE_GAP_MS = 500;

/**
 * The created-minus-destroyed samples printed each second while tracing:
 * [{ ms, alive: Map(provider number -> count) }].
 */
function parseAliveSamples(during = []) {
  const samples = [];
  let skipping = false;
  for (const raw of during) {
    const line = String(raw).trim();
    const mark = ALIVE_MARK.exec(line);
    if (mark) {
      // async.d: two CPUs may print the same second's sample; one is kept.
      const last = samples[samples.length - 1];
      skipping = Boolean(last) && Number(mark[1]) - last.ms < MIN_SAMPLE_GAP_MS;
      if (!skipping) samples.push({ ms: Number(mark[1]), alive: new Map() });
      continue;
    }
    const m = ALIVE_LINE.exec(line);
    if (m && samples.length && !skipping) samples[samples.length - 1].alive.set(m[1], Number(m[2]));
  }
  return samples;
}

/**
 * Growing: created minus destroyed rose through the trace, not a burst or a
 * plateau. The samples are cut in four quarters: the mean of each is above
 * the one before, and the last sample is above zero.
 */
function isGrowing(series) {
  if (series.length < MIN_TREND_SAMPLES) return false;
  const means = [0, 1, 2, 3].map((q) => {
    const part = series.slice(Math.floor((q * series.length) / 4), Math.floor(((q + 1) * series.length) / 4));
    return part.reduce((s, v) => s + v, 0) / part.length;
  });
  return means.every((m, i) => i === 0 || m > means[i - 1]) && series[series.length - 1] > 0;
}

module.exports = { parseAliveSamples, isGrowing, MIN_TREND_SAMPLES };
