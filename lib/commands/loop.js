'use strict';
// nodetrace loop: is this process's event loop blocked? How long each turn
// spends running code rather than waiting for I/O, the stalls over a
// threshold with when they happened, and (--stacks) what the loop was doing
// during them. Works on any running node process, without preparing it.
const { listed } = require('./list');
const { planTracer, readScript } = require('../tracer/plan');
const { runTraceCommand } = require('../tracer/run-command');
const { spanNs } = require('../tracer/session');
const { parseLoop, renderLoopText, renderLoopJSON, foldedStacks, lostStackSamples } = require('../loop/report');
const { targetOptions, checkTarget } = require('../targets/options');
const { oneProcess } = require('../targets/one-process');
const proc = require('../proc');
const { durationOption, checkDuration, dryRunOption, threadOption, parseThread, checkThread, sourceMapsOption, jsonOption, backendOption } = require('./common-options');
const { selectThread } = require('../threads/select');
const { threadLabel } = require('../threads/roles');
const { describeIdentity } = require('../proc/container');
const { rawUserStackEnv } = require('../tracer/capabilities');
const { userStackBound } = require('../render/map-full');
const { nameLoopStacks } = require('../loop/name-stacks');
const { jsFramesLayout, jsFramesSession } = require('../profile/js-frames');
const { splitAtEndMarker } = require('../tracer/output-formats');
const { prometheusOption, checkPrometheus, withLiveClause } = require('../prometheus/live');
const { liveMetricsFor } = require('../loop/live-metrics');

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
    .option('thread', threadOption())
    .option('over', { type: 'string', default: DEFAULT_OVER, describe: 'A stall is a turn busy for longer than this (100ms, 1s, 500us; a bare number is ms)' })
    .option('top', { type: 'number', default: 10, describe: 'List this many of the longest stalls' })
    .option('stacks', { type: 'boolean', default: false, describe: 'Sample the loop\'s user stack (99 Hz) during stalls; JavaScript frames named from V8\'s metadata (no flag needed) or the perf map' })
    .option('folded', { type: 'boolean', default: false, describe: 'With --stacks: print only the folded stacks, for flame graph tools' })
    .option('source-maps', sourceMapsOption())
    .option('json', jsonOption())
    .option('prometheus', prometheusOption('the running histogram of each turn\'s busy time'))
    .option('backend', backendOption())
    .option('dry-run', dryRunOption())
    .check((a) => {
      checkTarget(a);
      checkDuration(a);
      checkThread(a);
      checkPrometheus(a);
      if (parseThreshold(a.over) === null) throw new Error(`--over expects a duration such as 100ms, 1s or 500us, not "${a.over}".`);
      if (a.folded && a.json) throw new Error('--folded and --json are two different outputs: choose one.');
      if (!(Number.isInteger(a.top) && a.top >= 1)) throw new Error('--top expects a whole number from 1.');
      return true;
    })
    .example('sudo $0 loop -p 4242', 'trace until Ctrl-C, then print the busy-time histogram and the stalls')
    .example('sudo $0 loop my-service', 'the one Node process whose command line contains "my-service"')
    .example('sudo $0 loop -p 4242 -d 30 --over 50ms', '30 seconds; a stall is a turn over 50 ms')
    .example('sudo $0 loop -p 4242 --stacks', 'and what the loop was running during the stalls')
    .example('sudo $0 loop -p 4242 --thread 2', 'the event loop of the process\'s worker_threads Worker 2')
    .example('sudo $0 loop -p 4242 -d 30 --stacks --folded | flamegraph.pl > stalls.svg', 'a flame graph of the stalls')
    .example('sudo $0 loop -p 4242 --prometheus 9464', 'serve http://127.0.0.1:9464/metrics while tracing, the report at Ctrl-C')
    .example('$0 loop -p 4242 -n', 'show exactly what would be loaded into the kernel, and how');
}

