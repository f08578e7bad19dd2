'use strict';
// DTrace's histogram, drawn in human time units (lib/render/units.js): the
// one every report shows a distribution with (latency's, gc's, loop's,
// http's). Pure: an entry of the model in, lines out.

const { trimEmptyBuckets, percentileBucket } = require('../aggregation/model');
const { formatRange, formatDuration } = require('./units');

/**
 * The length of the longest string, at least `min`: a column's width.
 * Aggregations can have any number of buckets and keys: no spreading of
 * arrays into call arguments (the stack holds only so many).
 */
function longest(strings, min = 0) {
  let n = min;
  for (const t of strings) if (t.length > n) n = t.length;
  return n;
}

function distributionHeader(labelWidth, width) {
  const title = ' Distribution ';
  const left = Math.max(1, Math.floor((width - title.length) / 2));
  const right = Math.max(1, width - title.length - left);
  return `${'value'.padStart(labelWidth)}  ${'-'.repeat(left)}${title}${'-'.repeat(right)} count`;
}

/**
 * DTrace's layout: label | bar | count, the bar `options.width` wide for the
 * whole population (so bars add up to the width), empty buckets trimmed to
 * one on each side of the data. options: { width, ascii }.
 */
function renderHistogram(entry, unit, options, indent = '  ') {
  const buckets = trimEmptyBuckets(entry).buckets;
  const labels = buckets.map((b) => formatRange(b.lo, b.hi, unit, options));
  const labelWidth = longest(labels, 5);
  const population = buckets.reduce((sum, b) => sum + (b.count > 0n ? Number(b.count) : 0), 0);
  const lines = [indent + distributionHeader(labelWidth, options.width)];
  buckets.forEach((bucket, i) => {
    const share = population > 0 && bucket.count > 0n ? Number(bucket.count) / population : 0;
    const bar = '@'.repeat(Math.round(share * options.width));
    lines.push(`${indent}${labels[i].padStart(labelWidth)} |${bar.padEnd(options.width)} ${bucket.count}`);
  });
  return lines;
}

/**
 * A percentile of a tracer's histogram as the bucket that holds it, its top
 * capped by the exact max (`options.limit`): "33–66 ms", "'1–1.3 ms". A
 * value read inside a power-of-two bucket would say more than the tracer
 * measured. '-' for none.
 */
function percentileText(entry, p, unit, options = {}) {
  const b = entry ? percentileBucket(entry, p, options.limit === undefined ? null : options.limit) : null;
  if (!b) return '-';
  if (b.lo !== null && b.hi !== null && unit) {
    // A bucket narrower than the digits shown (lhist's, DTrace's smallest): one value.
    const lo = formatDuration(b.lo, unit, options);
    if (b.hi <= b.lo || lo === formatDuration(b.hi, unit, options)) return lo;
  }
  return formatRange(b.lo, b.hi, unit, options);
}

module.exports = { renderHistogram, percentileText, longest };
