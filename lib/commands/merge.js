'use strict';
// nodetrace merge: the reports of one command from many hosts, pods or
// runs, one report (lib/merge/, docs/merge.md).
const { listed } = require('./list');
const { UserError, UsageError, EXIT } = require('../errors');
const { mergeTexts, MergeError } = require('../merge');
const { readInput, isStdin, LIMITS } = require('../merge/inputs');
const { safeJson, safeText } = require('../terminal-safe');

function builder(y) {
  return y
    .usage('$0 merge FILE... [options]\n\n'
      + 'One report from the --json reports of one command (latency, gc, loop, async, http --latency)\n'
      + 'made on many hosts, pods or runs: histograms added bucket by bucket, counts added,\n'
      + 'percentiles read again from the sums; or profile\'s folded stacks (--folded), added.\n'
      + 'Prints the command\'s JSON, with "sources" naming each report and its process.')
    .positional('files', { type: 'string', array: true, describe: 'The reports ("-": standard input)' })
    .option('by', { choices: ['source'], describe: 'Also keep each source\'s counts beside the sums (folded stacks: under a root frame per source)' })
    .example('$0 merge node-a/latency.json node-b/latency.json', 'one latency report of two nodes\' traces')
    .example('$0 merge --by source web-*.json > all.json', 'the sums, and each pod\'s count of every kind')
    .example('$0 merge a.folded b.folded > all.folded', 'two profiles\' folded stacks added, for one flame graph');
}

async function handler(args) {
  const files = (args.files || []).map((f) => (isStdin(String(f)) ? '-' : String(f)));
  if (files.length < 2) throw new UsageError('merge needs two reports or more.', 'e.g. nodetrace merge node-a.json node-b.json');
  if (files.length > LIMITS.MAX_INPUTS) throw new UsageError(`merge takes at most ${LIMITS.MAX_INPUTS} reports at once.`, 'Merge them in batches, then merge the results.');
  if (files.filter((f) => f === '-').length > 1) throw new UsageError('standard input ("-") can be given once.');
  const inputs = [];
  let budget = LIMITS.MAX_TOTAL_BYTES;
  try {
    for (const file of files) {
      let text;
      try {
        text = await readInput(file, { budget });
      } catch (err) {
        if (err instanceof MergeError) throw new MergeError(`${file === '-' ? 'standard input' : file}: ${err.message}`);
        throw err;
      }
      budget -= Buffer.byteLength(text);
      inputs.push({ source: file, text });
    }
    const merged = mergeTexts(inputs, { bySource: args.by === 'source' });
    process.stdout.write(merged.format === 'folded' ? safeText(merged.text) : safeJson(merged.report) + '\n');
  } catch (err) {
    if (err instanceof MergeError) throw new UserError(`merge: ${err.message}.`, { exitCode: EXIT.FAILURE });
    throw err;
  }
}

module.exports = { ...listed('merge'), builder, handler };
