'use strict';
// The command line: yargs wiring only. Each command lives in
// lib/commands/<name>.js and exports { command, describe, builder, handler }.
const yargs = require('yargs/yargs');
const { EXIT, UserError, formatUserError } = require('./errors');
const pkg = require('../package.json');

const COMMANDS = ['latency', 'snoop', 'ebadf', 'format', 'doctor'];

function loadCommands() {
  const loaded = [];
  for (const name of COMMANDS) {
    try {
      loaded.push(require('./commands/' + name));
    } catch (err) {
      // Only a command that is not there at all is skipped; its own broken
      // requires must surface.
      if (err.code !== 'MODULE_NOT_FOUND' || !String(err.message).split('\n')[0].includes('commands/' + name)) throw err;
    }
  }
  return loaded;
}

function reportFailure(err) {
  if (err instanceof UserError) {
    process.stderr.write(formatUserError(err) + '\n');
    process.exitCode = err.exitCode;
  } else {
    process.stderr.write('nodetrace: internal error (please report it):\n' + (err && err.stack || err) + '\n');
    process.exitCode = EXIT.FAILURE;
  }
}

function main(argv) {
  // Handled before yargs so that an ordinary run does not probe for tracers twice.
  if (argv[0] === '--version' || argv[0] === '-V') {
    process.stdout.write(versionText() + '\n');
    return Promise.resolve();
  }
  const cli = yargs(argv)
    .scriptName('nodetrace')
    .usage('$0 <command> [options]\n\nProduction tracing for live Node.js processes, with DTrace or bpftrace.')
    .strict()
    .demandCommand(1, 'Name a command: latency, snoop, ebadf, format or doctor.')
    .recommendCommands()
    .version(false)
    .option('version', { alias: 'V', type: 'boolean', describe: 'Show nodetrace\'s version and the tracers this host has' })
    .help('help')
    .alias('help', 'h')
    .wrap(Math.min(100, process.stdout.columns || 100))
    .epilogue('Run `nodetrace <command> --help` for each command\'s options and examples.\nDocs: README.md and docs/ in the nodetrace package.')
    // Only parsing and .check() failures reach here (handlers' errors are
    // caught below), so everything is a usage error.
    .fail((msg, err) => {
      if (err instanceof UserError) {
        reportFailure(err);
        process.exit(process.exitCode);
      }
      process.stderr.write(`nodetrace: ${msg || (err && err.message)}\nRun with --help for usage.\n`);
      process.exit(EXIT.USAGE);
    });
  for (const command of loadCommands()) {
    cli.command({
      ...command,
      handler: (args) => Promise.resolve()
        .then(() => command.handler(args))
        .catch(reportFailure),
    });
  }
  return cli.parseAsync().catch(reportFailure);
}

function versionText() {
  const { detectDtrace, detectBpftrace } = require('./tracer/detect');
  const lines = [`nodetrace ${pkg.version}`];
  for (const t of [detectDtrace(), detectBpftrace()]) {
    lines.push(t.available ? `${t.name} ${t.version} (${t.path})` : `${t.name}: ${t.reason}`);
  }
  return lines.join('\n');
}

module.exports = { main };
