'use strict';
// One way to run a command that traces with a tracer session (latency, gc,
// loop, profile; http through its library follower): the tracer, root, the
// plan and its dry run, the output files checked before tracing, -c's stdio
// and readiness, snapshots of the target, a start that failed, the target
// exiting mid-trace, the abnormal end and the exit status. A command gives
// its plan and its report; the rest is here, the same for every command.
const { UserError } = require('../errors');
const { startTime, sameProcess } = require('../proc/stat');
const { requireRoot } = require('../privilege');
const { requireTracer } = require('./detect');
const { renderPlan } = require('./plan');
const { TracerSession, abnormalEnd } = require('./session');
const { describeTracerFailure } = require('./failure');
const { TargetSnapshots } = require('../target-snapshots');
const { checkOutputFile } = require('../output-file');
const { wallMinusMonoNs } = require('../clock');
const { outputClosed } = require('./signals');
const { safeText } = require('../terminal-safe');
const { payingNeighbours, neighbourWarning } = require('./neighbours');
const { mapFullLines } = require('../render/map-full');
const { serveLive } = require('../prometheus/live');

// How often a traced PID is checked: its exit (or its PID taken by another
// process: the start time changed) ends the trace within this long.
const TARGET_CHECK_MS = 500;

/**
 * The process a plan traces (plan.target), watched: the PID once known (-c:
 * when the tracer has forked the command) and whether it is still the
 * process that was planned for.
 */
class TracedProcess {
  constructor(plan) {
    this.pid = plan.target ? plan.target.pid || null : null;
    this.start = plan.target ? plan.target.startTime || (this.pid && startTime(this.pid)) : null;
  }

  // -c: the command's PID, once the tracer's child runs it (before that,
  // the child is a copy of the tracer or a tracer's wrapper's helper, whose
  // memory map would name the command's addresses wrongly).
  learn(session) {
    if (this.pid || !session) return;
    const pid = session.commandPid();
    if (pid) { this.pid = pid; this.start = startTime(pid); }
  }

  alive() {
    return Boolean(this.pid) && sameProcess(this.pid, this.start);
  }
}

// With -c, the command's output goes to ours (the tracer's own goes to a
// file: plan.outputFile), but to stderr where our stdout carries data
// (JSON, folded stacks). Its stderr is the tracer's, whose lines the
// session sorts (lib/tracer/tracer-stderr.js).
function commandStdio(plan, dataOnStdout) {
  if (!plan.command) return undefined;
  if (!plan.outputFile) return ['inherit', 'pipe'];
  return ['inherit', dataOnStdout ? 2 : 'inherit'];
}

// The default run: one tracer session.
async function runOneSession(plan, ctx) {
  const { spec, args, target } = ctx;
  let session = null;
  // The traced PID while it lives (-c: once the tracer has forked the command), else null.
  const targetPid = () => {
    target.learn(session);
    return target.alive() ? target.pid : null;
  };
  const snaps = spec.snapshots
    ? new TargetSnapshots(targetPid,
      { perfMap: Boolean(spec.snapshots.perfMap), threads: Boolean(spec.snapshots.threads) }) : null;
  ctx.snapshots = snaps;
  const startSnapshots = () => snaps.start(spec.snapshots.everyMs ? spec.snapshots.everyMs(plan) : undefined);
  let watch = null;
  session = new TracerSession(plan, {
    durationSeconds: args.duration,
    stdio: commandStdio(plan, spec.dataOnStdout ? spec.dataOnStdout(args) : false),
    // bpftrace -c forks the command and lets it exec only once its probes
    // are attached: with -o (no attach notice), that is the sign. (dtrace
    // -c execs it at once, stopped: its program's ready line, in the file,
    // tells.)
    readyWhen: plan.command && plan.outputFile && plan.tracer.name === 'bpftrace' ? () => session.commandPid() !== null : undefined,
    // -c: the command's memory map is read from its start, not from the
    // ready line: dtrace -c lets it run once its probes are enabled, and the
    // line reaches its output file later (the pool mix had run and exited
    // 150 ms before, its work all bare addresses).
    onSpawn: () => { if (snaps && plan.command) startSnapshots(); },
    onReady: () => {
      if (snaps) startSnapshots();
      // -p: the target's exit ends the trace, as the help says (a tracer
      // given the PID only as an argument would go on, and a new process
      // could take the PID).
      if (target.pid && !plan.command) {
        watch = setInterval(() => { if (!target.alive()) session.end('target exited'); }, TARGET_CHECK_MS);
      }
    },
    // A program with a window prints its report before its probes are
    // detached: the report is printed then (runTraceCommand).
    onReport: ctx.onReport,
    // --prometheus: the live dumps go to the endpoint, never to the report.
    ...(ctx.live && ctx.live.takeLine ? { takeLine: ctx.live.takeLine } : {}),
    ...(spec.sessionOptions ? spec.sessionOptions(plan, args, { targetPid }) : {}),
  });
  try {
    const result = await session.run();
    return { result, abnormal: () => abnormalEnd(result, plan) };
  } finally {
    clearInterval(watch);
    if (snaps) snaps.stop();
  }
}

