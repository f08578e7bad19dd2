'use strict';
// nodetrace gc: how long V8's garbage collector pauses a live Node process,
// by kind (scavenge, mark-compact, incremental marking, weak callbacks), as
// histograms. No preparation: uprobes on V8's own functions, found in the
// process's node executable or libnode (lib/gc/v8-functions.js).
const { UserError, EXIT } = require('../errors');
const proc = require('../proc');
const { requireRoot } = require('../privilege');
const { requireTracer } = require('../tracer/detect');
const { planTracer, renderPlan, readScript } = require('../tracer/plan');
const { instantiateSlot } = require('../tracer/template');
const { TracerSession, abnormalEnd } = require('../tracer/session');
const { describeTracerFailure } = require('../tracer/failure');
const { locateGc } = require('../gc/v8-functions');
const { parseGc, renderGcText, renderGcJSON } = require('../gc/report');
const { durationOption, checkDuration, dryRunOption } = require('./common-options');

const SCRIPT = 'gc';
// bpftrace 0.17 attaches slowly to the large official node binaries, the
// more so the more uprobes (docs/platforms.md, "bpftrace 0.17 attaches slowly").
const ATTACH_TIMEOUT_MS = 180000;

function builder(y) {
  return y
    .usage('$0 gc -p PID [options]\n\n'
      + 'How long V8\'s garbage collector pauses a Node process, by kind: scavenges, mark-compact,\n'
      + 'incremental marking steps and weak callbacks, as histograms. The process needs no\n'
      + 'preparation (uprobes on V8\'s own functions).')
    .option('pid', { alias: 'p', type: 'string', describe: 'Trace this running Node process (all its threads)' })
    .option('duration', durationOption('Stop after this many seconds (default: Ctrl-C or target exit)'))
    .option('json', { type: 'boolean', default: false, describe: 'Print JSON instead of text (docs/json-format.md)' })
    .option('backend', { choices: ['dtrace', 'bpftrace'], describe: 'Tracer to use (default: dtrace if present, else bpftrace)' })
    .option('dry-run', dryRunOption())
    .check((a) => {
      if (a.pid === undefined) throw new Error('Give a process: -p PID.');
      checkDuration(a);
      return true;
    })
    .example('sudo $0 gc -p 4242 -d 30', 'GC pauses by kind over 30 seconds')
    .example('$0 gc -p 4242 -n', 'show exactly what would be loaded into the kernel, and how');
}

/** The tracer run: V8's functions in this process, put into the script. */
function plan(args, tracer) {
  const pid = proc.parsePid(args.pid);
  proc.requireNodeProcess(pid);
  const gc = locateGc(pid);
  if (gc.missing) {
    throw new UserError(`cannot find V8's garbage collector in PID ${pid}: ${gc.missing}.`,
      { hint: 'nodetrace gc needs V8\'s symbols (official, NodeSource and Debian builds have them).', exitCode: EXIT.NOT_FOUND });
  }
  const step = gc.functions.incremental;
  let program = readScript(SCRIPT, tracer.name);
  const note = `IncrementalMarking::Step of ${gc.object}: ${step}`;
  if (tracer.name === 'bpftrace') {
    program = instantiateSlot(program, 'STEP_ENTRY', `uprobe:$1:${step}`, note);
    program = instantiateSlot(program, 'STEP_RETURN', `uretprobe:$1:${step}`);
  } else {
    program = instantiateSlot(program, 'STEP_ENTRY', `pid$1::${step}:entry`, note);
    program = instantiateSlot(program, 'STEP_RETURN', `pid$1::${step}:return`);
  }
  return planTracer(tracer, {
    script: SCRIPT,
    programText: program,
    args: tracer.name === 'bpftrace' ? { OBJECT: gc.file, PID: pid } : { PID: pid },
    attachTimeoutMs: ATTACH_TIMEOUT_MS,
    env: tracer.name === 'bpftrace' ? { BPFTRACE_CACHE_USER_SYMBOLS: '1' } : {},
    describe: `V8's garbage collection pauses of PID ${pid}`,
  });
}

async function handler(args) {
  const tracer = requireTracer(args.backend);
  if (!args.dryRun) requireRoot('nodetrace gc');
  const p = plan(args, tracer);
  if (args.dryRun) {
    process.stdout.write(renderPlan(p));
    return;
  }
  const pid = proc.parsePid(args.pid);
  const session = new TracerSession(p, { durationSeconds: args.duration });
  const result = await session.run();
  if (!result.ready && result.endReason === null) throw describeTracerFailure(tracer, result, pid);
  if (!result.ready) return;
  const report = parseGc(result.maps, { tracer: tracer.name });
  const broken = abnormalEnd(result, p);
  if (!broken && !proc.isRunning(pid)) process.stderr.write(`nodetrace: PID ${pid} exited; here is what was gathered.\n`);
  process.stdout.write(args.json ? renderGcJSON(report, { pid, tracer: tracer.name }) : renderGcText(report, { pid }));
  if (broken) throw new UserError(`${broken}; the results are incomplete.`);
}

module.exports = {
  command: 'gc',
  describe: 'How long V8\'s garbage collector pauses a process, by kind (scavenge, mark-compact, incremental, weak callbacks)',
  builder,
  handler,
  plan,
};
