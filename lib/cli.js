'use strict';
// The command line: yargs wiring only. Each command lives in
// lib/commands/<name>.js and exports { command, describe, builder, handler };
// lib/commands/list.js holds every command's line and description, so that
// only the command being run is loaded.
const yargs = require('yargs/yargs');
const { EXIT, UserError, formatUserError } = require('./errors');
const { safeText } = require('./terminal-safe');
const { endOnClosedOutput } = require('./tracer/signals');
const { LIST } = require('./commands/list');
const pkg = require('../package.json');

// Every command, in the order --help lists them.
const COMMANDS = Object.freeze(LIST.map((c) => c.name));

function reportFailure(err) {
  if (err instanceof UserError) {
    process.stderr.write(formatUserError(err) + '\n');
    process.exitCode = err.exitCode;
  } else {
    process.stderr.write('nodetrace: internal error (please report it):\n' + safeText(String(err && err.stack || err)) + '\n');
    process.exitCode = EXIT.FAILURE;
  }
}

// Old spellings, kept working for one release: each flag now means one thing
// in every command (-n: dry run, as in nhttpsnoop; -o: where output goes, as
// in dtrace and bpftrace).
const DEPRECATED = Object.freeze([
  { command: 'ebadf', flag: '-n', now: '--name', why: '-n now means --dry-run in every command' },
  { command: 'snoop', flag: '-o', now: '--mode', why: '-o means an output file or directory in nodetrace, as in dtrace' },
  { command: 'http', flag: '-l', now: '--latency', boolean: true, why: '-l means --level, as in snoop and bunyan' },
]);

// Rewrites deprecated spellings (`-n NAME` in ebadf) and says so on stderr.
function rewriteDeprecated(argv, err = process.stderr) {
  const out = [...argv];
  for (const d of DEPRECATED) {
    if (out[0] !== d.command) continue;
    for (let i = 1; i < out.length - (d.boolean ? 0 : 1); i++) {
      if (out[i] === '--') break;
      if (out[i] !== d.flag || (!d.boolean && out[i + 1].startsWith('-'))) continue;
      const value = d.boolean ? '' : ` ${out[i + 1]}`;
      err.write(`nodetrace: ${d.flag}${value} is now spelt ${d.now}${value} (${d.why}); the old spelling goes in the next release.\n`);
      out[i] = d.now;
    }
  }
  return out;
}

// yargs 17 drops a lone "-" among a command's variadic positionals (it
// parses them again as `--files -`, and an array option takes no "-"):
// merge's "-" (standard input) reaches it as /dev/stdin, which it reads so.
function stdinOperands(argv) {
  if (argv[0] !== 'merge') return argv;
  const end = argv.indexOf('--');
  return argv.map((a, i) => (a === '-' && (end < 0 || i < end) ? '/dev/stdin' : a));
}

function main(argv) {
  // `nodetrace ... | head`: the reader leaving ends the trace quietly.
  endOnClosedOutput(process.stdout);
  argv = stdinOperands(rewriteDeprecated(argv));
  // Handled before yargs so that an ordinary run does not probe for tracers twice.
  if (argv[0] === '--version' || argv[0] === '-V') {
    process.stdout.write(versionText() + '\n');
    return Promise.resolve();
  }
  const cli = yargs(argv)
    .scriptName('nodetrace')
    .usage('$0 <command> [options]\n\nProduction tracing for live Node.js processes, with DTrace or bpftrace.')
    .strict()
    .demandCommand(1, `Name a command: ${COMMANDS.slice(0, -1).join(', ')} or ${COMMANDS[COMMANDS.length - 1]}.`)
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
      process.stderr.write(safeText(`nodetrace: ${msg || (err && err.message)}`) + '\nRun with --help for usage.\n');
      process.exit(EXIT.USAGE);
    });
  for (const { name, command, describe } of LIST) {
    // yargs runs a builder only for the command it matched (its --help
    // included), so the others' modules are never read.
    const load = () => require('./commands/' + name);
    cli.command({
      command,
      describe,
      builder: (y) => load().builder(y),
      handler: (args) => Promise.resolve()
        .then(() => load().handler(args))
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

module.exports = { main, rewriteDeprecated, COMMANDS };
