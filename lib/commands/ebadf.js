'use strict';
// nodetrace ebadf: stop a process the instant a system call fails with EBADF
// (or another errno), save a core with gcore, and let it run on; or, with
// --abort, kill it with SIGABRT right there. The article's "stopping a broken
// program in its tracks", made safe for production: see docs/ebadf.md.
const { listed } = require('./list');
const { UsageError, UserError } = require('../errors');
const proc = require('../proc');
const { requireRoot } = require('../privilege');
const { requireTracer, findOnPath } = require('../tracer/detect');
const { ustackBlocksGcore } = require('../tracer/capabilities');
const { describeTracerFailure } = require('../tracer/failure');
const { parseErrnoList } = require('../ebadf/errno');
const { parseSyscallList } = require('../ebadf/syscalls');
const { planEbadf, MAX_ERRNOS } = require('../ebadf/program');
const { renderPlan } = require('../tracer/plan');
const {
  durationOption, checkDuration, dryRunOption, outputDirOption, checkOutputDir, sourceMapsOption, backendOption,
} = require('./common-options');
const { targetOptions, checkTarget } = require('../targets/options');
const { resolveOneTarget, hostFacts } = require('../targets/one-process');
const { hostPidNote } = require('../targets/containers');
const { identityOf, describeIdentity } = require('../proc/container');
const { watchOutcome } = require('../ebadf/outcome');
const { safeText } = require('../terminal-safe');
const { requireGcore, checkCoreDir, requireRoom, coreEstimate, formatBytes } = require('../ebadf/core');
const { renderOpenHelp } = require('../ebadf/hit-report');
const { watch } = require('../ebadf/watch');

const COMM_MAX = 15; // TASK_COMM_LEN - 1: the kernel keeps this much of a name

function builder(y) {
  return targetOptions(y, { pidHelp: 'Watch this process (any program, not just node): the same as giving its PID as the target' })
    .usage('$0 ebadf (<target> | -p PID | --name NAME) [options]\n\n'
      + 'Stop a process the instant a system call fails with EBADF (close() by default), save a\n'
      + 'core with gcore, and resume it; or, with --abort, kill it with SIGABRT right there.\n'
      + 'Each hit shows the failing call, the stack at that moment (JavaScript frames named from\n'
      + 'V8\'s own metadata, no flag needed), the core and how long the process was stopped.\n'
      + 'A target is a PID or part of the command line of one process.')
    .option('name', { type: 'string', describe: 'Watch every process with this name (comm, max 15 characters), including ones started later' })
    .option('abort', { type: 'boolean', default: false, describe: 'Kill the process with SIGABRT at the failing call instead (development: it dies, the kernel writes its core)' })
    .option('output-dir', outputDirOption('Where cores go (default: the current directory)'))
    .option('syscall', { type: 'string', default: 'close', describe: 'System calls to watch, comma-separated' })
    .option('errno', { type: 'string', default: 'EBADF', describe: `Errors to catch, comma-separated names (EBADF,EPIPE), at most ${MAX_ERRNOS}` })
    .option('count', { type: 'number', default: 1, describe: 'Hits to handle before exiting' })
    .option('duration', durationOption('Give up after this many seconds'))
    .option('gcore-timeout', { type: 'number', default: 120, describe: 'Longest a core may take, in seconds; after that gcore is killed and the process resumed' })
    .option('backend', backendOption())
    .option('source-maps', sourceMapsOption())
    .option('dry-run', dryRunOption())
    .check((a) => {
      if (a.abort && a.outputDir !== undefined) {
        throw new Error('-o applies to the cores gcore saves; with --abort the kernel writes the core (ulimit -c, kernel.core_pattern).');
      }
      if ([a.pid, a.target, a.name, a.container, a.pod].every((v) => v === undefined)) {
        throw new Error('Give a process: a PID (-p PID), part of its command line, --container NAME, --pod NAME or --name NAME. nodetrace ebadf never watches every process.');
      }
      checkTarget(a, { extra: ['name'] });
      checkOutputDir(a);
      if (!(Number.isInteger(a.count) && a.count > 0 && a.count <= 1000)) throw new Error('--count expects a whole number from 1 to 1000.');
      checkDuration(a);
      if (!(Number.isInteger(a['gcore-timeout']) && a['gcore-timeout'] > 0 && a['gcore-timeout'] <= 86400)) {
        throw new Error('--gcore-timeout expects a whole number of seconds from 1 to 86400.');
      }
      return true;
    })
    .example('sudo $0 ebadf -p 4242', 'stop 4242 at the first close() that fails with EBADF, gcore it, resume it')
    .example('sudo $0 ebadf --name node', 'the same for any process named node, running now or started later')
    .example('sudo $0 ebadf -p 4242 --abort', 'kill it with SIGABRT there instead: it dies with a core (development)')
    .example('sudo $0 ebadf -p 4242 -o /var/cores', 'where cores go (default: the current directory)')
    .example('sudo $0 ebadf -p 4242 --syscall close,dup2,write --errno EBADF,EPIPE', 'other calls, other errors')
    .example('sudo $0 ebadf -p 4242 --count 3', 'handle three hits before exiting')
    .example('$0 ebadf -p 4242 -n', 'show exactly what would be loaded into the kernel, and how')
    .epilogue('Exit status: 0 when --count hits were handled; 1 when a core could not be saved, the tracer\n'
      + 'failed, or the watch ended (Ctrl-C, -d) first; 2 for bad options; 3 when the process does\n'
      + 'not exist or exited first. Stopped processes are resumed even if nodetrace is killed.\n'
      + 'Docs: docs/ebadf.md; the scripts: d-scripts/ebadf-stop-gcore.{d,bt}, ebadf-abort.{d,bt}.');
}

