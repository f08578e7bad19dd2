'use strict';
// nodetrace async: every asynchronous operation of a live Node process by
// its kind (Node's AsyncWrap providers: TCPWRAP, FSREQCALLBACK, ZLIB...):
// created per second, callbacks, how long operations waited for their first
// callback, how long callbacks held the loop, and what is created and never
// destroyed. No preparation: uprobes on node's own AsyncWrap functions
// (lib/async/wrap-functions.js); bpftrace, or DTrace without --stacks
// (d-scripts/async.d; docs/programs.md#async). A process started with
// `node -r nodetrace/register` also has the resources that are not
// AsyncWraps (promises, timers...: lib/async/hook.js), read by the
// program's @hook part (bpftrace).
const { listed } = require('./list');
const { UserError, EXIT } = require('../errors');
const { planTracer, readScript } = require('../tracer/plan');
const { attachBoundMs } = require('../tracer/attach-bounds');
const { withoutOptional, instantiateSlot } = require('../tracer/template');
const { rawUserStackEnv, mapKeysEnv, mapKeysFor, usdtPathForPid, uprobesWithPid } = require('../tracer/capabilities');
const { userStackBound } = require('../render/map-full');

// Keys of async.bt's maps: @born holds each operation alive (created, its
// first callback not yet run), the @stacks part's up to its LIVE_KEPT
// (16,384) with their chains, which a smaller bound would cut unsaid.
const MAP_KEYS = 65536;
const STACKS_MAP_KEYS_FLOOR = 32768;
const bornMap = (keys) => ({ map: '@born', keys, what: 'operations alive at once',
  lost: 'their wait for a first callback was not measured', raise: null });
// The program's other maps that can fill (lib/render/map-full.js): @js_sfi
// (--stacks: the JavaScript frames of creation stacks, by chain; its keys
// never leave) counts what it did not keep (@full_js); those printed whole
// are full at their bound: the hook's kinds, by thread, the callbacks'
// functions, by kind, and the operations by thread and kind.
// (With a tracer, --stacks also declares bpftrace's own map of user stacks,
// before 0.25: an operation whose creation stack it lost is counted as
// "[no stack]", lib/render/map-full.js.)
const boundedMaps = (keys, { stacks, hook, tracer = null }) => [
  bornMap(keys),
  ...(stacks ? [{ map: '@js_sfi', keys, what: 'JavaScript frames of creation stacks',
    lost: 'the stacks through them were cut there', raise: 'trace for less time' }] : []),
  ...(stacks && tracer ? [userStackBound(tracer, 'trace for less time', 'operation')].filter(Boolean) : []),
  ...(hook ? [{ map: '@hook_created', keys, what: 'the register hook\'s kinds, by thread',
    lost: 'the resources of the kinds past it were not counted', raise: null }] : []),
  { map: '@function_ns', keys, what: 'functions called back, by kind',
    lost: 'the callbacks of the functions past it were not counted by function', raise: null },
  { map: '@thread_created', keys, what: 'operations by thread and kind',
    lost: 'the operations past it were not counted by thread', raise: null },
];
const { librariesOf } = require('../probe-libraries');
const { PROBE_VALUE } = require('../tracer/program-arguments');
const { ASYNC_PROVIDER, POLL_MS } = require('../async/probes');
const { jsFramesSession } = require('../profile/js-frames');
const { nameLoopStacks } = require('../loop/name-stacks');
const { splitAtEndMarker } = require('../tracer/output-formats');
const { runTraceCommand } = require('../tracer/run-command');
const { tracedSpanMs, spanNs } = require('../tracer/session');
const { requireTracer } = require('../tracer/detect');
const { pidProviderMisses } = require('../tracer/pid-provider-reach');
const { dtraceLosses, dtraceLossLine } = require('../tracer/dtrace-losses');
const { safeText } = require('../terminal-safe');
const { locateAsyncWrap } = require('../async/wrap-functions');
const { parseAsync, functionAddresses } = require('../async/report/build-model');
const { groupLiveStacks, lostLiveStacks } = require('../async/report/live-stacks');
const { renderAsyncText } = require('../async/report/text');
const { renderAsyncJSON } = require('../async/report/json');
const { sharedOffset, nameFunctions } = require('../async/callback-names');
const { targetOptions, checkTarget } = require('../targets/options');
const { oneProcess } = require('../targets/one-process');
const { durationOption, checkDuration, dryRunOption, threadOption, parseThread, checkThread, jsonOption, backendOption } = require('./common-options');
const { selectThread } = require('../threads/select');
const { threadLabel } = require('../threads/roles');
const { describeIdentity } = require('../proc/container');
const { prometheusOption, checkPrometheus, requireLiveTracer, withLiveClause } = require('../prometheus/live');
const { liveMetricsFor } = require('../async/live-metrics');