/**
 * Runs a tracing command.
 * @param {object} args the parsed command line (duration, dryRun, backend, json...)
 * @param {object} spec
 * @param {string} spec.name the command, for messages ("nodetrace <name>")
 * @param {function(args, tracer): object} spec.plan the plan (lib/tracer/plan.js planTracer's result)
 * @param {function(object, object): object} spec.report prints the report from the run's result
 *        and the context; returns { gathered: boolean (anything to show?), mapsSeen (what the
 *        plan's details.boundedMaps held: lib/render/map-full.js, said here for every command) }
 * @param {function(args): object} [spec.tracer] the tracer (default: requireTracer(args.backend))
 * @param {function(args): string[]} [spec.outputFiles] files the report will write: checked before tracing
 * @param {function(args): boolean} [spec.dataOnStdout] our stdout carries data (a -c command's output goes to stderr)
 * @param {object} [spec.snapshots] { perfMap, threads, everyMs(plan) }: keep snapshots of the target's memory map
 *   (and with `threads`, who its threads are: lib/threads/identify.js)
 * @param {function(plan, args, { targetPid }): object} [spec.sessionOptions] more TracerSession options
 *        (targetPid(): the traced PID while it lives, null before -c's command is forked and once it exits)
 * @param {function(plan, ctx): Promise<{result, abnormal}>} [spec.run] another way to run the plan
 *        (http: its library follower); default: one tracer session
 * @param {string} [spec.incomplete] said after an abnormal end (default 'the results are incomplete')
 * @param {function(plan, args): string} [spec.dryRun] the dry run's text (default: renderPlan)
 * @param {object|function(plan): object} [spec.liveMetrics] with args.prometheus: { read(dump), render(parsed,
 *        { labels, state }) } (lib/prometheus/live.js), served once the plan is made; its program prints the dumps
 */
async function runTraceCommand(args, spec) {
  const tracer = spec.tracer ? spec.tracer(args) : requireTracer(args.backend);
  // Root first: planning reads the target's memory map and mapped files,
  // other users' probe libraries: unreadable otherwise, which would read as
  // "not found".
  if (!args.dryRun) requireRoot(`nodetrace ${spec.name}`);
  const plan = spec.plan(args, tracer);
  if (args.dryRun) {
    process.stdout.write(spec.dryRun ? spec.dryRun(plan, args) : renderPlan(plan));
    return;
  }
  // A report that could not be written is refused now, not after the trace.
  for (const file of spec.outputFiles ? spec.outputFiles(args) : []) checkOutputFile(file);
  for (const w of plan.warnings || []) process.stderr.write(safeText(`nodetrace: ${w}`) + '\n');
  // Who else takes this trace's probe hits, said before attaching.
  const neighbours = neighbourWarning(plan, payingNeighbours(plan));
  if (neighbours) process.stderr.write(`nodetrace: ${neighbours}\n`);
  const target = new TracedProcess(plan);
  // The endpoint listens only now that the target is planned: a command
  // that cannot trace must never have said it serves.
  const live = spec.liveMetrics && args.prometheus !== undefined
    ? await serveLive(args.prometheus, plan, typeof spec.liveMetrics === 'function' ? spec.liveMetrics(plan) : spec.liveMetrics) : null;
  try {
    return await traceAndReport(plan, { args, spec, tracer, target, live });
  } finally {
    if (live) await live.close();
  }
}

async function traceAndReport(plan, { args, spec, tracer, target, live }) {
  const ctx = { args, spec, tracer, plan, target, live, snapshots: null, wallMinusMonoNs: wallMinusMonoNs() };
  // The report, printed once: as soon as the program's own is complete (a
  // window, lib/tracer/session.js: before the tracer detaches its probes,
  // which takes seconds on bpftrace 0.17 with a large node binary), else
  // once the tracer has exited.
  const deliver = (result, broken) => {
    // -p's target gone before the end (a -c command ends the trace by exiting: that is no news).
    const exited = Boolean(target.pid) && !plan.command && !target.alive();
    if (exited && !broken) process.stderr.write(`nodetrace: PID ${target.pid} exited; here is what was gathered.\n`);
    const reported = spec.report(result, { ...ctx, broken, exited }) || {};
    // Maps of the program that filled (bpftrace drops the rest without a word).
    for (const line of mapFullLines(plan.details && plan.details.boundedMaps, reported.mapsSeen)) {
      process.stderr.write(safeText(`nodetrace: ${line}`) + '\n');
    }
    return reported;
  };
  let early = null;
  ctx.onReport = (result) => {
    // (Called from the tracer's output: a failure is thrown once it has exited.)
    try { early = outputClosed() ? {} : deliver(result, null); } catch (err) { early = { error: err }; }
  };
  const run = await (spec.run || runOneSession)(plan, ctx);
  const { result } = run;
  try {
    if (!result.ready && result.endReason === null) throw describeTracerFailure(tracer, result, target.pid
      || undefined);
    if (!result.ready || outputClosed()) return;   // Ctrl-C before the probes were in place, or `| head` closed our output
    const broken = run.abnormal();
    if (early) {
      if (early.error) throw early.error;
      // The report was whole; what went wrong came after it.
      if (broken) throw new UserError(`${broken}, after it printed its report (above, complete).`);
      return;
    }
    const { gathered } = deliver(result, broken);
    if (broken) {
      throw new UserError(`${broken}; ${spec.incomplete || 'the results are incomplete'}${gathered ? ' (above: what it gathered)' : ''}.`);
    }
  } finally {
    if (ctx.snapshots) ctx.snapshots.release();
  }
}

module.exports = { runTraceCommand, runOneSession, commandStdio, TracedProcess, TARGET_CHECK_MS };
