'use strict';
// nodetrace profile: where a live Node process spends its CPU, from on-CPU
// samples of its threads, without restarting it (Node's own answer, --prof,
// needs a restart and shows nothing until the process ends). A report like
// `node --prof-process`, and a flame graph, folded stacks or pprof.
const { listed } = require('./list');
const { UserError } = require('../errors');
const proc = require('../proc');
const { planTracer, readScript } = require('../tracer/plan');
const { rawUserStackEnv, mapKeysEnv, mapKeysFor, walksUserStacks } = require('../tracer/capabilities');
const { userStackBound } = require('../render/map-full');
const { instantiateSlot, declaredSlot, withoutOptional } = require('../tracer/template');
const { runTraceCommand } = require('../tracer/run-command');
const { argumentReference } = require('../tracer/program-arguments');
const { parseProfile, parseProfileDtrace, parseOffCpu, withoutUserStack } = require('../profile/parse');
const { summarizeOffCpu, renderOffCpuText, renderOffCpuJson } = require('../profile/offcpu-report');
const { nameStacks } = require('../profile/name-stacks');
const { resolveCommand } = require('../tracer/command-target');
const { targetOptions, checkTarget } = require('../targets/options');
const { oneProcess } = require('../targets/one-process');
const { summarize, renderText, renderJson } = require('../profile/report');
const { renderFolded } = require('../profile/folded');
const { writeOutputFile } = require('../output-file');
const {
  STDOUT, durationOption, checkDuration, dryRunOption, outputFileOption, checkOutputFiles, sourceMapsOption,
  jsonOption, backendOption,
} = require('./common-options');
const { describeIdentity, identityJson } = require('../proc/container');
const { jsFramesLayout, commandJsFramesLayout, jsFramesSession } = require('../profile/js-frames');
const { splitAtEndMarker } = require('../tracer/output-formats');
const { tracedSpanMs } = require('../tracer/session');
const { threadLabel } = require('../threads/roles');

// On-CPU samples, or (--off-cpu) time blocked; the program argument that
// is the PID ($N), which -c replaces with bpftrace's cpid.
const SCRIPTS = {
  cpu: { script: 'profile', pidArgument: argumentReference('profile.bt', 'PID') },
  // JavaScript frames named with no flag: the SharedFunctionInfo of each
  // (lib/profile/js-frames.js); on bpftrace where the V8 is known.
  js: { script: 'profile-js', pidArgument: argumentReference('profile-js.bt', 'PID') },
  off: { script: 'offcpu', pidArgument: argumentReference('offcpu.bt', 'PID') },
};
const DEFAULT_HZ = 99;
const MAX_HZ = 999;
// Distinct (thread, stack) pairs the tracer keeps: 99 Hz on 8 busy threads
// for 80 s gives that many samples at most; bpftrace's default is 4,096.
const MAP_KEYS_MAX = 65536;
// Where profile-js.bt keeps the user stacks itself (capabilities.js
// walksUserStacks): a key per frame, a stack's frames above the last it
// shares (counted from the leaf) with one already kept. profile
// -F 999 of 4,096 stacks 13 deep (test/targets/profile-many-stacks.js)
// put 63,786 in it in 8 s. bpftrace 0.17 sizes every map alike and
// preallocates them: 262,144 keys took 193 MB of locked memory (the maps'
// fdinfo), so 131,072 about 97 MB against 43 MB at 65,536, beside the
// 136 MB of its map of ustacks, there still for stacks deeper than the
// walk.
const WALKED_MAP_KEYS_MAX = 131072;
// bpftrace's output with -c, in the run's private directory: the command
// shares its stdout.
const OUTPUT_FILE = 'bpftrace.out';
// How often -c's program prints the SharedFunctionInfos it captured (-p: every second).
const COMMAND_PRINT = 'interval:ms:200';
// The report's other forms, each to a file or (one of them) to our stdout
// instead of the report.
const OUTPUT_FLAGS = ['folded', 'svg', 'pprof'];

