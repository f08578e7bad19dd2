'use strict';
// nodetrace latency: how long the asynchronous operations that add-ons (and
// Node itself) queue on libuv's thread pool take, by the native function that
// queued them, with where the time went.
const { UserError, UsageError } = require('../errors');
const proc = require('../proc');
const { requireRoot } = require('../privilege');
const { requireTracer } = require('../tracer/detect');
const { planTracer, renderPlan } = require('../tracer/plan');
const { TracerSession, abnormalEnd } = require('../tracer/session');
const { quietMapHelperArgs, stringLimitEnv } = require('../tracer/capabilities');
const { describeTracerFailure } = require('../tracer/failure');
const { buildModel, renderModel, hasData } = require('../aggregation/summarize');
const { TargetSnapshots } = require('../target-snapshots');
const { resolveCommand, childPidOf, commandStarted } = require('../latency/command-target');
const { durationOption, checkDuration, dryRunOption } = require('./common-options');
const { findProbePoints, binaryProbePoints } = require('../latency/probe-points');
const { latencyProgram, SCRIPT } = require('../latency/program');
const { namesMask, NAME_BYTES, NAMES_KEPT_IN_TRACER, NAMES_SHOWN } = require('../latency/named-kinds');

// bpftrace 0.17 attaches slowly to the large official node binaries
// (docs/platforms.md, "bpftrace 0.17 attaches slowly").
const LATENCY_ATTACH_TIMEOUT_MS = 60000;
// bpftrace's output with -c, in the run's private directory.
const OUTPUT_FILE = 'bpftrace.out';

function builder(y) {
  return y
    .usage('$0 latency (-p PID | -c COMMAND) [options]\n\n'
      + 'Latency of the asynchronous operations native add-ons (and Node\'s own thread-pool work)\n'
      + 'kick off, one histogram per kind, named by the native function that started it, with\n'
      + 'the time split into: waiting for a pool thread, running on it, waiting for the event loop.')
    .option('pid', { alias: 'p', type: 'string', describe: 'Trace this running Node process' })
    .option('command', { alias: 'c', type: 'string', describe: 'Start this command (no shell) and trace it while it runs' })
    .option('duration', durationOption('Stop after this many seconds (default: Ctrl-C or target exit)'))
    .option('json', { type: 'boolean', default: false, describe: 'Print JSON (docs/json-format.md) instead of text' })
    .option('sort', { choices: ['total', 'count', 'name'], default: 'total', describe: 'Order kinds by total time, operation count or name' })
    .option('breakdown', { type: 'boolean', default: false, describe: 'Full histograms for queue wait, run and loop wait, not just a summary line' })
    .option('addons-only', { type: 'boolean', default: false, describe: 'Hide Node\'s own thread-pool work (fs, dns, crypto, zlib, ...)' })
    .option('paths', { type: 'boolean', default: false, describe: `Split fs work by the request's path (fs.open /etc/hosts); requests on a file descriptor (read, write, fstat, close) keep their plain kind. The tracer reads the first ${NAME_BYTES - 1} bytes of each path and keeps ${NAMES_KEPT_IN_TRACER} distinct names; the report shows the ${NAMES_SHOWN} that took the most time per kind, the rest as "(other paths)". bpftrace only` })
    .option('hosts', { type: 'boolean', default: false, describe: `Split dns.lookup by the host name looked up (dns.lookup localhost); same limits as --paths` })
    .option('symbols', { type: 'boolean', default: false, describe: 'Name Node\'s own work by its C++ or libuv function (fs: by libuv request type), not fs.read, dns.lookup, zlib, ...' })
    .option('backend', { choices: ['dtrace', 'bpftrace'], describe: 'Tracer to use (default: dtrace if present, else bpftrace)' })
    .option('dry-run', dryRunOption())
    .option('force', { type: 'boolean', default: false, describe: 'Trace the PID even if it does not look like Node' })
    .conflicts('pid', 'command')
    .check((a) => {
      if (a.pid === undefined && a.command === undefined) throw new Error('Give a process: -p PID or -c COMMAND.');
      checkDuration(a);
      if (a.command !== undefined && !a.command.trim()) throw new Error('-c expects a command, e.g. -c \'node app.js\'.');
      return true;
    })
    .example('sudo $0 latency -p 4242', 'trace until Ctrl-C or until 4242 exits, then print')
    .example('sudo $0 latency -p 4242 -d 10', 'trace for 10 seconds')
    .example("sudo $0 latency -c 'node app.js'", 'start the command and trace it while it runs')
    .example('sudo $0 latency -p 4242 --json', 'machine-readable output')
    .example('sudo $0 latency -p 4242 --paths --hosts', 'fs work by path, dns.lookup by host name')
    .example('$0 latency -p 4242 -n', 'show exactly what would be loaded into the kernel, and how')
    .example('dtrace -s d-scripts/addon-latency.d -p 4242 | $0 format', 'format the raw D script\'s output');
}

