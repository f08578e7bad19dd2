'use strict';
// Prometheus's text exposition format (version 0.0.4): metric families with
// their HELP and TYPE lines, label sets, histograms with cumulative `le`
// buckets. Pure: values in, text out.
//
// A label value is often the traced process's text (a kind named after one
// of its functions, a container's or pod's name): the characters a terminal
// or a reader could obey (lib/terminal-safe.js's set: C0, C1, bidirectional
// controls) are made visible first, then the format's own escaping applies
// (backslash, double quote, newline), so that no value can end its label,
// its line, or pass for another series.
const { safeText } = require('../terminal-safe');

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function escapeLabelValue(value) {
  return safeText(String(value), { oneLine: true })
    .replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** `{a="1",b="x"}` from [[name, value], ...]; '' for none. Names are nodetrace's own. */
function labelSet(labels) {
  if (!labels.length) return '';
  const parts = labels.map(([name, value]) => {
    if (!LABEL_NAME.test(name)) throw new Error(`not a label name: ${name}`);
    return `${name}="${escapeLabelValue(value)}"`;
  });
  return `{${parts.join(',')}}`;
}

// A sample's value: integers exactly (a BigInt count stays exact), others
// as JavaScript writes them (Go's ParseFloat reads either).
function sampleValue(v) {
  if (typeof v === 'bigint') return v.toString();
  if (v === Infinity) return '+Inf';
  return Number.isFinite(v) ? String(v) : 'NaN';
}

function familyHead(name, type, help) {
  if (!NAME.test(name)) throw new Error(`not a metric name: ${name}`);
  return `# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}\n# TYPE ${name} ${type}\n`;
}

function sample(name, labels, value) {
  return `${name}${labelSet(labels)} ${sampleValue(value)}\n`;
}

/**
 * One histogram's series: `_bucket` per bound (cumulative, `le` in
 * increasing order, then +Inf, which equals `_count`), `_sum`, `_count`.
 * @param {string} name the family's name
 * @param {Array} labels [[name, value], ...] of this histogram
 * @param {Array<[number, bigint]>} cumulative [[upper bound, count of values ≤ it], ...], increasing
 * @param {number} sum the values' sum
 * @param {bigint} count how many values
 */
function histogramSeries(name, labels, cumulative, sum, count) {
  let out = '';
  for (const [le, n] of cumulative) out += sample(`${name}_bucket`, [...labels, ['le', sampleValue(le)]], n);
  out += sample(`${name}_bucket`, [...labels, ['le', '+Inf']], count);
  out += sample(`${name}_sum`, labels, sum);
  out += sample(`${name}_count`, labels, count);
  return out;
}

module.exports = { CONTENT_TYPE, escapeLabelValue, labelSet, familyHead, sample, histogramSeries };