const SCRIPT = 'async';

function builder(y) {
  targetOptions(y.usage('$0 async (<target> | -p PID) [options]\n\n'
      + 'Every asynchronous operation of a Node process by its kind (TCPWRAP, FSREQCALLBACK,\n'
      + 'GETADDRINFOREQWRAP, ZLIB, PBKDF2REQUEST...): created per second, callbacks, how long each\n'
      + 'waited for its first callback, how long callbacks held the event loop, and created minus\n'
      + 'destroyed (a kind that only grows is said to be growing). The process needs no preparation.'), { force: true });
  return y
    .option('duration', durationOption('Stop after this many seconds (default: Ctrl-C or target exit)'))
    .option('top', { type: 'number', default: 15, describe: 'Show this many kinds, those with the most loop time first' })
    .option('stacks', { type: 'boolean', default: false, describe: 'Where the operations still alive at the end were created: native and JavaScript stacks, grouped (costs a stack walk per operation created)' })
    .option('hook', { type: 'boolean', default: true, describe: 'Where the process was started with -r nodetrace/register, also count promises, timers, immediates and AsyncResources through its hook (--no-hook: AsyncWraps only; async_hooks stays off in the process)' })
    .option('thread', threadOption())
    .option('json', jsonOption())
    .option('prometheus', prometheusOption('each kind\'s running counts and histograms'))
    .option('backend', backendOption('Tracer to use (default bpftrace; dtrace: d-scripts/async.d, without --stacks)'))
    .option('dry-run', dryRunOption())
    .check((a) => {
      checkTarget(a);
      checkDuration(a);
      checkThread(a);
      checkPrometheus(a);
      if (!(Number.isInteger(a.top) && a.top >= 1)) throw new Error('--top expects a whole number from 1.');
      if (a.stacks && a.backend === 'dtrace') throw new Error('--stacks needs bpftrace: async.d has no creation stacks (docs/programs.md#async says why).');
      return true;
    })
    .example('sudo $0 async -p 4242 -d 30', 'asynchronous operations by kind over 30 seconds')
    .example('sudo $0 async my-service -d 60 --top 5', 'the five kinds with the most loop time; growing kinds are said so')
    .example('sudo $0 async -p 4242 -d 60 --stacks', 'and where the operations left alive (leak suspects) were created')
    .example('sudo $0 async -p 4242 --no-hook', 'a process started with -r nodetrace/register: AsyncWraps only, its async_hooks left off')
    .example('sudo $0 async -p 4242 --thread 2', 'the loop figures of worker_threads Worker 2 (the counts are every thread\'s)')
    .example('sudo $0 async -p 4242 --prometheus 9464', 'serve http://127.0.0.1:9464/metrics while tracing, the report at Ctrl-C')
    .example('$0 async -p 4242 -n', 'show exactly what would be loaded into the kernel, and how');
}

