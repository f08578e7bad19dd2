'use strict';
// nodetrace snoop: bunyan log records of live Node processes, including the
// debug records their log level drops, from bunyan's USDT probes, formatted
// by bunyan itself: the article's `bunyan -p`, on DTrace or bpftrace.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { UserError } = require('../errors');
const proc = require('../proc');
const { requireRoot } = require('../privilege');
const { requireTracer, INSTALL_HINT } = require('../tracer/detect');
const { tracerArgs, readScript, scriptPath, displayCommand } = require('../tracer/programs');
const { runTracer, resendEveryMsFor } = require('../tracer/session');
const { describeTracerFailure } = require('../tracer/failure');
const { resolveTargets, parseTarget, LibraryWatch } = require('../snoop/targets');
const { parseLevel, levelName, bpftraceProbeSlots, dtraceProbeGlob } = require('../snoop/levels');
const { LineSplitter, Reassembler, parseLine } = require('../snoop/reassemble');
const { lineFor, summary } = require('../snoop/format');
const { createSink, OUTPUT_MODES } = require('../snoop/sink');

const SCRIPT = 'log-snoop';
// d-scripts/log-snoop.bt filters on up to 8 PIDs ($8..$15) and log-snoop.d
// takes up to 8 providers; with more, every bunyan process is traced and
// the others' records are dropped here.
const PID_SLOTS = 8;
// bpftrace 0.17 caps str() at BPFTRACE_STRLEN bytes (default 64, max 200).
const BPFTRACE_ENV = Object.freeze({ BPFTRACE_STRLEN: '200' });
// Lines the scripts print that are not news.
// How often snoop '*' looks for probe libraries that appeared since it began.
const WATCH_EVERY_MS = 2000;
// The records stream to the terminal: no redrawn status line.
const NO_STATUS = { isTTY: false, write() {} };
const QUIET = [/^Attaching \d+ probes?\.\.\.$/, /^Tracing ended\.$/, /^Snooping bunyan records\.\.\. Hit Ctrl-C to end\.$/, /^@\w+: /];

function builder(y) {
  return y
    .usage('$0 snoop <target> [options]\n\n'
      + 'Show the bunyan log records of live Node processes as they are logged, including the\n'
      + 'debug and trace records their log level drops, from bunyan\'s USDT probes: no restart,\n'
      + 'no change to their logs. <target> is \'*\' (every process with bunyan probes, including\n'
      + 'ones started later), PIDs (4242 or 4242,4343), or text found in their command lines.\n'
      + 'On Linux, processes need nodetrace\'s USDT provider: node -r nodetrace/register app.js')
    .positional('target', { type: 'string', describe: '\'*\', PID[,PID...] or part of a command line' })
    .option('level', { alias: 'l', type: 'string', describe: 'Only this level and above (trace, debug, info, warn, error, fatal or 10-60); only those probes are enabled' })
    .option('output', { alias: 'o', type: 'string', describe: 'bunyan\'s output mode: long (default), short, simple, json, json-N, bunyan, inspect' })
    .option('json', { type: 'boolean', default: false, describe: 'Raw JSON lines, one record per line (records too long for the tracer become a {"nodetrace":"truncated",...} line)' })
    .option('color', { type: 'boolean', describe: 'Colour (default: when stdout is a terminal); --no-color to turn it off' })
    .option('duration', { alias: 'd', type: 'number', describe: 'Stop after this many seconds (default: Ctrl-C)' })
    .option('backend', { choices: ['dtrace', 'bpftrace'], describe: 'Tracer to use (default: bpftrace on Linux; elsewhere dtrace)' })
    .option('dry-run', { alias: 'n', type: 'boolean', default: false, describe: 'Print the tracer command line and program, and exit' })
    .check((a) => {
      if (a.duration !== undefined && !(Number.isInteger(a.duration) && a.duration > 0)) {
        throw new Error('-d expects a whole number of seconds greater than 0.');
      }
      if (a.output !== undefined && !OUTPUT_MODES.test(a.output)) {
        throw new Error(`-o expects one of bunyan's output modes: long, short, simple, json, json-N, bunyan, inspect (not "${a.output}").`);
      }
      if (a.json && a.output !== undefined) throw new Error('--json prints raw JSON lines; it does not go with -o.');
      return true;
    })
    .example('sudo $0 snoop \'*\'', 'every Node process with bunyan probes, including ones started later')
    .example('sudo $0 snoop 4242', 'one process; several: 4242,4343')
    .example('sudo $0 snoop my-service', 'processes whose command line contains "my-service"')
    .example('sudo $0 snoop \'*\' -l warn', 'only warn and above (only those probes are enabled)')
    .example('sudo $0 snoop \'*\' -o short', 'bunyan\'s short output; --json for raw JSON lines')
    .example('$0 snoop 4242 -n', 'show exactly what would be loaded into the kernel');
}

