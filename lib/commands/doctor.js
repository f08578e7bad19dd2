'use strict';
// nodetrace doctor: which tracer, which version, and what this host lacks.
const { checks } = require('../host-checks');

function handler(args) {
  const results = checks();
  if (args.json) {
    process.stdout.write(JSON.stringify(results, null, 2) + '\n');
  } else {
    for (const c of results) {
      const mark = c.ok ? 'ok  ' : c.optional ? 'warn' : 'FAIL';
      process.stdout.write(`${mark}  ${c.name.padEnd(9)} ${c.detail}\n`);
    }
  }
  const essential = results.filter((c) => !c.optional && ['root', 'tracer', 'tracefs', 'uprobes'].includes(c.name));
  if (essential.some((c) => !c.ok)) process.exitCode = 1;
}

module.exports = {
  command: 'doctor',
  describe: 'Check this host: tracer and version, root, tracefs, uprobes, BTF, gcore, USDT provider',
  builder: (y) => y.option('json', { type: 'boolean', default: false, describe: 'Print JSON' })
    .example('sudo $0 doctor', ''),
  handler,
};