/**
 * The tracer run for these arguments. Pure but for checking that the
 * process exists and is Node, and for finding -c's binary on the PATH.
 */
function plan(args, tracer) {
  const o = { script: SCRIPT };
  const names = namesMask(args);
  if (names && tracer.name !== 'bpftrace') {
    throw new UsageError('--paths and --hosts need bpftrace: the D script does not read paths or host names (yet).',
      'Run without them, or with --backend bpftrace where bpftrace is installed.');
  }
  let program = null;
  if (args.pid !== undefined) {
    o.pid = proc.parsePid(args.pid);
    if (args.force) proc.requireProcess(o.pid);
    else proc.requireNodeProcess(o.pid);
    o.describe = `PID ${o.pid}`;
    // bpftrace cannot take a PID inside a probe's path: the program takes the
    // files that define its probe points, as this process maps them, and the
    // PID again for its own filter (before 0.20, -p does not filter uprobes:
    // a uprobe fires in every process that maps the file).
    if (tracer.name === 'bpftrace') program = latencyProgram(requireProbePoints(findProbePoints(o.pid), o.describe), { pid: o.pid, names });
  } else {
    const c = resolveCommand(args.command);
    o.command = c.command;
    if (tracer.name === 'bpftrace') {
      // The child's PID is known only to bpftrace, as `cpid` (PID goes unused).
      program = latencyProgram(requireProbePoints(binaryProbePoints(c.binary), c.binary, {
        hint: 'With -c, nodetrace reads the binary before it runs: it must define them itself (official builds do).\n'
          + 'Start the program, then trace it by PID: nodetrace latency -p PID',
      }), { pid: 0, cpid: true, names });
      // The command inherits the tracer's stdout, so the tracer writes its
      // own output to a private file (bpftrace buffers that file, so
      // readiness is told another way: bpftrace execs the command only once
      // its probes are attached).
      o.outputFile = OUTPUT_FILE;
    }
    o.describe = `"${args.command}"`;
  }
  if (program) {
    Object.assign(o, { args: program.args, without: program.without, programText: program.programText, extra: program.extra });
    if (program.notes.length) o.notes = program.notes;
  }
  // bpftrace names usym() keys while it prints, re-reading the symbols for
  // every key unless told to cache them (it caches by default only where
  // ASLR is off). One process is traced, so caching is right.
  if (tracer.name === 'bpftrace') {
    // Names are read as strings of NAME_BYTES (0.17 reads 64 unless told).
    o.env = { BPFTRACE_CACHE_USER_SYMBOLS: '1', ...(program.names ? stringLimitEnv(tracer, NAME_BYTES) : {}) };
    o.extra = [...(o.extra || []), ...quietMapHelperArgs(tracer)];
  }
  const planned = planTracer(tracer, o);
  planned.unseen = program ? program.unseen : null;
  planned.names = program ? program.names : 0;
  return planned;
}

// Thread-pool work this trace cannot see, said before it starts: a report
// with fewer fs operations must never look like a process doing less fs.
function unseenNotes(plan, pid) {
  const notes = plan.unseen ? [plan.unseen] : [];
  if (pid && proc.usesIoUring(pid)) {
    notes.push(`PID ${pid} uses io_uring (libuv 1.45+ with UV_USE_IO_URING=1): fs reads, writes, opens, closes and stats `
      + 'it runs there never reach the thread pool and are not counted.');
  }
  return notes;
}

