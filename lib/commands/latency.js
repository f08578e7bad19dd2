'use strict';
// nodetrace latency: how long the asynchronous operations that add-ons (and
// Node itself) queue on libuv's thread pool take, by the native function that
// queued them, with where the time went.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { UsageError, UserError } = require('../errors');
const proc = require('../proc');
const { requireRoot } = require('../privilege');
const { requireTracer, findOnPath } = require('../tracer/detect');
const { tracerArgs, readScript, scriptPath, displayCommand } = require('../tracer/programs');
const { runTracer, resendEveryMsFor } = require('../tracer/session');
const { buildModel, renderModel, hasData } = require('../report');
const { describeTracerFailure } = require('../tracer/failure');
const { Symbolizer } = require('../symbolize');

// The target's memory map, refreshed while it runs, so that addresses the
// tracer could not name after the target exited can still be named.
function watchMaps(pidOf) {
  const symbolizer = new Symbolizer();
  let latest = null;
  let timer = null;
  return {
    start(child) {
      const refresh = () => {
        const pid = pidOf(child);
        const snap = pid && symbolizer.snapshot(pid);
        if (snap && snap.maps.length) latest = snap;
      };
      refresh();
      timer = setInterval(refresh, 1000);
      timer.unref();
    },
    stop() { clearInterval(timer); },
    // Kinds are keyed by return addresses (of the calls that queued work).
    resolver() {
      if (!latest) return undefined;
      return (addresses) => {
        const { frames } = symbolizer.symbolize(latest, addresses, { allReturnAddresses: true });
        return new Map(addresses.map((a, i) => [a, frames[i].symbol]).filter(([, name]) => name));
      };
    },
  };
}

// With -c the tracer forks the command: its only child (forked by whichever
// of its threads, so look at them all).
function childPidOf(tracerPid) {
  try {
    for (const task of fs.readdirSync(`/proc/${tracerPid}/task`)) {
      const kids = fs.readFileSync(`/proc/${tracerPid}/task/${task}/children`, 'utf8').trim();
      if (kids) return Number(kids.split(/\s+/)[0]);
    }
  } catch (err) { /* tracer gone */ }
  return null;
}

// bpftrace -c forks the command and lets it exec only once the probes are
// attached: it has started when bpftrace's child runs another program.
function commandStarted(tracerPid) {
  const pid = childPidOf(tracerPid);
  if (!pid) return false;
  try {
    return fs.readlinkSync(`/proc/${pid}/exe`) !== fs.readlinkSync(`/proc/${tracerPid}/exe`);
  } catch (err) {
    return false;
  }
}

const SCRIPT = 'addon-latency';
// bpftrace's output with -c, in a private temporary directory.
const OUTPUT_FILE = 'bpftrace.out';

function builder(y) {
  return y
    .usage('$0 latency (-p PID | -c COMMAND) [options]\n\n'
      + 'Latency of the asynchronous operations native add-ons (and Node\'s own thread-pool work)\n'
      + 'kick off, one histogram per kind, named by the native function that started it, with\n'
      + 'the time split into: waiting for a pool thread, running on it, waiting for the event loop.')
    .option('pid', { alias: 'p', type: 'string', describe: 'Trace this running Node process' })
    .option('command', { alias: 'c', type: 'string', describe: 'Start this command (no shell) and trace it while it runs' })
    .option('duration', { alias: 'd', type: 'number', describe: 'Stop after this many seconds (default: Ctrl-C or target exit)' })
    .option('json', { type: 'boolean', default: false, describe: 'Print JSON (docs/json-format.md) instead of text' })
    .option('sort', { choices: ['total', 'count', 'name'], default: 'total', describe: 'Order kinds by total time, operation count or name' })
    .option('breakdown', { type: 'boolean', default: false, describe: 'Full histograms for queue wait, run and loop wait, not just a summary line' })
    .option('addons-only', { type: 'boolean', default: false, describe: 'Hide Node\'s own thread-pool work (crypto, zlib, ...)' })
    .option('backend', { choices: ['dtrace', 'bpftrace'], describe: 'Tracer to use (default: dtrace if present, else bpftrace)' })
    .option('dry-run', { alias: 'n', type: 'boolean', default: false, describe: 'Print the tracer command line and program, and exit' })
    .option('force', { type: 'boolean', default: false, describe: 'Trace the PID even if it does not look like Node' })
    .conflicts('pid', 'command')
    .check((a) => {
      if (a.pid === undefined && a.command === undefined) throw new Error('Give a process: -p PID or -c COMMAND.');
      if (a.duration !== undefined && !(Number.isInteger(a.duration) && a.duration > 0)) {
        throw new Error('-d expects a whole number of seconds greater than 0.');
      }
      if (a.command !== undefined && !a.command.trim()) throw new Error('-c expects a command, e.g. -c \'node app.js\'.');
      return true;
    })
    .example('sudo $0 latency -p 4242', 'trace until Ctrl-C or until 4242 exits, then print')
    .example('sudo $0 latency -p 4242 -d 10', 'trace for 10 seconds')
    .example("sudo $0 latency -c 'node app.js'", 'start the command and trace it while it runs')
    .example('sudo $0 latency -p 4242 --json', 'machine-readable output')
    .example('$0 latency -p 4242 -n', 'show exactly what would be loaded into the kernel')
    .example('dtrace -s d-scripts/addon-latency.d -p 4242 | $0 format', 'format the raw D script\'s output');
}

