'use strict';
// nodetrace loop: is this process's event loop blocked? How long each turn
// spends running code rather than waiting for I/O, the stalls over a
// threshold with when they happened, and (--stacks) what the loop was doing
// during them. Works on any running node process, without preparing it.
const { UserError } = require('../errors');
const proc = require('../proc');
const { requireRoot } = require('../privilege');
const { requireTracer } = require('../tracer/detect');
const { planTracer, renderPlan } = require('../tracer/plan');
const { TracerSession, abnormalEnd } = require('../tracer/session');
const { describeTracerFailure } = require('../tracer/failure');
const { parseLoop, renderLoopText, renderLoopJSON, foldedStacks } = require('../loop/report');
const { durationOption, checkDuration, dryRunOption } = require('./common-options');

const SCRIPT = 'loop';
const DEFAULT_OVER = '100ms';
const UNITS_US = { us: 1, ms: 1000, s: 1000000 };

/** "100ms", "1.5s", "500us", "250" (milliseconds) -> whole microseconds; null if not a duration. */
function parseThreshold(text) {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(us|ms|s)?\s*$/.exec(String(text));
  if (!m) return null;
  const us = Math.round(Number(m[1]) * UNITS_US[m[2] || 'ms']);
  return us >= 1 && us <= 3600 * 1e6 ? us : null;
}

function builder(y) {
  return y
    .usage('$0 loop -p PID [options]\n\n'
      + 'How long each turn of a Node process\'s event loop spends running code rather than\n'
      + 'waiting for I/O, the stalls longer than --over with when they ended, and with --stacks\n'
      + 'what the loop was running during them. The process needs no preparation.')
    .option('pid', { alias: 'p', type: 'string', describe: 'Trace this running Node process (its main thread\'s loop)' })
    .option('duration', durationOption('Stop after this many seconds (default: Ctrl-C or target exit)'))
    .option('over', { type: 'string', default: DEFAULT_OVER, describe: 'A stall is a turn busy for longer than this (100ms, 1s, 500us; a bare number is ms)' })
    .option('top', { type: 'number', default: 10, describe: 'List this many of the longest stalls' })
    .option('stacks', { type: 'boolean', default: false, describe: 'Sample the loop\'s user stack (99 Hz) during stalls; JavaScript frames are named if node runs with --perf-basic-prof' })
    .option('folded', { type: 'boolean', default: false, describe: 'With --stacks: print only the folded stacks, for flame graph tools' })
    .option('json', { type: 'boolean', default: false, describe: 'Print JSON instead of text (docs/json-format.md)' })
    .option('backend', { choices: ['dtrace', 'bpftrace'], describe: 'Tracer to use (default: dtrace if present, else bpftrace)' })
    .option('dry-run', dryRunOption())
    .option('force', { type: 'boolean', default: false, describe: 'Trace the PID even if it does not look like Node' })
    .check((a) => {
      if (a.pid === undefined) throw new Error('Give a process: -p PID.');
      checkDuration(a);
      if (parseThreshold(a.over) === null) throw new Error(`--over expects a duration such as 100ms, 1s or 500us, not "${a.over}".`);
      if (a.folded && a.json) throw new Error('--folded and --json are two different outputs: choose one.');
      if (!(Number.isInteger(a.top) && a.top >= 1)) throw new Error('--top expects a whole number from 1.');
      return true;
    })
    .example('sudo $0 loop -p 4242', 'trace until Ctrl-C, then print the busy-time histogram and the stalls')
    .example('sudo $0 loop -p 4242 -d 30 --over 50ms', '30 seconds; a stall is a turn over 50 ms')
    .example('sudo $0 loop -p 4242 --stacks', 'and what the loop was running during the stalls')
    .example('sudo $0 loop -p 4242 -d 30 --stacks --folded | flamegraph.pl > stalls.svg', 'a flame graph of the stalls')
    .example('$0 loop -p 4242 -n', 'show exactly what would be loaded into the kernel, and how');
}

/** The tracer run for these arguments. Pure but for checking that the process exists and is Node. */
function plan(args, tracer) {
  const pid = proc.parsePid(args.pid);
  if (args.force) proc.requireProcess(pid);
  else proc.requireNodeProcess(pid);
  const overUs = parseThreshold(args.over);
  const stacks = Boolean(args.stacks || args.folded);
  return planTracer(tracer, {
    script: SCRIPT,
    // The program filters on the PID itself: bpftrace 0.17's -p filters no
    // tracepoint, and DTrace's $target would need -p, which stops nothing here.
    args: { PID: pid, OVER_US: overUs, STACKS: stacks ? 1 : 0 },
    // bpftrace names ustack() frames while printing, re-reading the node
    // binary's symbols for every stack unless told to cache (minutes for a
    // hundred stacks of a 100 MB binary).
    env: tracer.name === 'bpftrace' ? { BPFTRACE_CACHE_USER_SYMBOLS: '1' } : {},
    describe: `the event loop of PID ${pid}`,
  });
}

// Kernel monotonic time -> wall time: both clocks read back to back.
function wallMinusMonoNs() {
  return BigInt(Date.now()) * 1000000n - process.hrtime.bigint();
}

async function handler(args) {
  if (args.folded && !args.stacks) args.stacks = true;
  const tracer = requireTracer(args.backend);
  const p = plan(args, tracer);
  if (args.dryRun) {
    process.stdout.write(renderPlan(p));
    return;
  }
  requireRoot('nodetrace loop');
  const pid = proc.parsePid(args.pid);
  const session = new TracerSession(p, { durationSeconds: args.duration });
  const result = await session.run();
  const offset = wallMinusMonoNs();
  if (!result.ready && result.endReason === null) throw describeTracerFailure(tracer, result, pid);
  if (!result.ready) return;
  const report = parseLoop(result, { tracer: tracer.name });
  const broken = abnormalEnd(result, p);
  if (!broken && !proc.isRunning(pid)) process.stderr.write(`nodetrace: PID ${pid} exited; here is what was gathered.\n`);
  const o = {
    pid, tracer: tracer.name, overUs: parseThreshold(args.over), top: args.top,
    wallMinusMonoNs: offset, stacksWanted: args.stacks,
  };
  if (args.folded) process.stdout.write(foldedStacks(report.stacks, { processName: proc.processName(pid) || 'node' }));
  else if (args.json) process.stdout.write(renderLoopJSON(report, o));
  else process.stdout.write(renderLoopText(report, o));
  if (broken) throw new UserError(`${broken}; the results are incomplete.`);
  if (report.turns === 0n && !report.open && !report.early && !broken) {
    // Never woke up and never ran: say so rather than print an empty report as if it meant "fine".
    process.stderr.write(`nodetrace: PID ${pid}'s loop waited for I/O the whole time (idle): no turn to measure.\n`);
  }
}

module.exports = {
  command: 'loop',
  describe: 'Is the event loop blocked? Busy time per turn, the longest stalls and (--stacks) what ran during them',
  builder,
  handler,
  plan,
  parseThreshold,
};
