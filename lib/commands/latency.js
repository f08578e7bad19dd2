'use strict';
// nodetrace latency: how long the asynchronous operations that add-ons (and
// Node itself) queue on libuv's thread pool take, by the native function that
// queued them, with where the time went.
const { listed } = require('./list');
const { UserError, UsageError } = require('../errors');
const proc = require('../proc');
const { planTracer } = require('../tracer/plan');
const { attachBoundMs } = require('../tracer/attach-bounds');
const { runTraceCommand } = require('../tracer/run-command');
const { threadLines } = require('../latency/report/threads');
const { spanNs, tracerRanMs } = require('../tracer/session');
const { quietMapHelperArgs, stringLimitEnv, uprobesWithPid } = require('../tracer/capabilities');
const { describeIdentity, identityJson } = require('../proc/container');
const { safeText } = require('../terminal-safe');
const { buildModel } = require('../latency/report/build-model');
const { summarize, hasData } = require('../latency/report/summary');
const { renderText } = require('../latency/report/text');
const { renderJson } = require('../latency/report/json');
const { resolveCommand } = require('../tracer/command-target');
const { targetOptions, checkTarget } = require('../targets/options');
const { oneProcess } = require('../targets/one-process');
const { durationOption, checkDuration, dryRunOption, jsonOption, backendOption } = require('./common-options');
const { findProbePoints, binaryProbePoints } = require('../latency/probe-points');
const { latencyProgram, SCRIPT } = require('../latency/program');
const { namesMask, NAME_BYTES, NAMES_KEPT_IN_TRACER, NAMES_SHOWN } = require('../latency/report/named-kinds');
const { readScript } = require('../tracer/plan');
const { liveMetrics } = require('../latency/live-metrics');
const { prometheusOption, checkPrometheus, withLiveClause } = require('../prometheus/live');

// bpftrace's output with -c, in the run's private directory.
const OUTPUT_FILE = 'bpftrace.out';
// Said in the dry run of a process in another mount namespace (why: capabilities.js uprobesWithPid).
const NO_PID_NOTE = (pid) => `PID ${pid} sees other mounts than nodetrace (a container): bpftrace gets the mapped files themselves `
  + '(/proc/PID/map_files) without -p, which it would rewrite; the program keeps this process\'s events only, and other '
  + 'processes that map the same files (other containers of its image) take the probe hits too';

function builder(y) {
  targetOptions(y.usage('$0 latency (<target> | -p PID | -c COMMAND) [options]\n\n'
      + 'Latency of the asynchronous operations native add-ons (and Node\'s own thread-pool work)\n'
      + 'kick off, one histogram per kind, named by the native function that started it, with\n'
      + 'the time split into: waiting for a pool thread, running on it, waiting for the event loop.'),
  { command: true, force: true });
  return y
    .option('duration', durationOption('Stop after this many seconds (default: Ctrl-C or target exit)'))
    .option('json', jsonOption())
    .option('sort', { choices: ['total', 'count', 'name'], default: 'total', describe: 'Order kinds by total time, operation count or name' })
    .option('breakdown', { type: 'boolean', default: false, describe: 'Full histograms for queue wait, run and loop wait, not just a summary line' })
    .option('addons-only', { type: 'boolean', default: false, describe: 'Hide Node\'s own thread-pool work (fs, dns, crypto, zlib, ...)' })
    .option('paths', { type: 'boolean', default: false, describe: `Split fs work by the request's path (fs.open /etc/hosts); requests on a file descriptor (read, write, fstat, close) keep their plain kind. The tracer reads the first ${NAME_BYTES - 1} bytes of each path and keeps ${NAMES_KEPT_IN_TRACER} distinct names; the report shows the ${NAMES_SHOWN} that took the most time per kind, the rest as "(other paths)". bpftrace only` })
    .option('hosts', { type: 'boolean', default: false, describe: `Split dns.lookup by the host name looked up (dns.lookup localhost); same limits as --paths` })
    .option('symbols', { type: 'boolean', default: false, describe: 'Name Node\'s own work by its C++ or libuv function (fs: by libuv request type), not fs.read, dns.lookup, zlib, ...' })
    .option('prometheus', prometheusOption('the running histograms by kind'))
    .option('backend', backendOption())
    .option('dry-run', dryRunOption())
    .check((a) => {
      checkTarget(a, { command: true });
      checkDuration(a);
      // Not -c, nor the split by path or host (whose top names change as the trace goes on: a series would vanish).
      checkPrometheus(a, [['command', '-c'], ['paths', '--paths'], ['hosts', '--hosts']]);
      return true;
    })
    .example('sudo $0 latency -p 4242', 'trace until Ctrl-C or until 4242 exits, then print')
    .example('sudo $0 latency my-service', 'the one Node process whose command line contains "my-service"')
    .example('sudo $0 latency -p 4242 -d 10', 'trace for 10 seconds')
    .example('sudo $0 latency --pod web-7d4b9 -d 10', 'the Node process of Kubernetes or podman pod web-7d4b9 (by name or UID)')
    .example("sudo $0 latency -c 'node app.js'", 'start the command and trace it while it runs')
    .example('sudo $0 latency -p 4242 --json', 'machine-readable output')
    .example('sudo $0 latency -p 4242 --paths --hosts', 'fs work by path, dns.lookup by host name')
    .example('sudo $0 latency -p 4242 --prometheus 9464', 'serve http://127.0.0.1:9464/metrics while tracing, the report at Ctrl-C')
    .example('$0 latency -p 4242 -n', 'show exactly what would be loaded into the kernel, and how')
    .example('dtrace -s d-scripts/addon-latency.d -p 4242 | $0 format', 'format the raw D script\'s output');
}