function levelPhrase(minLevel) {
  return minLevel <= 10 ? 'all levels' : `${levelName(minLevel)} and up`;
}

/**
 * The tracer invocation for resolved targets. Pure but for the symlink
 * directory name it is given.
 * -> { argv, env, userFilter: bool, linkTargets: string[] (for linkDir) }
 * libraryArg: the probe library path, or `${linkDir}/*.so` when several
 * libraries are linked from linkDir (bpftrace takes one path, but globs it).
 */
function buildPlan(tracer, targets, minLevel, { linkDir } = {}) {
  const userFilter = targets.kind === 'pids' && targets.pids.length > PID_SLOTS;
  const slotPids = targets.kind === 'pids' && !userFilter ? targets.pids : [];
  if (tracer.name === 'bpftrace') {
    const libs = targets.libraries;
    const libraryArg = libs.length === 1 ? libs[0] : path.join(linkDir || '<dir>', '*.so');
    const macros = [libraryArg, ...bpftraceProbeSlots(minLevel)];
    if (slotPids.length) macros.push(...slotPids, ...Array(PID_SLOTS - slotPids.length).fill(0));
    // One process: -p as well, so that only its probes are enabled (attaching
    // by path alone enables them in every process mapping the library).
    const pid = slotPids.length === 1 ? slotPids[0] : undefined;
    return {
      argv: tracerArgs(tracer, { script: SCRIPT, pid, macros }),
      env: BPFTRACE_ENV,
      userFilter,
      linkTargets: libs.length > 1 ? libs : [],
    };
  }
  const glob = dtraceProbeGlob(minLevel);
  const macros = slotPids.length ? [slotPids[0], glob, ...slotPids.slice(1)] : ['*', glob];
  return { argv: tracerArgs(tracer, { script: SCRIPT, macros }), env: {}, userFilter, linkTargets: [] };
}

function makeLinkDir(libraries) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-snoop-'));
  libraries.forEach((lib, i) => fs.symlinkSync(lib, path.join(dir, `${i}.so`)));
  return dir;
}

function removeLinkDir(dir) {
  if (!dir) return;
  try { fs.rmSync(dir, { recursive: true, force: true }); } catch (err) { /* best effort */ }
}

function envPrefix(env) {
  return Object.entries(env).map(([k, v]) => `${k}=${v} `).join('');
}

function dryRun(tracer, targets, plan, minLevel) {
  let text = `# ${tracer.name} ${tracer.version} would run (${targets.describe}, ${levelPhrase(minLevel)}):\n`
    + envPrefix(plan.env) + displayCommand(tracer.path, plan.argv) + '\n';
  if (plan.linkTargets.length) {
    text += `# where <dir> is a private temporary directory of links to the ${plan.linkTargets.length} bunyan probe libraries:\n`
      + plan.linkTargets.map((l, i) => `#   ${i}.so -> ${l}\n`).join('');
  }
  if (plan.userFilter) text += `# (more than ${PID_SLOTS} processes: the others' records are dropped by nodetrace)\n`;
  for (const note of targets.notes) text += `# ${note}\n`;
  text += `# program (${scriptPath(SCRIPT, tracer.name)}):\n${readScript(SCRIPT, tracer.name)}`;
  process.stdout.write(text);
}