function parseName(text) {
  const name = String(text);
  if (!name) throw new UsageError('--name expects a process name, e.g. --name node.');
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(name) || name.startsWith('-')) {
    throw new UsageError('--name: a process name cannot contain control characters or start with "-".');
  }
  if (Buffer.byteLength(name) > COMM_MAX) {
    const cut = Buffer.from(name).subarray(0, COMM_MAX).toString('utf8').replace(/\uFFFD$/, '');
    throw new UsageError(`--name "${name}" is longer than ${COMM_MAX} bytes, and the kernel keeps only the first ${COMM_MAX} of a process name.`,
      `Use the name as the kernel has it: --name '${cut}' (see: ps -o comm= -p PID).`);
  }
  return name;
}

// The one process a target means (any program: ebadf is not Node's alone), or the --name filter.
function filterOf(args) {
  if (args.name !== undefined) return { name: parseName(args.name) };
  const host = hostFacts();
  const { pid, note } = resolveOneTarget(args, host, { command: 'ebadf', force: true, verbing: 'watching' });
  // -p 1 and the like: taken (ebadf watches any program), and the Node
  // processes that have that PID inside their containers said.
  const inside = args.container === undefined && args.pod === undefined ? hostPidNote(pid, host, { command: 'ebadf' }) : null;
  return { pid, note: [note, inside].filter(Boolean).join('\n') || null };
}

function plan(args, tracer) {
  const filter = filterOf(args);
  if (filter.pid) {
    if (filter.pid === process.pid) throw new UsageError('-p names nodetrace itself.');
    proc.requireProcess(filter.pid, { hint: 'Find processes with: pgrep -l node (or ps -e)' });
  }
  const errnos = parseErrnoList(args.errno);
  if (errnos.length > MAX_ERRNOS) throw new UsageError(`--errno takes at most ${MAX_ERRNOS} errors.`);
  const sys = parseSyscallList(args.syscall, { tracerName: tracer.name });
  const mode = args.abort ? 'abort' : 'stop';
  const tracerPlan = planEbadf({
    tracer, mode, pid: filter.pid, name: filter.name, syscalls: sys.names, errnos, count: args.count,
  });
  return { filter, errnos, mode, syscalls: sys.names, syscallsChecked: sys.checked, tracerPlan };
}

function describeFilter(filter) {
  if (filter.pid) {
    // The process's name is its own to choose, newlines too: one line.
    const name = proc.processName(filter.pid);
    return `${describeIdentity(identityOf(filter.pid))}${name ? ` (${safeText(name, { oneLine: true })})` : ''}`;
  }
  return `processes named ${filter.name}`;
}

function whatItWatches(p) {
  return `${p.syscalls.map((s) => s + '()').join(', ')} failing with ${p.errnos.map((e) => e.name).join(' or ')}`;
}

