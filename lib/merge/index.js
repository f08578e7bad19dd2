'use strict';
// `nodetrace merge`: reports of one command from many hosts, pods or runs
// into one report of that command's JSON shape (docs/merge.md). Which
// commands merge, and how each adds up, is in lib/merge/<command>.js; here
// the inputs are checked to be one command's, of versions that merge, and
// each source is named. Pure: texts in, the merged report out.
const crypto = require('crypto');
const { MergeError } = require('./histogram');
const { recognize } = require('./inputs');
const folded = require('./folded');

const MERGERS = Object.freeze({
  latency: require('./latency'),
  gc: require('./gc'),
  loop: require('./loop'),
  async: require('./async'),
  http: require('./http'),
});

// Reports that are no sum of their parts, with what to merge instead.
const NOT_MERGED = Object.freeze({
  profile: 'profile --json lists each process\'s top functions only, which do not add up: merge its folded stacks (profile --folded FILE)',
  ps: 'ps lists processes, it measures nothing to add',
  doctor: 'doctor checks one host, it measures nothing to add',
});

/**
 * @param {Array<{ source: string, text: string }>} inputs source: the file as given ("-": standard input)
 * @param {object} o { bySource: keep each source's counts beside the sums }
 * @returns {{ format: 'json', report: object } | { format: 'folded', text: string }}
 * @throws MergeError, its message one line naming the source where it is one's
 */
function mergeTexts(inputs, { bySource = false } = {}) {
  if (inputs.length < 2) throw new MergeError('merge needs two reports or more');
  const names = new Set();
  const digests = new Map();
  for (const i of inputs) {
    if (names.has(i.source)) throw new MergeError(`${i.source} is given twice: its counts would be added twice`);
    names.add(i.source);
    // The same report under two names (a copy, or standard input): as twice.
    const digest = crypto.createHash('sha256').update(i.text).digest('hex');
    if (digests.has(digest)) throw new MergeError(`${i.source} is the same report as ${digests.get(digest)}: its counts would be added twice`);
    digests.set(digest, i.source);
  }
  const recognized = inputs.map((i) => ({ source: i.source, ...within(i.source, () => recognize(i.text)) }));
  const formats = new Set(recognized.map((r) => r.format));
  if (formats.size > 1) throw new MergeError('some inputs are JSON reports and some folded stacks: merge one kind');
  if (formats.has('folded')) return { format: 'folded', text: folded.merge(recognized, { bySource }) };

  const first = recognized[0];
  const command = first.report.command;
  for (const r of recognized) {
    if (r.report.command !== command) throw new MergeError(`${r.source} is a report of ${r.report.command}, ${first.source} of ${command}: merge reports of one command`);
  }
  if (NOT_MERGED[command]) throw new MergeError(NOT_MERGED[command]);
  const merger = MERGERS[command];
  if (!merger) throw new MergeError(`${first.source}: reports of "${command}" do not merge (merge takes ${Object.keys(MERGERS).join(', ')} and profile's folded stacks)`);
  for (const r of recognized) {
    if (!merger.VERSIONS.includes(r.report.version)) {
      throw new MergeError(`${r.source} is a ${command} report of version ${r.report.version}; this nodetrace merges version ${merger.VERSIONS.join(' and ')}: merge it with the nodetrace that made it`);
    }
  }
  const read = recognized.map((r) => ({ source: r.source,
    report: within(r.source, () => merger.read(r.report, { version: r.report.version })) }));
  const merged = merger.merge(read, { bySource });
  const { sources, ...rest } = merged;
  return {
    format: 'json',
    report: { version: merger.OUTPUT_VERSION || recognized[0].report.version, command, merged: sources.length, ...rest,
      sources },
  };
}

// Errors about one input, said with its name.
function within(source, fn) {
  try {
    return fn();
  } catch (err) {
    if (err instanceof MergeError) throw new MergeError(`${source}: ${err.message}`);
    throw err;
  }
}

module.exports = { mergeTexts, MERGERS, MergeError };
