'use strict';
// Prometheus's text format read back strictly, for the tests: every line a
// HELP or TYPE comment or one sample `name{label="value",...} number`.
const assert = require('assert');

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})? (\S+)$/;

/** text -> [{ name, labels: {name: value}, value: number }] (label values unescaped). */
function readExposition(text) {
  assert.ok(text.endsWith('\n'), 'ends with a newline');
  const samples = [];
  for (const line of text.slice(0, -1).split('\n')) {
    if (/^# (HELP|TYPE) /.test(line)) continue;
    const m = SAMPLE.exec(line);
    assert.ok(m, `not a sample line: ${JSON.stringify(line)}`);
    const labels = {};
    for (const [, k, v] of (m[2] || '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[k] = v.replace(/\\(.)/g, (all, c) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: m[1], labels, value: m[3] === '+Inf' ? Infinity : Number(m[3]) });
  }
  return samples;
}

/** The samples of one metric and kind (and other labels given). */
function samplesOf(samples, name, kind, extra = {}) {
  return samples.filter((s) => s.name === name && s.labels.kind === kind
    && Object.entries(extra).every(([k, v]) => s.labels[k] === v));
}

/** A histogram's buckets are cumulative in increasing le, its +Inf its _count; -> its _count. */
function checkHistogram(samples, family, kind) {
  const buckets = samplesOf(samples, `${family}_bucket`, kind);
  assert.ok(buckets.length > 2, `${family} ${kind}: ${buckets.length} buckets`);
  const les = buckets.map((b) => (b.labels.le === '+Inf' ? Infinity : Number(b.labels.le)));
  for (let i = 1; i < buckets.length; i++) {
    assert.ok(les[i] > les[i - 1], `${family} ${kind}: le ${les[i - 1]} then ${les[i]}`);
    assert.ok(buckets[i].value >= buckets[i - 1].value, `${family} ${kind}: not cumulative at le ${les[i]}`);
  }
  assert.strictEqual(les[les.length - 1], Infinity);
  const count = samplesOf(samples, `${family}_count`, kind);
  assert.strictEqual(count.length, 1, `${family} ${kind}: one _count`);
  assert.strictEqual(buckets[buckets.length - 1].value, count[0].value, `${family} ${kind}: +Inf is _count`);
  assert.strictEqual(samplesOf(samples, `${family}_sum`, kind).length, 1, `${family} ${kind}: one _sum`);
  return count[0].value;
}

module.exports = { readExposition, samplesOf, checkHistogram };
