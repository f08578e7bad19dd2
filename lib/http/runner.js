'use strict';
// Runs `nodetrace http` (lib/tracer/run-command.js): the hook's tracers,
// new ones as probe libraries appear ('*': lib/probe-libraries/library-follower.js),
// or the wire's one session, their lines read into requests (lib/http/records.js,
// lib/http/wire.js) and shown as lines, JSON or histograms as they come; then
// what became of every request. Which source and plan: lib/http/source.js.
const fs = require('fs');
const { safeText } = require('../terminal-safe');
const { runTraceCommand, runOneSession } = require('../tracer/run-command');
const { LibraryFollower, Generation } = require('../probe-libraries/library-follower');
const { LineOutput } = require('../tracer/line-output');
const { dtraceLosses, dtraceLossLine } = require('../tracer/dtrace-losses');
const { identify } = require('../proc/identity');
const { describeIdentity } = require('../proc/container');
const { clusterOf, clusterFacts } = require('../proc/cluster');
const { lossLines, addMaps } = require('../render/loss');
const { HTTP_PROVIDER } = require('./probes');
const { planHttp } = require('./plan');
const records = require('./records');
const { LatencyStats, renderHistograms, histogramsJSON } = require('./histograms');
const { WireReader, wireLossLines } = require('./wire');
const { MORE_PIDS } = require('./wire-plan');
const { tracerFor, plan, minUs, withContainerPid } = require('./source');
const { liveMetricsOf } = require('./live-metrics');

// Who each process is, read once, when its first request arrives.
function identities() {
  const known = new Map();
  return (pid) => {
    if (!known.has(pid)) known.set(pid, identify(pid));
    return known.get(pid);
  };
}

// A request shown: with --latency into its histogram, else as a JSON line or
// a line (the header before the first) on `output`; with --prometheus into
// its histogram too, which the endpoint serves (ctx.live: lib/http/live-metrics.js).
function requestShower(args, ctx, stats, outputOf) {
  let headerShown = false;
  if (ctx.liveStats) ctx.liveStats.stats = stats;
  return (r) => {
    if (args.latency) { stats.add(r); return; }
    if (ctx.liveStats && !r.connection) stats.add(r);
    const output = outputOf();
    if (args.json) { output.write(records.renderJSONLine(r, { wallMinusMonoNs: ctx.wallMinusMonoNs })); return; }
    if (!headerShown) { output.write(records.HEADER); headerShown = true; }
    output.write(records.renderLine(r, { wallMinusMonoNs: ctx.wallMinusMonoNs }));
  };
}

// A tracer of the trace, with its reading of the batches.
class HttpGeneration extends Generation {
  constructor(plan, libs) {
    super(plan, libs);
    this.reader = new records.RequestReader();
    this.arrivedBy = new Map();   // pid -> requests read from this tracer (before any filter)
  }
}

// What a batch's fair share is, for the loss messages (d-scripts/http-batched.bt).
const SHARE = 'when several processes are traced, one gets at most 2,048 requests of a batch, and its last 1,024 places go to those with fewer than 512';
const LOST_WHY = 'the batch map was full, or nodetrace could not read them before the tracer ended';