function dryRun(p, args) {
  const after = [];
  if (p.mode === 'stop') {
    const target = p.filter.pid || 'PID';
    after.push(`for each hit (nodetrace itself, no shell): gcore -o ${args.outputDir || '.'}/.nodetrace-ebadf-XXXXXX/core ${target}; `
      + `kill -CONT ${target}; chmod 0600 and rename the core; a watchdog resumes ${target} if nodetrace dies`);
  }
  if (!p.syscallsChecked && p.tracerPlan.tracer.name === 'bpftrace') after.push('(system call names not checked against the kernel: tracefs is readable by root only)');
  process.stdout.write(renderPlan(p.tracerPlan, { after }));
}

// nodetrace and its watchdog are node processes: a `--name node` must never stop them.
function requireNotOurselves(filter) {
  if (!filter.name) return;
  try { process.title = 'nodetrace'; } catch { /* keep going */ }
  if (proc.processName(process.pid) === filter.name) {
    throw new UserError(`nodetrace itself runs as a process named "${filter.name}" here, so --name ${filter.name} could stop nodetrace.`,
      { hint: 'Run nodetrace with a longer command line (e.g. the full path: sudo /path/to/bin/nodetrace ...) so that it can rename itself, or watch by PID.' });
  }
}

async function handler(args) {
  const tracer = requireTracer(args.backend);
  const p = plan(args, tracer);
  if (args.dryRun) {
    dryRun(p, args);
    return;
  }
  requireRoot('nodetrace ebadf');
  const mode = p.mode;
  requireNotOurselves(p.filter);
  if (p.filter.note) process.stderr.write(safeText(`nodetrace: ${p.filter.note}`) + '\n');
  let gcore;
  let coreDir;
  if (mode === 'stop') {
    gcore = requireGcore();
    coreDir = checkCoreDir(args.outputDir || '.');
    if (p.filter.pid) requireRoom(coreDir, p.filter.pid);
  }
  if (mode === 'abort' && p.filter.pid) {
    if (proc.coreLimit(p.filter.pid) === '0') {
      process.stderr.write(`nodetrace: warning: PID ${p.filter.pid}'s core size limit is 0, so SIGABRT will kill it without a core.\n`
        + `  To get one, first run: sudo prlimit --pid ${p.filter.pid} --core=unlimited\n`);
    }
  }

  const describe = describeFilter(p.filter);
  const est = p.filter.pid && mode === 'stop' ? coreEstimate(p.filter.pid) : null;
  const onHit = mode === 'abort'
    ? 'on a hit it is killed with SIGABRT'
    : `on a hit it is stopped, dumped to ${coreDir}${est ? ` (about ${formatBytes(est.vmSize)})` : ''} and resumed`;
  const errnoNames = Object.fromEntries(p.errnos.map((e) => [e.number, e.name]));
  let watchingSince = Date.now();
  const result = await watch({
    plan: p.tracerPlan, mode, filter: p.filter, count: args.count, coreDir, gcore,
    stackFromCore: mode === 'stop' && ustackBlocksGcore(tracer) ? { gdb: findOnPath('gdb') || 'gdb' } : null,
    v8Walk: mode === 'stop' ? { gdb: findOnPath('gdb') || 'gdb' } : null,
    sourceMaps: args.sourceMaps !== false,
    durationSeconds: args.duration, gcoreTimeoutMs: args.gcoreTimeout * 1000,
    out: process.stdout, err: process.stderr, errnoNames,
    onReady: () => (watchingSince = Date.now()) && process.stderr.write(safeText(`nodetrace: watching ${describe} for ${whatItWatches(p)} `
      + `(${tracer.name} ${tracer.version}); ${onHit}. Ctrl-C to stop.`) + '\n'),
  });

  if (!result.ready) {
    if (result.interrupted) throw new UserError(`interrupted (${result.interrupted}) before the probes were in place; nothing was stopped.`);
    throw describeTracerFailure(tracer, { ...result.tracerExit, errors: result.errors }, p.filter.pid);
  }
  const help = renderOpenHelp(result.records);
  if (help) process.stdout.write(safeText(help));
  const { notes, error } = watchOutcome(result, {
    count: args.count, pid: p.filter.pid || null, describe, watches: whatItWatches(p),
    elapsedMs: Date.now() - watchingSince, duration: args.duration, tracerName: tracer.name,
  });
  for (const note of notes) process.stderr.write(safeText(`nodetrace: ${note}`) + '\n');
  if (error) throw new UserError(error.message, { hint: error.hint, exitCode: error.exitCode });
}

module.exports = {
  ...listed('ebadf'),
  builder,
  handler,
  plan,
  parseName,
};
