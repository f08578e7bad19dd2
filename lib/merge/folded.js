'use strict';
// Folded stacks (`profile --folded`) merged: the samples of each distinct
// stack added; with --by source, each stack under a root frame naming its
// source, so a flame graph shows the sources side by side. The text
// flamegraph.pl, inferno and speedscope read, sorted as profile writes it.
// Pure.
const { foldedName } = require('../profile/folded');

/** [{ source, stacks: [[line, count]] }] -> the folded text. */
function merge(inputs, { bySource = false } = {}) {
  const counts = new Map();
  for (const { source, stacks } of inputs) {
    const root = bySource ? `${foldedName(source)};` : '';
    for (const [line, n] of stacks) {
      const key = root + line;
      counts.set(key, (counts.get(key) || 0) + n);
    }
  }
  return [...counts.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([line, n]) => `${line} ${n}\n`).join('');
}

module.exports = { merge };
