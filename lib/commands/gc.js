'use strict';
// nodetrace gc: how long V8's garbage collector pauses a live Node process,
// by kind (scavenge, mark-compact, incremental marking, weak callbacks), as
// histograms. No preparation: uprobes on V8's own functions, found in the
// process's node executable or libnode (lib/gc/v8-functions.js).
const { listed } = require('./list');
const { UserError, EXIT } = require('../errors');
const { planTracer, readScript } = require('../tracer/plan');
const { attachBoundMs } = require('../tracer/attach-bounds');
const { uprobesWithPid } = require('../tracer/capabilities');
const { instantiateSlot, uprobesAtAddresses } = require('../tracer/template');
const { runTraceCommand } = require('../tracer/run-command');
const { spanNs } = require('../tracer/session');
const { locateGc } = require('../gc/v8-functions');
const { parseGc, renderGcText, renderGcJSON } = require('../gc/report');
const { targetOptions, checkTarget } = require('../targets/options');
const { oneProcess } = require('../targets/one-process');
const { durationOption, checkDuration, dryRunOption, jsonOption, backendOption } = require('./common-options');
const { describeIdentity } = require('../proc/container');
const { prometheusOption, checkPrometheus, withLiveClause } = require('../prometheus/live');
const { liveMetrics } = require('../gc/live-metrics');

const SCRIPT = 'gc';

function builder(y) {
  targetOptions(y.usage('$0 gc (<target> | -p PID) [options]\n\n'
      + 'How long V8\'s garbage collector pauses a Node process, by kind: scavenges, mark-compact,\n'
      + 'incremental marking steps and weak callbacks, as histograms. The process needs no\n'
      + 'preparation (uprobes on V8\'s own functions).'), { force: true });
  return y
    .option('duration', durationOption('Stop after this many seconds (default: Ctrl-C or target exit)'))
    .option('json', jsonOption())
    .option('prometheus', prometheusOption('the running pause histograms by kind'))
    .option('backend', backendOption())
    .option('dry-run', dryRunOption())
    .check((a) => {
      checkTarget(a);
      checkDuration(a);
      checkPrometheus(a);
      return true;
    })
    .example('sudo $0 gc -p 4242 -d 30', 'GC pauses by kind over 30 seconds')
    .example('sudo $0 gc my-service -d 30', 'the one Node process whose command line contains "my-service"')
    .example('sudo $0 gc -p 4242 --prometheus 9464', 'serve http://127.0.0.1:9464/metrics while tracing, the report at Ctrl-C')
    .example('$0 gc -p 4242 -n', 'show exactly what would be loaded into the kernel, and how');
}

/** The tracer run: V8's functions in this process, put into the script. */
function plan(args, tracer) {
  const { pid, note, who } = oneProcess(args, { command: 'gc' });
  const gc = locateGc(pid);
  if (gc.missing) {
    throw new UserError(`cannot find V8's garbage collector in PID ${pid}: ${gc.missing}.`,
      { hint: 'nodetrace gc needs V8\'s symbols (official, NodeSource and Debian builds have them).', exitCode: EXIT.NOT_FOUND });
  }
  const step = gc.functions.incremental;
  const collection = gc.functions.collection;
  let program = readScript(SCRIPT, tracer.name);
  // The comment says which functions, never where they were found: the path
  // is the target's to choose, and no byte of it becomes program text.
  const instantiated = `instantiated by nodetrace gc: Heap::CollectGarbage is ${collection}, IncrementalMarking::Step ${step} in this process`;
  if (tracer.name === 'bpftrace') {
    program = instantiateSlot(program, 'COLLECTION_ENTRY', `uprobe:$1:${collection}`, instantiated);
    program = instantiateSlot(program, 'COLLECTION_RETURN', `uretprobe:$1:${collection}`);
    program = instantiateSlot(program, 'STEP_ENTRY', `uprobe:$1:${step}`);
    program = instantiateSlot(program, 'STEP_RETURN', `uretprobe:$1:${step}`);
    // By address: bpftrace 0.17 searched node's symbol table for each of the
    // ten probes by name, 6.4 s of its CPU to attach (0.5 s by address),
    // and 0.27 3.8 s (1.3 s).
    if (gc.addresses) {
      program = uprobesAtAddresses(program, '$1', gc.addresses,
        'instantiated by nodetrace gc: each function by its address in OBJECT, where bpftrace finds it at once');
    }
  } else {
    program = instantiateSlot(program, 'COLLECTION_ENTRY', `pid$1::${collection}:entry`, instantiated);
    program = instantiateSlot(program, 'COLLECTION_RETURN', `pid$1::${collection}:return`);
    program = instantiateSlot(program, 'STEP_ENTRY', `pid$1::${step}:entry`);
    program = instantiateSlot(program, 'STEP_RETURN', `pid$1::${step}:return`);
  }
  // --prometheus: the program's LIVE clause, its pause maps printed every second (lib/gc/live-metrics.js).
  if (args.prometheus !== undefined) program = withLiveClause(program, tracer, 'gc');
  return planTracer(tracer, {
    script: SCRIPT,
    programText: program,
    // -p where the process sees nodetrace's mounts: bpftrace 0.20+ then sets
    // the uprobes in this process only (0.17 in every process that maps the
    // file, the program keeping this one's). Without it, even 0.27 trapped
    // in every node process on the host (capabilities.js uprobesWithPid).
    ...(tracer.name === 'bpftrace' && uprobesWithPid(tracer, who) ? { pid } : {}),
    args: tracer.name === 'bpftrace' ? { OBJECT: gc.file, PID: pid } : { PID: pid },
    attachTimeoutMs: attachBoundMs(tracer, { command: 'gc' }),
    uprobeFiles: tracer.name === 'bpftrace' ? [gc.file] : [],
    env: tracer.name === 'bpftrace' ? { BPFTRACE_CACHE_USER_SYMBOLS: '1' } : {},
    describe: `V8's garbage collection pauses of ${describeIdentity(who)}`,
    target: { pid },
    details: { process: who },
    warnings: note ? [note] : [],
  });
}

function report(result, { args, tracer, plan: p, snapshots }) {
  const pid = p.target.pid;
  const who = p.details.process;
  const r = parseGc(result.maps, { tracer: tracer.name });
  r.tracedNs = spanNs(result, r.tracedNs);
  // Each thread that paused by what it is (lib/threads/identify.js): the
  // main thread, a Worker (each isolate collects its own heap).
  // Without snapshots no other thread was looked up: undefined, nothing claimed.
  const identityOf = (tid) => (snapshots && snapshots.identityOf(tid)) || (tid === pid ? { role: 'main' } : (snapshots ? null : undefined));
  process.stdout.write(args.json ? renderGcJSON(r, { pid, who, tracer: tracer.name, identityOf })
    : renderGcText(r, { pid, who, identityOf }));
  return { gathered: r.kinds.length > 0 };
}

function handler(args) {
  // The target's threads, identified as they appear: who paused.
  return runTraceCommand(args, { name: 'gc', plan, report, snapshots: { threads: true }, liveMetrics });
}

module.exports = {
  ...listed('gc'),
  builder,
  handler,
  plan,
};