/** The tracer run: node's AsyncWrap functions and layout in this process, as arguments. */
function plan(args, tracer) {
  const { pid, note, who } = oneProcess(args, { command: 'async' });
  // Whose event loop the loop figures are of (lib/threads/select.js), as loop's --thread.
  const want = args.thread === undefined ? { main: true } : parseThread(args.thread);
  const chosen = want.main ? { tid: pid, identity: { tid: pid, role: 'main' } } : selectThread(pid, want);
  const thread = { tid: chosen.tid, role: chosen.identity.role, label: threadLabel(chosen.identity),
    ...(chosen.identity.worker ? { worker: chosen.identity.worker } : {}) };
  const found = locateAsyncWrap(pid);
  if (found.missing) {
    throw new UserError(`cannot trace PID ${pid}'s asynchronous operations: ${found.missing}.`,
      { hint: 'nodetrace async reads node\'s AsyncWrap objects (official Node 18 to 26, Debian\'s 18).', exitCode: EXIT.NOT_FOUND });
  }
  const { sharedAt, note: functionsNote } = sharedOffset(pid);
  if (args.prometheus !== undefined) requireLiveTracer(tracer);
  if (tracer.name === 'dtrace') return planDtrace(tracer, { pid, note, who, found, sharedAt, functionsNote, thread });
  const stacks = Boolean(args.stacks);
  const keys = mapKeysFor(MAP_KEYS, stacks ? { floor: STACKS_MAP_KEYS_FLOOR } : {});
  const hook = args.hook === false ? { library: null, why: null } : hookLibrary(pid, who);
  // Without --stacks the @stacks part is left out: no stack is walked.
  // Without the hook, the @hook part: the program the process needs no
  // preparation for.
  const without = [...(stacks ? [] : ['stacks']), ...(hook.library ? [] : ['hook'])];
  let programText = null;
  for (const part of without) {
    programText = withoutOptional(programText || readScript(SCRIPT, 'bpftrace'), part, {
      stacks: 'instantiated by nodetrace async: the @stacks part left out, no --stacks',
      hook: 'instantiated by nodetrace async: the @hook part left out, no register hook',
    }[part]);
  }
  // --prometheus: the program's LIVE clause, the kinds' maps printed every second (lib/async/live-metrics.js).
  if (args.prometheus !== undefined) programText = withLiveClause(programText || readScript(SCRIPT, 'bpftrace'), tracer, 'async');
  return planTracer(tracer, {
    script: SCRIPT,
    ...(without.length || programText ? { programText, without } : {}),
    // -p where the process sees nodetrace's mounts (capabilities.js
    // uprobesWithPid): bpftrace 0.20+ then sets the uprobes in this process
    // only (without it, even 0.27 trapped in every node process on the
    // host), and with the hook only this process's semaphores are set
    // (another process mapping the library keeps its hook off).
    ...(hook.library || uprobesWithPid(tracer, who) ? { pid } : {}),
    args: {
      // Each function by its address in OBJECT where known (the dry run's
      // comments say which function each argument is): bpftrace 0.17
      // searched node's symbol table for each of the five by name.
      OBJECT: found.file, PID: pid, ...(found.addresses || found.functions), ...found.layout,
      SHARED_AT: sharedAt, TID: thread.tid,
      ...(hook.library ? { LIBRARY: usdtPathForPid(tracer, pid, hook.library) } : {}),
    },
    uprobeFiles: [found.file],
    attachTimeoutMs: attachBoundMs(tracer, { command: 'async' }),
    // @born holds each operation until its first callback or its end.
    // With --stacks, raw user stacks, named by nodetrace from a snapshot of
    // the target (lib/loop/name-stacks.js), as loop --stacks does.
    env: { BPFTRACE_CACHE_USER_SYMBOLS: '1', ...mapKeysEnv(tracer, keys), ...(stacks ? rawUserStackEnv(tracer) : {}) },
    describe: `the asynchronous operations of ${describeIdentity(who)}`,
    target: { pid },
    details: { process: who, thread, version: found.version, providers: found.providers, stacks,
      hook: Boolean(hook.library), ...(stacks && sharedAt ? { jsFrames: {} } : {}),
      boundedMaps: boundedMaps(keys, { stacks, hook: Boolean(hook.library), tracer }) },
    // Said on stderr, not only in the dry run: the trace turns the
    // process's async_hooks on, which costs it (docs/performance.md).
    warnings: [...(note ? [note] : []), ...(functionsNote ? [functionsNote] : []), ...(hook.why ? [hook.why] : []),
      ...(hook.library ? [`PID ${pid} has the register hook: promises, timers, immediates and AsyncResources are counted too, through its async_hooks, on while traced (from within ${POLL_MS} ms of the attach; --no-hook leaves it off)`] : []),
      ...(found.providers ? [] : [`no provider names for Node v${found.version}: kinds are shown by number`])],
  });
}

// async.d: AsyncReset's name (it lost its bool in Node 24) filled into its
// slot, the layout as arguments; no @stacks part there.
function planDtrace(tracer, { pid, note, who, found, sharedAt, functionsNote, thread }) {
  const missed = pidProviderMisses(pid, found);
  if (missed) throw new UserError(`cannot trace PID ${pid}'s asynchronous operations with DTrace: ${missed}.`, { hint: 'Use --backend bpftrace.', exitCode: EXIT.NOT_FOUND });
  const program = instantiateSlot(readScript(SCRIPT, 'dtrace'), 'RESET', `pid$1::${found.functions.RESET}:entry`,
    'instantiated by nodetrace async: AsyncReset filled in');
  return planTracer(tracer, {
    script: SCRIPT,
    programText: program,
    args: { PID: pid, TYPE_AT: found.layout.TYPE_AT, ID_AT: found.layout.ID_AT, SHARED_AT: sharedAt, TID: thread.tid },
    attachTimeoutMs: attachBoundMs(tracer, { command: 'async' }),
    describe: `the asynchronous operations of ${describeIdentity(who)}`,
    target: { pid },
    details: { process: who, thread, version: found.version, providers: found.providers, stacks: false },
    warnings: [...(note ? [note] : []), ...(functionsNote ? [functionsNote] : []),
      ...(found.providers ? [] : [`no provider names for Node v${found.version}: kinds are shown by number`])],
  });
}

