'use strict';
// nodetrace format: render raw DTrace / bpftrace aggregation output read on
// stdin the way `nodetrace latency` does, e.g.
//   dtrace -s d-scripts/addon-latency.d -p 4242 | nodetrace format
const { listed } = require('./list');
const { UsageError } = require('../errors');
const { buildModel } = require('../latency/report/build-model');
const { summarize, hasData } = require('../latency/report/summary');
const { renderText } = require('../latency/report/text');
const { renderJson } = require('../latency/report/json');
const { splitAtEndMarker } = require('../tracer/output-formats');
const { jsonOption } = require('./common-options');

function readStdin() {
  return new Promise((resolve, reject) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (c) => { text += c; });
    process.stdin.on('end', () => resolve(text));
    process.stdin.on('error', reject);
  });
}

function builder(y) {
  return y
    .usage('$0 format [options] < tracer-output\n\n'
      + 'Render raw DTrace (quantize, lquantize, llquantize, plain aggregations) or bpftrace\n'
      + '(hist, lhist, count, sum, avg, min, max, stats) output as nodetrace does.')
    .option('from', { choices: ['dtrace', 'bpftrace'], describe: 'Which tracer printed it (default: recognised from the text)' })
    .option('unit', { choices: ['ns', 'us', 'ms', 's'], describe: 'Unit of unnamed aggregations (default: ns for DTrace, as timestamp is)' })
    .option('json', jsonOption())
    .option('sort', { choices: ['total', 'count', 'name'], default: 'total', describe: 'Order entries by total time, count or name' })
    .option('breakdown', { type: 'boolean', default: false, describe: 'Full histograms for latency breakdown parts' })
    .option('addons-only', { type: 'boolean', default: false, describe: 'Hide Node\'s own work (node::..., uv_...)' })
    .example('dtrace -s d-scripts/addon-latency.d -p 4242 | $0 format', 'the D script\'s output, as latency shows it')
    // The bpftrace program takes 20 arguments found in the process: -n writes them out.
    .example('$0 latency -p 4242 -n > trace.sh; sudo sh trace.sh > out.txt', 'the bpftrace program run by hand, as latency would run it (Ctrl-C ends it)')
    .example('$0 format --json < out.txt', 'its output as latency --json prints it');
}

async function handler(args) {
  if (process.stdin.isTTY) {
    throw new UsageError('format reads tracer output on standard input.', 'e.g. dtrace -s d-scripts/addon-latency.d -p PID | nodetrace format');
  }
  const text = await readStdin();
  const report = summarize(buildModel(splitAtEndMarker(text.split('\n')), { tracer: args.from, addonsOnly: args.addonsOnly }),
    { sort: args.sort, unit: args.unit });
  if (!hasData(report) && !args.json) {
    process.stderr.write('nodetrace: found no aggregation output on standard input.\n');
    process.exitCode = 1;
    return;
  }
  process.stdout.write(args.json ? renderJson(report) : renderText(report, { breakdownHistograms: args.breakdown }));
}

module.exports = { ...listed('format'), builder, handler };