/** The tracer run for these arguments. Pure but for checking that the process exists and is Node. */
function plan(args, tracer) {
  const { pid, note, who } = oneProcess(args, { command: 'loop' });
  const overUs = parseThreshold(args.over);
  // Whose loop: the main thread's (its TID is the PID), or a Worker's
  // (lib/threads/select.js finds it in the process).
  const want = args.thread === undefined ? { main: true } : parseThread(args.thread);
  const chosen = want.main ? { tid: pid, identity: { tid: pid, role: 'main' } } : selectThread(pid, want);
  const thread = { tid: chosen.tid, role: chosen.identity.role, label: threadLabel(chosen.identity),
    ...(chosen.identity.worker ? { worker: chosen.identity.worker } : {}) };
  const stacks = Boolean(args.stacks || args.folded);
  // JavaScript frames of the stacks named from V8's metadata where it is known (lib/profile/js-frames.js).
  const js = stacks && tracer.name === 'bpftrace' ? jsFramesLayout(pid) : null;
  // bpftrace's own map of user stacks, before 0.25 (lib/render/map-full.js).
  const stackMap = stacks ? userStackBound(tracer, 'trace for less time') : null;
  return planTracer(tracer, {
    script: SCRIPT,
    // --prometheus: the program's LIVE clause, its turn maps printed every second (lib/loop/live-metrics.js).
    ...(args.prometheus !== undefined ? { programText: withLiveClause(readScript(SCRIPT, tracer.name), tracer, 'loop') } : {}),
    // The program filters on the PID itself: bpftrace 0.17's -p filters no
    // tracepoint, and DTrace's $target would need -p, which stops nothing here.
    args: { PID: pid, OVER_US: overUs, STACKS: stacks ? 1 : 0, TID: thread.tid,
      ...(js && js.shared ? { SHARED: js.shared, ...js.codeArguments } : {}) },
    // Raw user stacks, named by nodetrace from a snapshot of the target
    // (lib/loop/name-stacks.js): bpftrace would read the perf map itself,
    // through any link (out of a container's root, too) and blocking on a
    // FIFO planted there.
    env: tracer.name === 'bpftrace' && stacks ? rawUserStackEnv(tracer) : {},
    describe: `the event loop of ${thread.role === 'main' ? '' : `${thread.label} (TID ${thread.tid}) of `}${describeIdentity(who)}`,
    target: { pid },
    details: { process: who, thread,
      ...(js && js.shared ? { jsFrames: { v8: js.v8, sourceMaps: args.sourceMaps !== false } } : {}),
      ...(stackMap ? { boundedMaps: [stackMap] } : {}) },
    warnings: [note, js && js.note].filter(Boolean),
  });
}

function report(result, { args, tracer, plan: p, broken, wallMinusMonoNs, snapshots }, run = {}) {
  const pid = p.target.pid;
  if (run.lines) Object.assign(result, splitAtEndMarker(run.lines));
  const r = parseLoop(result, { tracer: tracer.name });
  r.tracedNs = spanNs(result, r.tracedNs);
  if (snapshots && (args.stacks || args.folded)) r.stacks = nameLoopStacks(r.stacks, snapshots.symbolizer,
    snapshots.latest, { js: run.js });
  // The process's Workers, as its threads were read while tracing: each
  // has a loop of its own, which the report points to.
  const workers = snapshots ? snapshots.threadsSeen().filter((t) => t.role === 'worker')
    .sort((a, b) => (a.worker.threadId || 0) - (b.worker.threadId || 0))
      .map((t) => ({ tid: t.tid, role: t.role, label: threadLabel(t), worker: t.worker })) : [];
  const o = {
    pid, who: p.details.process, thread: p.details.thread, workers, tracer: tracer.name,
    overUs: parseThreshold(args.over), top: args.top,
    wallMinusMonoNs, stacksWanted: args.stacks || args.folded,
  };
  if (args.folded) process.stdout.write(foldedStacks(r.stacks, { processName: proc.processName(pid) || 'node' }));
  else if (args.json) process.stdout.write(renderLoopJSON(r, o));
  else process.stdout.write(renderLoopText(r, o));
  if (r.turns === 0n && !r.open && !r.early && !broken) {
    // Never woke up and never ran: say so rather than print an empty report as if it meant "fine".
    process.stderr.write(`nodetrace: ${p.details.thread && p.details.thread.role !== 'main' ? `${p.details.thread.label} of PID ${pid}: its` : `PID ${pid}'s`} loop waited for I/O the whole time (idle): no turn to measure.\n`);
  }
  const gathered = r.turns > 0n || r.stalls.length > 0;
  return { gathered, mapsSeen: { ustack: { refused: lostStackSamples(r.stacks) } } };
}

async function handler(args) {
  const run = {};   // JavaScript frames captured with the stacks: { js, lines }
  try {
    await runTraceCommand(args, {
      name: 'loop', plan,
      report: (result, ctx) => report(result, ctx, run),
      sessionOptions: (pl) => jsFramesSession(pl, run),
      // The target's memory map and perf map, to name the stacks' frames;
      // its threads, to say which Workers it runs.
      snapshots: { perfMap: Boolean(args.stacks || args.folded), threads: true },
      liveMetrics: (pl) => liveMetricsFor(pl.details.thread),
    });
  } finally {
    if (run.js) run.js.close();
  }
}

module.exports = {
  ...listed('loop'),
  builder,
  handler,
  plan,
  parseThreshold,
};