// On Linux, bunyan's probes are stapsdt USDT probes (lib/usdt), which
// bpftrace sees and DTrace for Linux does not: prefer bpftrace there.
function chooseTracer(backend) {
  if (backend || process.platform !== 'linux') return requireTracer(backend);
  try {
    return requireTracer('bpftrace');
  } catch (err) {
    throw new UserError('snoop needs bpftrace on Linux: bunyan\'s probes there are USDT probes in the '
      + 'stapsdt format, which DTrace for Linux does not see.', { hint: INSTALL_HINT });
  }
}

async function handler(args) {
  const tracer = chooseTracer(args.backend);
  const minLevel = parseLevel(args.level);
  const outputMode = args.json ? 'raw' : (args.output || 'long');
  parseTarget(args.target);   // syntax errors first
  // Root before looking: other users' /proc/PID/maps and probe-library
  // directories are unreadable without it, which would read as "no probes".
  if (!args.dryRun) requireRoot('nodetrace snoop');
  const targets = resolveTargets(args.target, tracer.name, { create: !args.dryRun });
  if (args.dryRun) {
    dryRun(tracer, targets, buildPlan(tracer, targets, minLevel), minLevel);
    return;
  }

  let linkDir = null;
  try {
    if (tracer.name === 'bpftrace' && targets.libraries.length > 1) linkDir = makeLinkDir(targets.libraries);
    const plan = buildPlan(tracer, targets, minLevel, { linkDir });
    await snoop(args, tracer, targets, plan, minLevel, outputMode);
  } finally {
    removeLinkDir(linkDir);
  }
}