// The trace: the first tracer, and new ones as probe libraries appear ('*').
async function follow(firstPlan, ctx) {
  const { args, tracer } = ctx;
  const targets = firstPlan.details.targets;
  const say = (text) => process.stderr.write(safeText(`nodetrace: ${text}`) + '\n');
  for (const note of targets.notes) say(note);
  const identityOf = identities();
  const stats = new LatencyStats({ by: args.by, merge: args.merge, identify: identityOf });
  const shown = { requests: 0 };
  let output = null;
  const showRequest = requestShower(args, ctx, stats, () => output);
  const show = (gen, r) => {
    gen.arrivedBy.set(r.pid, (gen.arrivedBy.get(r.pid) || 0) + 1);
    if (!gen.keeps(r.ns, r.pid)) return;         // the other tracer's, at a handover
    if (gen.plan.only && !gen.plan.only.has(r.pid)) return;
    shown.requests++;
    showRequest(r);
  };
  // '*' follows probe libraries that appear later (another user's first
  // process with the hook): lib/probe-libraries/library-follower.js.
  const follower = new LibraryFollower({
    tracer,
    provider: HTTP_PROVIDER,
    one: 'an HTTP probe library',
    many: 'HTTP probe libraries',
    verb: 'tracing',
    task: 'trace',
    say,
    planFor: (libs, opened) => planHttp(tracer, { ...targets, libraries: libs }, minUs(args), { opened }),
    newGeneration: (p, libs) => new HttpGeneration(p, libs),
    durationSeconds: args.duration,
    onEnding: () => { output.ending = true; output.resume(); },
    session: (gen) => ({
      // One status line, the first tracer's; the follower handles signals.
      statusStream: gen === follower.main ? undefined : null,
      handleSignals: false,
      onLine: (item) => { for (const r of gen.reader.push(item)) show(gen, r); },
    }),
  });
  output = new LineOutput(() => follower.generations);
  // Libraries other than one process's own (-p) are opened and verified first.
  const single = targets.kind === 'pids' && targets.pids.length === 1 && targets.libraries.length === 1;
  const libs = single ? targets.libraries : follower.admitFirst(targets.libraries);
  const first = await follower.run(libs, { follow: targets.kind === 'all', known: targets.libraries });
  ctx.http = { follower, stats, shown, identityOf };
  return { result: first.result, abnormal: () => follower.abnormalEnd() };
}

// A child of the primary that the program began reading (it ran its
// program): read on where /proc says it is a worker of that primary (its
// parent, NODE_UNIQUE_ID), said in one line; any other child dropped.
function followWorker(parent, say) {
  const exeOf = (pid) => {
    try { const st = fs.statSync(`/proc/${pid}/exe`); return `${st.dev}:${st.ino}`; } catch { return null; }
  };
  const primaryExe = exeOf(parent);
  return (pid) => {
    const f = clusterFacts(pid);
    if (!f || f.ppid !== parent || f.workerId === null) return false;
    const exe = exeOf(pid);
    const tls = exe !== null && exe === primaryExe ? '' : ' (not its HTTPS: it runs another executable than its primary)';
    say(`PID ${pid}, worker ${f.workerId} of ${parent}, started while tracing: reading its HTTP off the wire too${tls}.`);
    return true;
  };
}

// How often requests held for ordering (lib/http/wire.js) are let out.
const WIRE_FLUSH_MS = 100;

// The wire: one tracer session (lib/tracer/run-command.js), its lines
// reassembled into requests, shown as the hook's are.
async function runWire(plan, ctx) {
  const { args } = ctx;
  const { pids, mapKeys, parent } = plan.details;
  // As many connections followed as the program's maps hold (DTrace's: the default).
  const bound = mapKeys ? { maxConnections: mapKeys } : {};
  const say = (text) => process.stderr.write(safeText(`nodetrace: ${text}`) + '\n');
  const follow = parent ? followWorker(parent, say) : null;
  const reader = pids ? new WireReader({ pids, follow, ...bound })
    : new WireReader({ pid: plan.details.pid, ...bound });
  const identityOf = identities();
  const stats = new LatencyStats({ by: args.by, merge: args.merge, identify: identityOf });
  const shown = { requests: 0 };
  const slowerThanUs = minUs(args);
  let child = null;
  const output = new LineOutput(() => (child ? [{ session: { child } }] : []));
  const showRequest = requestShower(args, ctx, stats, () => output);
  const show = (done) => {
    for (const r of done) {
      // A connection whose requests are not read (HTTP/2): a line of its
      // own, in no histogram (the closing lines count them).
      if (r.connection && args.latency) continue;
      if (!r.connection && r.us < slowerThanUs) continue;
      if (!r.connection) shown.requests++;
      showRequest(r);
    }
  };
  ctx.http = { wire: reader, stats, shown, identityOf };
  const timer = setInterval(() => show(reader.flush(process.hrtime.bigint())), WIRE_FLUSH_MS);
  // What is still held for ordering, let out once: when the program is
  // quiet (every call it saw read: the report is printed then, before
  // bpftrace detaches its probes; lib/tracer/session.js), else at its exit.
  let read = false;
  const readToEnd = () => {
    if (read) return;
    read = true;
    clearInterval(timer);
    output.ending = true;
    output.resume();
    show(reader.end());
  };
  try {
    const spec = {
      ...ctx.spec,
      sessionOptions: () => ({
        onSpawn: (c) => { child = c; },
        onLine: (line) => { if (!read) show(reader.push(line)); },
      }),
    };
    const onReport = ctx.onReport && ((result) => { readToEnd(); ctx.onReport(result); });
    return await runOneSession(plan, { ...ctx, spec, onReport });
  } finally {
    readToEnd();
  }
}

