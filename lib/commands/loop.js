'use strict';
// nodetrace loop: is this process's event loop blocked? How long each turn
// spends running code rather than waiting for I/O, the stalls over a
// threshold with when they happened, and (--stacks) what the loop was doing
// during them. Works on any running node process, without preparing it.
const { planTracer } = require('../tracer/plan');
const { runTraceCommand } = require('../tracer/run-command');
const { spanNs } = require('../tracer/session');
const { parseLoop, renderLoopText, renderLoopJSON, foldedStacks } = require('../loop/report');
const { targetOptions, checkTarget } = require('../targets/options');
const { oneProcess } = require('../targets/one-process');
const proc = require('../proc');
const { durationOption, checkDuration, dryRunOption } = require('./common-options');
const { describeIdentity } = require('../proc/container');
const { rawUserStackEnv } = require('../tracer/capabilities');
const { nameLoopStacks } = require('../loop/name-stacks');
const { jsFramesLayout, jsFramesSession } = require('../profile/js-frames');
const { splitAtEndMarker } = require('../tracer/output-formats');

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
  targetOptions(y.usage('$0 loop (<target> | -p PID) [options]\n\n'
      + 'How long each turn of a Node process\'s event loop spends running code rather than\n'
      + 'waiting for I/O, the stalls longer than --over with when they ended, and with --stacks\n'
      + 'what the loop was running during them. The process needs no preparation.'), { force: true });
  return y
    .option('duration', durationOption('Stop after this many seconds (default: Ctrl-C or target exit)'))
    .option('over', { type: 'string', default: DEFAULT_OVER, describe: 'A stall is a turn busy for longer than this (100ms, 1s, 500us; a bare number is ms)' })
    .option('top', { type: 'number', default: 10, describe: 'List this many of the longest stalls' })
    .option('stacks', { type: 'boolean', default: false, describe: 'Sample the loop\'s user stack (99 Hz) during stalls; JavaScript frames named from V8\'s metadata (no flag needed) or the perf map' })
    .option('folded', { type: 'boolean', default: false, describe: 'With --stacks: print only the folded stacks, for flame graph tools' })
    .option('json', { type: 'boolean', default: false, describe: 'Print JSON instead of text (docs/json-format.md)' })
    .option('backend', { choices: ['dtrace', 'bpftrace'], describe: 'Tracer to use (default: dtrace if present, else bpftrace)' })
    .option('dry-run', dryRunOption())
    .check((a) => {
      checkTarget(a);
      checkDuration(a);
      if (parseThreshold(a.over) === null) throw new Error(`--over expects a duration such as 100ms, 1s or 500us, not "${a.over}".`);
      if (a.folded && a.json) throw new Error('--folded and --json are two different outputs: choose one.');
      if (!(Number.isInteger(a.top) && a.top >= 1)) throw new Error('--top expects a whole number from 1.');
      return true;
    })
    .example('sudo $0 loop -p 4242', 'trace until Ctrl-C, then print the busy-time histogram and the stalls')
    .example('sudo $0 loop my-service', 'the one Node process whose command line contains "my-service"')
    .example('sudo $0 loop -p 4242 -d 30 --over 50ms', '30 seconds; a stall is a turn over 50 ms')
    .example('sudo $0 loop -p 4242 --stacks', 'and what the loop was running during the stalls')
    .example('sudo $0 loop -p 4242 -d 30 --stacks --folded | flamegraph.pl > stalls.svg', 'a flame graph of the stalls')
    .example('$0 loop -p 4242 -n', 'show exactly what would be loaded into the kernel, and how');
}

/** The tracer run for these arguments. Pure but for checking that the process exists and is Node. */
function plan(args, tracer) {
  const { pid, note, who } = oneProcess(args, { command: 'loop' });
  const overUs = parseThreshold(args.over);
  const stacks = Boolean(args.stacks || args.folded);
  // JavaScript frames of the stacks named from V8's metadata where it is known (lib/profile/js-frames.js).
  const js = stacks && tracer.name === 'bpftrace' ? jsFramesLayout(pid) : null;
  return planTracer(tracer, {
    script: SCRIPT,
    // The program filters on the PID itself: bpftrace 0.17's -p filters no
    // tracepoint, and DTrace's $target would need -p, which stops nothing here.
    args: { PID: pid, OVER_US: overUs, STACKS: stacks ? 1 : 0, ...(js && js.shared ? { SHARED: js.shared, ...js.codeArguments } : {}) },
    // Raw user stacks, named by nodetrace from a snapshot of the target
    // (lib/loop/name-stacks.js): bpftrace would read the perf map itself,
    // through any link (out of a container's root, too) and blocking on a
    // FIFO planted there.
    env: tracer.name === 'bpftrace' && stacks ? rawUserStackEnv(tracer) : {},
    describe: `the event loop of ${describeIdentity(who)}`,
    target: { pid },
    details: { process: who, ...(js && js.shared ? { jsFrames: { v8: js.v8 } } : {}) },
    warnings: [note, js && js.note].filter(Boolean),
  });
}

function report(result, { args, tracer, plan: p, broken, wallMinusMonoNs, snapshots }, run = {}) {
  const pid = p.target.pid;
  if (run.lines) Object.assign(result, splitAtEndMarker(run.lines));
  const r = parseLoop(result, { tracer: tracer.name });
  r.tracedNs = spanNs(result, r.tracedNs);
  if (snapshots) r.stacks = nameLoopStacks(r.stacks, snapshots.symbolizer, snapshots.latest, { js: run.js });
  const o = {
    pid, who: p.details.process, tracer: tracer.name, overUs: parseThreshold(args.over), top: args.top,
    wallMinusMonoNs, stacksWanted: args.stacks || args.folded,
  };
  if (args.folded) process.stdout.write(foldedStacks(r.stacks, { processName: proc.processName(pid) || 'node' }));
  else if (args.json) process.stdout.write(renderLoopJSON(r, o));
  else process.stdout.write(renderLoopText(r, o));
  if (r.turns === 0n && !r.open && !r.early && !broken) {
    // Never woke up and never ran: say so rather than print an empty report as if it meant "fine".
    process.stderr.write(`nodetrace: PID ${pid}'s loop waited for I/O the whole time (idle): no turn to measure.\n`);
  }
  return { gathered: r.turns > 0n || r.stalls.length > 0 };
}

async function handler(args) {
  const run = {};   // JavaScript frames captured with the stacks: { js, lines }
  try {
    await runTraceCommand(args, {
      name: 'loop', plan,
      report: (result, ctx) => report(result, ctx, run),
      sessionOptions: (pl) => jsFramesSession(pl, run),
      // The target's memory map and perf map, to name the stacks' frames.
      snapshots: args.stacks || args.folded ? { perfMap: true } : undefined,
    });
  } finally {
    if (run.js) run.js.close();
  }
}

module.exports = {
  command: 'loop [target]',
  describe: 'Is the event loop blocked? Busy time per turn, the longest stalls and (--stacks) what ran during them',
  builder,
  handler,
  plan,
  parseThreshold,
};