function builder(y) {
  targetOptions(y.usage('$0 profile (<target> | -p PID | -c COMMAND) [options]\n\n'
      + 'Where a live Node process spends its CPU: samples its threads on CPU, then prints the\n'
      + 'functions that took the most samples (self and total), the split between JavaScript,\n'
      + 'V8, Node\'s C++, add-ons, libc and the kernel, and which threads took them.\n'
      + 'JavaScript functions are named from V8\'s own metadata (no flag needed; every thread;\n'
      + 'with -c, that of the command\'s executable), and from the perf map where node runs with\n'
      + '--perf-basic-prof. A name is text found in the command line of one Node process\n'
      + '(several: they are listed, busiest first).'),
  { command: true, force: true });
  return y
    .option('frequency', { alias: 'F', type: 'number', default: DEFAULT_HZ, describe: `Samples a second on each CPU (1 to ${MAX_HZ})` })
    .option('duration', durationOption('Stop after this many seconds (default: Ctrl-C or target exit)'))
    .option('json', jsonOption())
    .option('top', { type: 'number', default: 15, describe: 'How many functions each table lists' })
    .option('folded', outputFileOption('Also write folded stacks (flamegraph.pl, inferno, speedscope) to FILE'))
    .option('svg', outputFileOption('Also write a flame graph (self-contained SVG, searchable, click to zoom) to FILE'))
    .option('pprof', outputFileOption('Also write a gzip\'d pprof profile (go tool pprof, Pyroscope, speedscope) to FILE'))
    .option('v8-frames', { type: 'boolean', default: true, describe: 'Name JavaScript frames from V8\'s own metadata, no flag needed on the target (--no-v8-frames: from its perf map only)' })
    .option('source-maps', sourceMapsOption())
    .option('off-cpu', { type: 'boolean', default: false, describe: 'Where the main thread waits instead: time blocked (system calls, locks, sync fs calls) by stack' })
    .option('all-threads', { type: 'boolean', default: false, describe: 'With --off-cpu: every thread, not only the main one (pool threads mostly wait for work)' })
    .option('backend', backendOption())
    .option('dry-run', dryRunOption())
    .check((a) => {
      checkTarget(a, { command: true });
      checkDuration(a);
      if (!(Number.isInteger(a.frequency) && a.frequency >= 1 && a.frequency <= MAX_HZ)) {
        throw new Error(`-F expects a whole number of samples a second from 1 to ${MAX_HZ} (99 is usual).`);
      }
      if (!(Number.isInteger(a.top) && a.top >= 1)) throw new Error('--top expects a whole number from 1.');
      if (a.allThreads && !a.offCpu) throw new Error('--all-threads goes with --off-cpu (on-CPU samples cover every thread already).');
      checkOutputFiles(a, OUTPUT_FLAGS, { binary: ['pprof'] });
      return true;
    })
    .example('sudo $0 profile -p 4242 -d 10', 'sample for 10 seconds, then print the report')
    .example('sudo $0 profile my-service -d 10', 'the one Node process whose command line contains "my-service"')
    .example("sudo $0 profile -c 'node app.js'", 'start the command and profile it until it exits')
    .example('sudo $0 profile -p 4242 -d 10 --svg cpu.svg', 'the report, and a flame graph to open in a browser')
    .example('sudo $0 profile -p 4242 -d 10 --folded - > cpu.folded', 'folded stacks for flamegraph.pl, inferno or speedscope')
    .example('sudo $0 profile -p 4242 --pprof cpu.pb.gz', 'until Ctrl-C; then: go tool pprof -top cpu.pb.gz')
    .example('sudo $0 profile -p 4242 -d 10 --off-cpu', 'where its main thread waited, blocked, instead of where it ran')
    .example('$0 profile -p 4242 -n', 'show exactly what would be loaded into the kernel, and how');
}

/**
 * The tracer run for these arguments. Pure but for checking that the
 * process exists and is Node (finding it by name), and for finding -c's
 * binary on the PATH.
 */