async function snoop(args, tracer, targets, plan, minLevel, outputMode) {
  for (const note of targets.notes) process.stderr.write(`nodetrace: ${note}\n`);
  const sink = createSink(outputMode, { color: args.color });
  const reassembler = new Reassembler();
  const only = plan.userFilter ? new Set(targets.pids) : null;
  const pidMode = targets.kind === 'pids';
  let child = null;
  const children = [];    // every tracer's process: the main one, then followers
  const followers = [];   // { library, end, done }: tracers of libraries that appeared later
  let refused = null;
  let lostNotedAt = 0;
  let lostSinceNote = 0;
  let exitedNote = null;
  let outputClosed = false;

  // Ends the trace the way Ctrl-C does (runTracer repeats itself until
  // bpftrace, which 0.17 sometimes does not hear, has ended).
  let endTrace = null;
  let endRequested = false;
  const stop = () => {
    endRequested = true;
    if (endTrace) endTrace();
    for (const f of followers) if (f.end) f.end();
  };

  const handle = (events) => {
    for (const ev of events) {
      if (ev.type === 'record' || ev.type === 'truncated') {
        if (only && !only.has(ev.pid)) continue;
        const line = lineFor(ev, outputMode);
        // Back-pressure: stop reading the tracer; its buffer then drops
        // records (and says so) rather than slowing the traced process.
        if (line !== null && !sink.write(line)) for (const c of children) if (c.stdout) c.stdout.pause();
      } else if (ev.type === 'lost') {
        lostSinceNote += ev.events;
        const now = Date.now();
        if (now - lostNotedAt >= 2000) {
          process.stderr.write(`nodetrace: the tracer is dropping records: it could not keep up (${lostSinceNote} events lost just now).\n`);
          lostNotedAt = now;
          lostSinceNote = 0;
        }
      } else if (ev.type === 'error') {
        refused = ev.message;
      } else if (ev.type === 'other' && !QUIET.some((re) => re.test(ev.line))) {
        process.stderr.write(`${tracer.name}: ${ev.line}\n`);
      }
    }
  };

  // Each tracer's output is cut into lines on its own: the chunks of two
  // tracers interleave.
  const lineReader = () => {
    const splitter = new LineSplitter();
    const take = (lines) => { for (const line of lines) handle(reassembler.push(parseLine(line), Date.now())); };
    return { push: (chunk) => take(splitter.push(chunk)), end: () => take(splitter.end()) };
  };

  sink.on('drain', () => { for (const c of children) if (c.stdout) c.stdout.resume(); });
  sink.on('closed', () => { outputClosed = true; stop(); });

  // snoop '*' (bpftrace attaches by library path): a library that appears
  // later, made by some user's first bunyan process, gets its own tracer.
  const watch = targets.kind === 'all' && tracer.name === 'bpftrace' ? new LibraryWatch(targets.libraries) : null;
  let lastWatchAt = Date.now();
  const follow = (library) => {
    const followerPlan = buildPlan(tracer, { kind: 'all', pids: [], libraries: [library] }, minLevel);
    const lines = lineReader();
    const f = { library, end: null };
    f.done = runTracer({
      file: tracer.path,
      args: followerPlan.argv,
      env: followerPlan.env,
      statusStream: NO_STATUS,
      onStdout: lines.push,
      resendEveryMs: resendEveryMsFor(tracer.name),
      onReady: (c, end) => {
        children.push(c);
        f.end = end;
        if (endRequested) end();
        else process.stderr.write(`nodetrace: also snooping ${library}, a bunyan probe library that appeared since.\n`);
      },
    }).then((r) => {
      lines.end();
      if (!r.ready && !endRequested) {
        process.stderr.write(`nodetrace: could not snoop ${library}: ${r.errors.find(Boolean) || 'the tracer failed'}\n`);
      }
    }, (err) => {
      process.stderr.write(`nodetrace: could not snoop ${library}: ${err.message}\n`);
    });
    followers.push(f);
  };

  const timer = setInterval(() => {
    handle(reassembler.expire(Date.now()));
    if (watch && child && !endRequested && Date.now() - lastWatchAt >= WATCH_EVERY_MS) {
      lastWatchAt = Date.now();
      for (const library of watch.newLibraries()) follow(library);
    }
    if (pidMode && child && !exitedNote && !targets.pids.some((pid) => proc.isRunning(pid))) {
      exitedNote = targets.pids.length === 1 ? `PID ${targets.pids[0]} exited.` : 'every snooped process has exited.';
      stop();
    }
  }, 1000);

  const mainLines = lineReader();
  let result;
  try {
    result = await runTracer({
      file: tracer.path,
      args: plan.argv,
      durationSeconds: args.duration,
      describe: targets.describe,
      statusStream: NO_STATUS,
      onStdout: mainLines.push,
      env: plan.env,
      resendEveryMs: resendEveryMsFor(tracer.name),
      onReady: (c, end) => {
        child = c;
        children.push(c);
        endTrace = end;
        if (outputClosed || endRequested) stop();
        process.stderr.write(`nodetrace: snooping bunyan records (${levelPhrase(minLevel)}) of ${targets.describe} `
          + `with ${tracer.name} ${tracer.version}; Ctrl-C to stop.\n`);
      },
    });
  } finally {
    clearInterval(timer);
    stop();
    await Promise.all(followers.map((f) => f.done));
  }
  mainLines.end();
  handle(reassembler.finish());
  await sink.end();

  if (!result.ready && !result.interrupted) {
    if (refused) throw new UserError(refused);
    if (pidMode && targets.pids.length === 1 && !proc.isRunning(targets.pids[0])) {
      throw describeTracerFailure(tracer, result, targets.pids[0]);
    }
    throw describeTracerFailure(tracer, result);
  }
  if (outputClosed) return;
  // DTrace reports drops on stderr ("dtrace: 3 drops on CPU 0").
  for (const line of result.errors) {
    const p = parseLine(line.trim());
    if (p.kind === 'lost') reassembler.push(p);
  }
  if (!exitedNote && pidMode && !targets.pids.some((pid) => proc.isRunning(pid))) {
    exitedNote = targets.pids.length === 1 ? `PID ${targets.pids[0]} exited.` : 'every snooped process has exited.';
  }
  if (exitedNote) process.stderr.write(`nodetrace: ${exitedNote}\n`);
  process.stderr.write(summary(reassembler.stats, {
    lostRecords: reassembler.lostRecords(), lostEvents: reassembler.stats.lostEvents,
  }) + '\n');
}

module.exports = {
  command: 'snoop <target>',
  describe: 'Show bunyan log records of live processes, including the debug records their level drops',
  builder,
  handler,
  buildPlan,
  PID_SLOTS,
};