function run(plan, ctx) {
  return plan.details.source === 'wire' ? runWire(plan, ctx) : follow(plan, ctx);
}

// Per process, what its probes fired and what became of it, over every tracer.
function lossCounts(follower) {
  const counts = new Map();
  for (const g of follower.generations) {
    const r = g.reader;
    addMaps(counts, { fired: r.firedBy, over: r.overBy, full: r.fullBy, arrived: g.arrivedBy,
      malformed: r.malformedBy }, r.malformedWhy);
  }
  return counts;
}

function report(result, { args, http, broken, tracer }) {
  const { follower, stats, shown, identityOf } = http;
  const lines = http.wire ? wireLossLines(http.wire, (pid) => describeIdentity(identityOf(pid)))
    : lossLines(lossCounts(follower), {
    describe: (pid) => describeIdentity(identityOf(pid)), noun: 'request', nouns: 'requests', share: SHARE, lostWhy: LOST_WHY,
  });
  // http-wire.d has no count of its own: what DTrace lost, it says on stderr.
  const dtraceLost = tracer.name === 'dtrace' && result ? dtraceLossLine(dtraceLosses(result.errors), { events: 'socket events' }) : null;
  if (dtraceLost) lines.push(dtraceLost);
  for (const line of lines) process.stderr.write(safeText(`nodetrace: ${line}`) + '\n');
  if (args.latency) {
    process.stdout.write(args.json ? histogramsJSON(stats) : renderHistograms(stats));
  } else if (!shown.requests && !broken) {
    process.stderr.write(`nodetrace: no HTTP request completed${args.slowerThan ? ` slower than ${args.slowerThan} ms` : ''} while tracing.\n`);
  }
  if (!shown.requests && args.pid !== undefined) {
    const why = primaryLine(Number(args.pid));
    if (why) process.stderr.write(safeText(`nodetrace: ${why}`) + '\n');
  }
  // The wire program's maps that filled (lib/http/wire-plan.js wireBoundedMaps), said by run-command.
  return { gathered: shown.requests > 0, ...(http.wire ? { mapsSeen: http.wire.mapsSeen() } : {}) };
}

// A cluster's primary serves no request itself: its workers do, each a
// process of its own (lib/proc/cluster.js). Said, with them, where none
// completed in the primary.
function primaryLine(pid) {
  const c = clusterOf(pid);
  if (!c || c.role !== 'primary' || !c.workers.length) return null;
  const workers = c.workers.map((w) => `${w.pid} (worker ${w.id})`).join(', ');
  // The primary and its workers by PIDs: one trace (off the wire, also
  // the workers it forks later; lib/http/source.js), where they fit in one.
  const pids = [pid, ...c.workers.map((w) => w.pid)];
  const all = pids.length <= 1 + MORE_PIDS ? `Trace them all with nodetrace http ${pids.join(',')}, or one with ` : 'Trace one with ';
  return `PID ${pid} is a cluster primary: its ${c.workers.length === 1 ? 'worker serves' : `${c.workers.length} workers serve`} the requests, PID ${workers}. `
    + `${all}nodetrace http -p ${c.workers[0].pid}.`;
}

// The whole of `nodetrace http` once its options are checked.
function traceHttp(args) {
  // --prometheus: the stats the requests go into, once the run makes them.
  const liveStats = args.prometheus !== undefined ? { stats: null } : null;
  return runTraceCommand(withContainerPid(args), {
    name: 'http', tracer: tracerFor, plan, report,
    run: (p, ctx) => run(p, Object.assign(ctx, { liveStats })),
    ...(liveStats ? { liveMetrics: liveMetricsOf(liveStats) } : {}),
  });
}

module.exports = { traceHttp };