function plan(args, tracer) {
  const hz = args.frequency === undefined ? DEFAULT_HZ : args.frequency;
  const bpftrace = tracer.name === 'bpftrace';
  const { script } = SCRIPTS[args.offCpu ? 'off' : 'cpu'];
  if (args.offCpu && !bpftrace) {
    throw new UserError('--off-cpu runs on bpftrace only for now: nodetrace does not read offcpu.d\'s output yet.',
      { hint: 'Use --backend bpftrace, or run the D script by hand: dtrace -s d-scripts/offcpu.d -p PID 0' });
  }
  // The bpftrace program's arguments given the PID (0 with -c).
  const argsWith = (target) => (args.offCpu ? { PID: target, ALL: args.allThreads ? 1 : 0 } : { HZ: hz, PID: target });
  const o = { script, details: { hz }, warnings: [] };
  // JavaScript frames from V8's metadata where it is known: the program
  // captures each frame's SharedFunctionInfo (profile-js.bt; offcpu.bt
  // walks each wait's frames itself when given SHARED).
  const withJsFrames = (js, pid) => {
    if (js.note) { o.warnings.push(js.note); return; }
    // (CODE: each frame's code too, where what it inlined can be read back.)
    if (args.offCpu) o.args = { ...o.args, SHARED: js.shared, ...js.codeArguments };
    else {
      o.script = SCRIPTS.js.script;
      o.args = { HZ: hz, PID: pid, SHARED: js.shared, ...js.codeArguments };
    }
    // -c: what the command's process is checked against once it runs.
    o.details.jsFrames = { v8: js.v8, sourceMaps: args.sourceMaps !== false,
      ...(js.binary ? { command: { binary: js.binary, shared: js.shared, codeArguments: js.codeArguments } } : {}) };
  };
  if (args.command !== undefined) {
    const resolved = resolveCommand(args.command);
    o.command = resolved.command;
    o.describe = `"${args.command}"`;
    o.args = bpftrace ? argsWith(0) : { HZ: hz };
    if (bpftrace) {
      // Its executable's V8, read before it starts (the process, once it
      // runs, is checked to agree: lib/profile/js-frames.js).
      if (args.v8Frames !== false) withJsFrames(commandJsFramesLayout(resolved.binary), 0);
      // The child's PID is known only to bpftrace, as `cpid` (the PID's argument goes unused).
      const text = readScript(o.script, 'bpftrace');
      const { pidArgument } = Object.values(SCRIPTS).find((x) => x.script === o.script);
      o.programText = instantiateSlot(text, 'TARGET', declaredSlot(text, 'TARGET').split(pidArgument).join('cpid'),
        'instantiated by nodetrace profile -c: the command\'s own process only');
      // Its captures printed (and named) more often: once it exits, what
      // was captured since the last print can no longer be named.
      if (o.details.jsFrames) o.programText = instantiateSlot(o.programText, 'PRINT', COMMAND_PRINT);
    }
    // The command inherits the tracer's stdout: the tracer writes to a
    // file, read as it grows (lib/tracer/run-command.js says how each
    // tracer's readiness is told).
    o.outputFile = OUTPUT_FILE;
  } else {
    const { pid, note, who } = oneProcess(args, { command: 'profile', verbing: 'profiling' });
    o.describe = describeIdentity(who);
    o.target = { pid };
    o.details.process = who;
    if (note) o.warnings.push(note);
    // The PID is a program argument: 0.17's -p does not filter profile probes.
    if (bpftrace) o.args = argsWith(pid);
    else Object.assign(o, { pid, args: { HZ: hz } });
    if (bpftrace && args.v8Frames !== false) withJsFrames(jsFramesLayout(pid), pid);
  }
  if (bpftrace) {
    // Where bpftrace's map of user stacks would lose some, profile-js.bt
    // keeps them itself (its WALK slot): no stack lost to another's bucket.
    // Elsewhere its @walk part is left out: compiled, dead, it took bpftrace
    // 0.17 twice as long to compile the program (3.4 s against 1.4 s, load 12).
    const walked = o.script === SCRIPTS.js.script && walksUserStacks(tracer);
    if (o.script === SCRIPTS.js.script) {
      const text = o.programText !== undefined ? o.programText : readScript(o.script, 'bpftrace');
      if (walked) {
        o.programText = instantiateSlot(text, 'WALK', '#define WALK_USER_STACK 1',
          'instantiated by nodetrace profile: the user stacks walked, as this bpftrace keeps no stack whose bucket another holds');
        o.details.walkedStacks = true;
      } else {
        o.programText = withoutOptional(text, 'walk', 'instantiated by nodetrace profile: user stacks from ustack, the walk\'s part left out');
        o.without = ['walk'];
      }
    }
    // Raw stacks: bpftrace would read the perf map itself, following links
    // (out of a container's root, too) and blocking on a FIFO planted there.
    const keys = mapKeysFor(walked ? WALKED_MAP_KEYS_MAX : MAP_KEYS_MAX);
    o.env = { ...rawUserStackEnv(tracer), ...mapKeysEnv(tracer, keys) };
    // A full map drops new stacks without a word (lib/render/map-full.js).
    o.details.boundedMaps = [{ map: args.offCpu ? '@offcpu_us' : samplesMap(walked), keys, what: 'distinct stacks',
      lost: args.offCpu ? 'the waits of stacks past it were not counted' : 'samples of stacks past it were dropped',
      raise: `trace for less time${args.offCpu ? '' : ' or at a lower -F'}` }];
    // bpftrace's own map of user stacks, before 0.25 (lib/render/map-full.js):
    // --off-cpu sums the waits by stack, so what is lost is their time.
    // The walk's instead, where it keeps them: a stack whose frames did not
    // all fit is a sample without one.
    if (walked) {
      o.details.boundedMaps.push({ map: WALKED_FRAMES_MAP, keys, what: 'stack frames',
        lost: 'samples whose stack did not fit are counted, as "[no stack]"', raise: 'trace for less time or at a lower -F' });
    }
    // (Walked, a stack deeper than the walk's 64 frames is still ustack's.)
    const stackMap = args.offCpu ? userStackBound(tracer, 'trace for less time', 'us')
      : userStackBound(tracer, 'trace for less time or at a lower -F');
    if (stackMap) o.details.boundedMaps.push(stackMap);
    o.notes = ['user frames stay addresses (raw stacks): nodetrace names them, reading the perf map safely inside the process\'s own root'];
  }
  return planTracer(tracer, o);
}