// The node binary a -c command will run, for probes that name a binary.
function commandBinary(command) {
  const argv0 = command.trim().split(/\s+/)[0];
  const file = argv0.includes('/') ? path.resolve(argv0) : findOnPath(argv0);
  if (!file) throw new UsageError(`cannot find "${argv0}" on the PATH for -c.`);
  return file;
}

function plan(args, tracer) {
  const o = { script: SCRIPT };
  if (args.pid !== undefined) {
    o.pid = proc.parsePid(args.pid);
    if (!args.force) proc.requireNodeProcess(o.pid);
    else if (!proc.isRunning(o.pid)) proc.requireNodeProcess(o.pid);
    if (tracer.name === 'bpftrace') o.macros = [`/proc/${o.pid}/exe`];
    o.describe = `PID ${o.pid} with ${tracer.name} ${tracer.version}`;
  } else {
    // Named by its resolved path: bpftrace refuses a bare name that more
    // than one PATH directory holds.
    const [, ...rest] = args.command.trim().split(/\s+/);
    o.command = [commandBinary(args.command), ...rest].join(' ');
    if (tracer.name === 'bpftrace') o.macros = [commandBinary(args.command)];
    o.describe = `"${args.command}" with ${tracer.name} ${tracer.version}`;
  }
  return o;
}

async function handler(args) {
  const tracer = requireTracer(args.backend);
  const o = plan(args, tracer);
  // bpftrace -c: the command inherits bpftrace's stdout, so it gets ours
  // (our stderr with --json, to keep the JSON clean) and bpftrace writes to a
  // private file. bpftrace buffers that file, so the probes are known to be
  // in place when the command runs: bpftrace starts it only after attaching.
  const privateOutput = Boolean(o.command) && tracer.name === 'bpftrace';
  if (args.dryRun) {
    if (privateOutput) o.outputFile = path.join('<private temporary directory>', OUTPUT_FILE);
    process.stdout.write(`# ${tracer.name} ${tracer.version} would run:\n${displayCommand(tracer.path, tracerArgs(tracer, o))}\n`
      + `# program (${scriptPath(SCRIPT, tracer.name)}):\n${readScript(SCRIPT, tracer.name)}`);
    return;
  }
  requireRoot('nodetrace latency');
  let outputDir = null;
  let stdio;
  if (privateOutput) {
    outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-latency-'));
    o.outputFile = path.join(outputDir, OUTPUT_FILE);
    stdio = ['inherit', args.json ? 2 : 'inherit', 'pipe'];
  } else if (o.command) {
    // dtrace -c: the command's output goes through dtrace's; it is not shown.
    stdio = ['inherit', 'pipe', 'pipe'];
  }
  const maps = watchMaps((child) => o.pid || childPidOf(child.pid));
  let result;
  try {
    result = await runTracer({
      onReady: (child) => maps.start(child),
      file: tracer.path,
      args: tracerArgs(tracer, o),
      durationSeconds: args.duration,
      describe: o.describe,
      resendEveryMs: resendEveryMsFor(tracer.name),
      // bpftrace names usym() keys while it prints, re-reading the symbols for
      // every key unless told to cache them (it caches by default only where
      // ASLR is off). One process is traced, so caching is right.
      env: tracer.name === 'bpftrace' ? { BPFTRACE_CACHE_USER_SYMBOLS: '1' } : undefined,
      stdio,
      outputFile: o.outputFile,
      readyWhen: privateOutput ? (child) => commandStarted(child.pid) : undefined,
    });
  } finally {
    if (outputDir) fs.rmSync(outputDir, { recursive: true, force: true });
  }
  if (!result.ready && !result.interrupted) {
    throw describeTracerFailure(tracer, result, o.pid);
  }
  maps.stop();
  const model = buildModel(result.stdout, {
    tracer: tracer.name, addonsOnly: args.addonsOnly, resolveAddresses: maps.resolver(),
  });
  if (o.pid && !proc.isRunning(o.pid)) process.stderr.write(`nodetrace: PID ${o.pid} exited; here is what was gathered.\n`);
  if (!hasData(model)) {
    process.stderr.write(`nodetrace: no thread-pool work completed in ${o.describe.replace(/ with .*/, '')} while tracing.\n`);
    if (args.json) process.stdout.write(renderModel(model, { json: true }));
    return;
  }
  process.stdout.write(renderModel(model, { json: args.json, sort: args.sort, breakdownHistograms: args.breakdown }));
}

module.exports = {
  command: 'latency',
  describe: 'Latency histograms of add-on / thread-pool async operations, by the native function that started them',
  builder,
  handler,
  plan,
};