// The register hook's probe library in the process (lib/async/hook.js), if
// it maps one and nodetrace can hand it to the tracer with -p.
// -> { library: path|null, why: a warning|null }
function hookLibrary(pid, who) {
  const libs = librariesOf(pid, ASYNC_PROVIDER);
  if (!libs.length) return { library: null, why: null };
  if (who && who.otherMounts !== false) {
    return { library: null, why: 'the register hook\'s probes are not read in a process in another mount namespace: AsyncWraps only' };
  }
  // The path lands in probe descriptions: one outside their strict set (a
  // home directory with a blank) is left out, not the whole trace refused.
  if (!PROBE_VALUE.file.test(libs[0]) || libs[0].split('/').includes('..')) {
    return { library: null, why: 'the register hook\'s probe library has a path nodetrace does not hand to a tracer (docs/security.md): AsyncWraps only' };
  }
  return { library: libs[0], why: null };
}

function report(result, { args, tracer, plan: p, snapshots }, run = {}) {
  const pid = p.target.pid;
  const { process: who, version, providers } = p.details;
  // Rates over the program's window where it printed its report then
  // (spanNs), else from every probe attached to the end.
  const spanMs = result.reported ? null : tracedSpanMs(result);
  // Lines taken as they came, to name JavaScript frames meanwhile (lib/profile/js-frames.js).
  if (run.lines) Object.assign(result, splitAtEndMarker(run.lines));
  const r = parseAsync(result,
    { providers, attachedNs: spanMs === null ? null : spanMs * 1e6, stacks: p.details.stacks, hook: p.details.hook,
      tracer: tracer.name });
  r.tracedNs = spanNs(result, r.tracedNs);
  if (r.liveStacks && snapshots && args.stacks) {
    const named = nameLoopStacks(r.liveStacks.map((s) => s.stack), snapshots.symbolizer, snapshots.latest,
      { js: run.js });
    r.liveStacks.forEach((s, i) => { s.stack = named[i]; });
  }
  groupLiveStacks(r);
  // The callbacks' functions named from the process's memory (it is still
  // there unless it exited; then they keep their addresses).
  const names = nameFunctions(pid, functionAddresses(r));
  for (const k of r.kinds) for (const f of k.functions) f.name = names.get(f.sfi) || null;
  // Whose loop the loop figures are; the process's Workers, whose
  // operations the counts hold too (merged).
  const workers = snapshots ? snapshots.threadsSeen().filter((t) => t.role === 'worker')
    .sort((a, b) => (a.worker.threadId || 0) - (b.worker.threadId || 0))
      .map((t) => ({ tid: t.tid, label: threadLabel(t) })) : [];
  // Each thread by role, for the counts told apart by thread.
  const identityOf = (tid) => (snapshots && snapshots.identityOf(tid)) || (tid === pid ? { tid, role: 'main' } : null);
  const o = { pid, who, version, tracer: tracer.name, top: args.top, thread: p.details.thread, workers, identityOf };
  process.stdout.write(args.json ? renderAsyncJSON(r, o) : renderAsyncText(r, o));
  const lost = tracer.name === 'dtrace' ? dtraceLossLine(dtraceLosses(result.errors)) : null;
  if (lost) process.stderr.write(safeText(`nodetrace: ${lost}`) + '\n');
  return { gathered: r.kinds.length > 0, mapsSeen: { '@born': { refused: r.fullBorn }, '@js_sfi': { refused: r.fullJs },
    '@hook_created': { held: r.keysHeld.hook_created }, '@function_ns': { held: r.keysHeld.function_ns },
    '@thread_created': { held: r.keysHeld.thread_created }, ustack: { refused: lostLiveStacks(r.liveStacks) } } };
}

async function handler(args) {
  const run = {};   // JavaScript frames captured with --stacks: { js, lines }
  try {
    // bpftrace unless asked: async.d has no --stacks (docs/programs.md#async).
    await runTraceCommand(args, {
      name: 'async', plan,
      report: (result, ctx) => report(result, ctx, run),
      tracer: () => requireTracer(args.backend || 'bpftrace'),
      sessionOptions: (pl) => jsFramesSession(pl, run),
      // The target's memory map and perf map, to name the creation stacks'
      // frames; its threads, to say which Workers it runs.
      snapshots: { perfMap: Boolean(args.stacks), threads: true },
      liveMetrics: (pl) => liveMetricsFor(pl.details),
    });
  } finally {
    if (run.js) run.js.close();
  }
}

module.exports = {
  ...listed('async'),
  builder,
  handler,
  plan,
  boundedMaps,
};