// The map of samples by stack: profile-js.bt's walked one where it keeps
// the user stacks itself (d-scripts/profile-js.bt, WALK).
const samplesMap = (walked) => (walked ? '@walked_samples' : '@samples');
const WALKED_FRAMES_MAP = '@user_frames';

// The files the report is also written to.
function outputFiles(args) {
  return OUTPUT_FLAGS.map((f) => args[f]).filter((file) => file !== undefined && file !== STDOUT);
}
const dataOnStdout = (a) => a.json || OUTPUT_FLAGS.some((f) => a[f] === STDOUT);

function report(result, { args, tracer, plan: p, target, snapshots }, run = {}) {
  const pid = target.pid;
  // profile-js.bt's (and offcpu.bt's with SHARED) lines came through onLine (SFIs named as they came).
  if (run.lines) Object.assign(result, splitAtEndMarker(run.lines));
  const parsed = args.offCpu ? parseOffCpu(result.maps)
    : tracer.name === 'dtrace' ? parseProfileDtrace(result.maps) : parseProfile(result.maps, p.script);
  // DTrace keys threads by ID only: they are the process's threads.
  const comm = (pid && proc.processName(pid)) || 'node';
  for (const s of parsed.stacks) if (!s.comm) s.comm = comm;
  const named = nameStacks(parsed, snapshots.symbolizer, snapshots.latest, { js: run.js });
  // Each thread by what it is (lib/threads/identify.js), read from the
  // process while it ran; the main thread is the one whose TID is the PID.
  const identityOf = (tid) => snapshots.identityOf(tid) || (tid === pid ? { role: 'main' } : null);
  for (const s of named.stacks) s.thread = threadLabel(identityOf(s.tid));
  // The program's own clock where it keeps one (--off-cpu); else the
  // trace's length as every report says it (attach notice to the end
  // asked for), which the samples are of: the tracer's exit comes seconds
  // after the end (detaching, naming frames on 0.23+), and counted to it
  // the busy CPUs read 15-20% low against the target's own
  // process.cpuUsage() (-d 6: 7.0 to 7.2 s; test/oracle.test.js).
  const seconds = parsed.seconds || (tracedSpanMs(result) || result.endedAt - result.readyAt) / 1000;
  const meta = { pid, hz: args.offCpu ? null : p.details.hz, seconds, offCpu: args.offCpu };
  const who = p.details.process ? identityJson(p.details.process) : null;
  let summary;
  let text;
  if (args.offCpu) {
    summary = summarizeOffCpu(named,
      { pid, who, seconds, threads: parsed.threads, allThreads: args.allThreads, top: args.top, identityOf });
    text = () => (args.json ? renderOffCpuJson(summary) : renderOffCpuText(summary, { describe: p.describe }));
  } else {
    summary = summarize(named, { pid, who, hz: p.details.hz, seconds, top: args.top, identityOf });
    text = () => (args.json ? renderJson(summary) : renderText(summary, { describe: p.describe }));
  }
  const title = `${args.offCpu ? 'Off-CPU time' : 'CPU'} of ${p.describe}`;
  const render = {
    folded: () => renderFolded(named, meta),
    svg: () => require('../profile/svg').renderSvg(named, { ...meta, title, unit: args.offCpu ? 'us' : 'samples' }),
    pprof: () => require('../profile/pprof').encodePprof(named, meta),
  };
  // The one output named "-" takes stdout, instead of the report (checked in the builder).
  let onStdout = null;
  for (const flag of OUTPUT_FLAGS) {
    if (args[flag] === undefined) continue;
    if (args[flag] === STDOUT) onStdout = render[flag]();
    else writeOutputFile(args[flag], render[flag]());
  }
  process.stdout.write(onStdout === null ? text() : onStdout);
  const walked = Boolean(p.details.walkedStacks);
  // (The walk's frames: a full map is said from the keys it printed.)
  const walkedStacks = parsed.stacks.filter((s) => s.walked).length;
  return { gathered: Boolean(args.offCpu ? summary.blockedUs : summary.samples),
    mapsSeen: { [args.offCpu ? '@offcpu_us' : samplesMap(walked)]: { held: walked ? walkedStacks : parsed.stacks.length },
      ...(walked ? { [WALKED_FRAMES_MAP]: { held: parsed.userFrames } } : {}),
      ustack: { refused: withoutUserStack(parsed, { walked: false }) } } };
}

async function handler(args) {
  const run = {};   // this run's JavaScript frames: { js, lines }
  try {
    await runTraceCommand(args, {
      name: 'profile',
      plan,
      report: (result, ctx) => report(result, ctx, run),
      sessionOptions: (pl, a, t) => jsFramesSession(pl, run, t),
      outputFiles,
      incomplete: 'the profile is incomplete',
      // -c's command output goes to stderr where our stdout carries data.
      dataOnStdout,
      // A -c command's perf map can no longer be read once it exits: look
      // more often, so that code compiled near its end is named too.
      snapshots: { perfMap: true, threads: true, everyMs: (pl) => (pl.target ? 2000 : 500) },
    });
  } finally {
    if (run.js) run.js.close();
  }
}

module.exports = {
  ...listed('profile'),
  builder,
  handler,
  plan,
};