/**
 * The tracer run for these arguments. Pure but for checking that the
 * process exists and is Node, and for finding -c's binary on the PATH.
 * `byName`: the script's functions left by name (lib/latency/program.js).
 */
function plan(args, tracer, { byName = false } = {}) {
  const o = { script: SCRIPT };
  const names = namesMask(args);
  if (names && tracer.name !== 'bpftrace') {
    throw new UsageError('--paths and --hosts need bpftrace: the D script does not read paths or host names (yet).',
      'Run without them, or with --backend bpftrace where bpftrace is installed.');
  }
  let program = null;
  if (args.command === undefined) {
    const { pid, note, who } = oneProcess(args, { command: 'latency' });
    o.target = { pid };
    o.describe = describeIdentity(who);
    o.details = { process: who };
    // bpftrace cannot take a PID inside a probe's path: the program takes the
    // files that define its probe points, as this process maps them, and the
    // PID again for its own filter (before 0.20, -p does not filter uprobes:
    // a uprobe fires in every process that maps the file).
    if (tracer.name === 'bpftrace') program = latencyProgram(requireProbePoints(findProbePoints(pid), o.describe), { pid, names, byName });
    if (uprobesWithPid(tracer, who)) o.pid = pid;
    else o.notes = [...(o.notes || []), NO_PID_NOTE(pid)];
    if (note) o.warnings = [note, ...(o.warnings || [])];
  } else {
    const c = resolveCommand(args.command);
    o.command = c.command;
    if (tracer.name === 'bpftrace') {
      // The child's PID is known only to bpftrace, as `cpid` (PID goes unused).
      program = latencyProgram(requireProbePoints(binaryProbePoints(c.binary), c.binary, {
        hint: 'With -c, nodetrace reads the binary before it runs: it must define them itself (official builds do).\n'
          + 'Start the program, then trace it by PID: nodetrace latency -p PID',
      }), { pid: 0, cpid: true, names });
    }
    // The command inherits the tracer's stdout, so the tracer writes its
    // own output to a private file, read as it grows.
    o.outputFile = OUTPUT_FILE;
    o.describe = `"${args.command}"`;
  }
  if (args.prometheus !== undefined) {
    // The program's LIVE clause: its maps printed every second, uncleared (lib/latency/live-metrics.js).
    const text = withLiveClause((program && program.programText) || readScript(SCRIPT, 'bpftrace'), tracer, 'latency');
    program.programText = text;
  }
  if (program) {
    Object.assign(o, { args: program.args, without: program.without, programText: program.programText,
      extra: program.extra });
    if (o.target) o.uprobeFiles = [...new Set([program.args.NAPI_FILE, program.args.UV_FILE])];
    // What this trace cannot see is said before it starts: a report with
    // fewer fs operations must never look like a process doing less fs.
    if (program.unseen) o.warnings = [...(o.warnings || []), program.unseen];
    o.notes = [...(o.notes || []), ...program.notes.filter((n) => n !== program.unseen)];
  }
  // bpftrace names usym() keys while it prints, re-reading the symbols for
  // every key unless told to cache them (it caches by default only where
  // ASLR is off). One process is traced, so caching is right.
  if (tracer.name === 'bpftrace') {
    // Names are read as strings of NAME_BYTES (0.17 reads 64 unless told).
    o.env = { BPFTRACE_CACHE_USER_SYMBOLS: '1', ...(program.names ? stringLimitEnv(tracer, NAME_BYTES) : {}) };
    o.extra = [...(o.extra || []), ...quietMapHelperArgs(tracer)];
  }
  // Thread-pool work this trace cannot see, said before it starts: a report
  // with fewer fs operations must never look like a process doing less fs.
  if (o.target && proc.usesIoUring(o.target.pid)) {
    o.warnings = [...(o.warnings || []), `PID ${o.target.pid} uses io_uring (libuv 1.45+ with UV_USE_IO_URING=1): fs reads, writes, opens, closes and stats `
      + 'it runs there never reach the thread pool and are not counted.'];
  }
  // bpftrace 0.17 reads a probed file's symbol tables as it attaches: past
  // the default bound on the official 100+ MB node binaries.
  o.attachTimeoutMs = attachBoundMs(tracer, { command: 'latency' });
  return planTracer(tracer, o);
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

function report(result, { args, plan: p, snapshots, broken }) {
  // No operation it measured can have lasted longer than the tracer ran.
  const ranMs = tracerRanMs(result);
  const model = buildModel(result, {
    tracer: p.tracer.name, addonsOnly: args.addonsOnly, resolveAddresses: snapshots.resolver(), traceNs: ranMs * 1e6,
    symbols: args.symbols,
  });
  // The trace, as the header and JSON say and the pool's shares are of: the
  // program's window where it printed its report at the end asked for
  // (session.js spanNs), else from every probe attached to the end.
  const tracedNs = spanNs(result, model.programTracedNs) || BigInt(Math.round(ranMs * 1e6));
  const tracedMs = Number(tracedNs) / 1e6;
  const summary = summarize({ ...model, tracedNs, poolNs: Number(tracedNs) }, { sort: args.sort });
  const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
  const traceText = seconds(tracedMs);
  const who = p.details.process;
  // Whose work it was (the main thread, each Worker: lib/latency/report/threads.js), by role.
  const identityOf = (tid) => snapshots.identityOf(tid) || (who && tid === who.pid ? { tid, role: 'main' } : null);
  const json = () => renderJson(summary, { process: who ? identityJson(who) : null, identityOf });
  const byThread = threadLines(summary.threads, identityOf).map((l) => l + '\n').join('');
  if (hasData(summary)) {
    process.stdout.write(args.json ? json()
      : safeText(`Thread-pool latency of ${p.describe}, traced ${traceText}:\n\n${byThread}`) + renderText(summary, { breakdownHistograms: args.breakdown, traceText: seconds(ranMs) }));
    return { gathered: true };
  }
  if (!broken) process.stderr.write(safeText(`nodetrace: no thread-pool work completed in ${p.describe} while tracing.`) + '\n');
  if (args.json) process.stdout.write(json());
  return { gathered: false };
}

function handler(args) {
  return runTraceCommand(args, {
    name: 'latency',
    plan,
    report,
    // With -c the command's own output goes to ours, to stderr with --json.
    dataOnStdout: (a) => a.json,
    // The target's memory map, to name what the tracer printed as addresses
    // (with -c, or after the target exits, bpftrace no longer can); its
    // threads, to say which Workers queue work too.
    snapshots: { perfMap: false, threads: true },
    liveMetrics,
  });
}

module.exports = {
  ...listed('latency'),
  builder,
  handler,
  plan,
};