// Where something is missing, say exactly what and where nodetrace looked:
// never trace the wrong place and report "no work".
function requireProbePoints(found, what, { hint } = {}) {
  if (!found.missing.length) return found.points;
  const byWhy = new Map();
  for (const m of found.missing) byWhy.set(m.why, [...(byWhy.get(m.why) || []), m.name]);
  const parts = [...byWhy].map(([why, names]) => `${names.join(', ')} (${why})`);
  throw new UserError(`cannot trace thread-pool work in ${what}: not found: ${parts.join('; ')}.`,
    { hint: hint || `nodetrace doctor -p ${found.pid || 'PID'} tells which build this is and where it looked.` });
}

// With -c the command's own output goes to ours (to stderr with --json, to
// keep the JSON clean); dtrace -c pipes it through dtrace's, unseen.
function commandStdio(p, args) {
  if (!p.argv.includes('-c')) return undefined;
  if (p.outputFile) return ['inherit', args.json ? 2 : 'inherit'];
  return ['inherit', 'pipe'];
}

async function handler(args) {
  const tracer = requireTracer(args.backend);
  // Root first: planning reads the target's memory map and mapped files.
  if (!args.dryRun) requireRoot('nodetrace latency');
  const p = plan(args, tracer);
  if (args.dryRun) {
    process.stdout.write(renderPlan(p));
    return;
  }
  const pid = args.pid !== undefined ? Number(args.pid) : null;
  for (const note of unseenNotes(p, pid)) process.stderr.write(`nodetrace: ${note}\n`);
  let session = null;
  const maps = new TargetSnapshots(() => pid || (session && session.child && childPidOf(session.child.pid)));
  session = new TracerSession(p, {
    durationSeconds: args.duration,
    // Past the default bound: docs/platforms.md, "bpftrace 0.17 attaches slowly".
    attachTimeoutMs: LATENCY_ATTACH_TIMEOUT_MS,
    stdio: commandStdio(p, args),
    readyWhen: p.outputFile ? (child) => commandStarted(child.pid) : undefined,
    onReady: () => maps.start(),
  });
  const result = await session.run();
  maps.stop();
  if (!result.ready && result.endReason === null) throw describeTracerFailure(tracer, result, pid);
  if (!result.ready) return;   // Ctrl-C before the probes were in place: nothing gathered
  // No operation it measured can have lasted longer than the tracer ran.
  const tracedMs = result.endedAt - result.startedAt;
  const model = buildModel(result, {
    tracer: tracer.name, addonsOnly: args.addonsOnly, resolveAddresses: maps.resolver(), traceNs: tracedMs * 1e6,
    // The pool's shares are of the time every probe was in place, up to the
    // end signal (bpftrace may take seconds more to detach and print).
    poolNs: ((result.endRequestedAt || result.endedAt) - result.readyAt) * 1e6, symbols: args.symbols,
  });
  const traceText = `${(tracedMs / 1000).toFixed(1)} s`;
  const broken = abnormalEnd(result, p);
  if (pid && !broken && !proc.isRunning(pid)) process.stderr.write(`nodetrace: PID ${pid} exited; here is what was gathered.\n`);
  if (hasData(model)) {
    process.stdout.write(renderModel(model, { json: args.json, sort: args.sort, breakdownHistograms: args.breakdown, traceText }));
  } else {
    if (!broken) process.stderr.write(`nodetrace: no thread-pool work completed in ${p.describe} while tracing.\n`);
    if (args.json) process.stdout.write(renderModel(model, { json: true }));
  }
  if (broken) throw new UserError(`${broken}; the results are incomplete${hasData(model) ? ' (above: what it printed)' : ''}.`);
}

module.exports = {
  command: 'latency',
  describe: 'Latency histograms of add-on / thread-pool async operations, by the native function that started them',
  builder,
  handler,
  plan,
};
