'use strict';
// nodetrace http: one line per HTTP request that Node processes served or
// made, with status and latency (nhttpsnoop for today's Node), or latency
// histograms per route. Two sources: processes run with `node -r
// nodetrace/register` fire nodetrace:::http-*-request-done (lib/http/hook.js:
// the hook); any one process, unprepared, is read off its socket system
// calls (d-scripts/http-wire.bt, lib/http/wire.js: the wire). --source auto:
// the hook where the process has it, the wire otherwise.
const { listed } = require('./list');
const { UserError, EXIT } = require('../errors');
const proc = require('../proc');
const { requireTracer } = require('../tracer/detect');
const { runTraceCommand } = require('../tracer/run-command');
const { LibraryFollower, Generation } = require('../probe-libraries/library-follower');
const { resolveTargets, hostFacts, parseTarget } = require('../probe-libraries/probe-targets');
const { HTTP_PROVIDER } = require('../http/probes');
const { planHttp } = require('../http/plan');
const { safeText } = require('../terminal-safe');
const { LineOutput } = require('../tracer/line-output');
const records = require('../http/records');
const { LatencyStats, renderHistograms, histogramsJSON } = require('../http/histograms');
const { planWire } = require('../http/wire-plan');
const { findTlsObject } = require('../http/tls-object');
const { pidProviderMisses } = require('../tracer/pid-provider-reach');
const { dtraceLosses, dtraceLossLine } = require('../tracer/dtrace-losses');
const { WireReader, wireLossLines } = require('../http/wire');
const { runOneSession } = require('../tracer/run-command');
const { identify } = require('../proc/identity');
const { describeIdentity, identityOf: containerIdentity } = require('../proc/container');
const { lossLines, addMaps } = require('../render/loss');
const { targetOptions, checkTarget, targetText } = require('../targets/options');
const { resolveOneTarget, hostFacts: oneProcessHost } = require('../targets/one-process');
const { durationOption, checkDuration, dryRunOption } = require('./common-options');
const { clusterOf, clusterFacts, clusterRoles } = require('../proc/cluster');
const fs = require('fs');
const { matchingPids } = require('../targets/resolve');
const { MORE_PIDS } = require('../http/wire-plan');

// How `nodetrace http` names its targets and their probes (lib/probe-libraries/probe-targets.js).
const HTTP = Object.freeze({
  command: 'http',
  provider: HTTP_PROVIDER,
  probes: 'nodetrace HTTP probes',
  all: 'every process started with nodetrace/register',
  includeOwn: true,
  hint: 'Start it with the hook: node -r nodetrace/register app.js (ES modules: node --import nodetrace/register app.mjs, '
    + 'or NODE_OPTIONS="--require nodetrace/register").',
});

function builder(y) {
  targetOptions(y.usage('$0 http (<target> | -p PID) [options]\n\n'
      + 'One line per completed HTTP request, served (http/https servers, Express, Fastify) or made\n'
      + '(http.request, fetch): time, PID, direction, method, status, latency, URL. <target> is \'*\'\n'
      + '(every process started with the hook, including ones started later), PIDs (4242 or\n'
      + '4242,4343), or text found in their command lines. The processes run with\n'
      + '`node -r nodetrace/register`; untraced, that costs a semaphore read per request.\n'
      + 'Processes without the hook are read off the wire: their socket system calls and their\n'
      + 'OpenSSL (--source): one (-p PID), or up to 8 of one binary by PIDs or a name (a cluster\n'
      + 'or PM2 app: its primary and workers; with the primary among them, workers it forks later too).'), { many: true, container: true });
  return y
    .option('duration', durationOption('Stop after this many seconds (default: Ctrl-C)'))
    .option('slower-than', { type: 'number', describe: 'Only requests that took at least this many ms (filtered in the tracer; on the wire, by nodetrace)' })
    .option('latency', { type: 'boolean', default: false, describe: 'Latency histograms per process, direction, method and route instead of lines (64 processes, 100 routes each; the rest folded and counted)' })
    .option('by', { choices: ['route', 'status'], default: 'route', describe: 'With --latency: one histogram per route or per status' })
    .option('merge', { type: 'boolean', default: false, describe: 'With --latency: one set of histograms for every process traced (default: one per process)' })
    .option('json', { type: 'boolean', default: false, describe: 'One JSON object per request (with --latency: the histograms as JSON)' })
    .option('source', {
      choices: ['auto', 'hook', 'wire'],
      default: 'auto',
      describe: 'hook: the processes started with nodetrace/register; wire: one process, unprepared, read off its '
        + 'socket system calls and its OpenSSL (HTTP/1.x, HTTPS); auto: the hook where the process has it, else the wire',
    })
    .option('backend', {
      choices: ['bpftrace', 'dtrace'],
      describe: 'Tracer to use (default bpftrace). The hook\'s probes are stapsdt USDT probes, which only bpftrace reads on Linux; '
        + 'dtrace reads one process off the wire (d-scripts/http-wire.d)',
    })
    .option('dry-run', dryRunOption())
    .check((a) => {
      checkTarget(a, { many: true, extra: ['container'] });
      checkDuration(a);
      const s = a.slowerThan;
      if (s !== undefined && !(Number.isFinite(s) && s >= 0 && s <= 86400000)) throw new Error('--slower-than expects milliseconds, e.g. --slower-than 100.');
      if (a.merge && !a.latency) throw new Error('--merge merges the histograms of --latency; lines name their process anyway.');
      if (a.source === 'wire' && a.pid === undefined && a.target === undefined && a.container === undefined) throw new Error('--source wire reads given processes: give their PIDs (-p PID, 4242,4343) or a name.');
      return true;
    })
    .example('sudo $0 http -p 4242', 'every request of process 4242, as it completes (no hook needed: read off its sockets)')
    .example('sudo $0 http --container web', 'the Node process of container web (by name or ID start), off the wire')
    .example('sudo $0 http my-service', 'processes whose command line contains "my-service" (a cluster\'s primary and workers: off the wire where none has the hook)')
    .example('sudo $0 http 4242,4243', 'two processes (a cluster\'s workers, unprepared: one tracer reads both off the wire)')
    .example("sudo $0 http '*' --slower-than 100", 'requests over 100 ms in every prepared process, also those started later')
    .example('sudo $0 http -p 4242 --latency -d 30', 'latency histograms per route after 30 seconds')
    .example('$0 http -p 4242 -n', 'show exactly what would run');
}

function tracerFor(args) {
  parseTarget(targetText(args), HTTP.command);   // syntax errors before anything is looked at
  const tracer = requireTracer(args.backend || 'bpftrace');
  // DTrace reads the wire only: the hook's probes are stapsdt USDT probes.
  if (tracer.name !== 'bpftrace' && (args.source === 'hook' || onePid(args) === null)) {
    throw new UserError('nodetrace http reads the hook\'s probes on bpftrace only: they are stapsdt USDT probes, which DTrace for Linux cannot see.',
      { hint: 'Use --backend bpftrace, or give one PID (-p PID) to read it off the wire with DTrace.' });
  }
  return tracer;
}

// The one PID the target names (-p 4242, or 4242), or null.
function onePid(args) {
  const text = args.pid !== undefined ? String(args.pid) : String(args.target === undefined ? '' : args.target);
  return /^\s*\d{1,10}\s*$/.test(text) ? Number(text) : null;
}

// Which source traces this target: the wire for one process without the
// hook (auto) or when asked, and for PIDs or a name none of whose Node
// processes has the hook (a cluster: its primary and workers); the hook
// otherwise.
function sourceFor(args, tracer) {
  if (args.source === 'hook') return 'hook';
  const pid = onePid(args);
  if (pid === null) return wireSet(args, tracer) ? 'wire' : 'hook';
  if (args.source === 'wire' || tracer.name === 'dtrace') return 'wire';
  return hostFacts(HTTP_PROVIDER).librariesOf(pid).length ? 'hook' : 'wire';
}

// PIDs or a name (not '*'), on bpftrace, none of whose Node processes has
// the hook: those processes, read off the wire by one tracer. Else null.
function wireSet(args, tracer) {
  if (tracer.name !== 'bpftrace' || args.pid === undefined && args.target === undefined) return null;
  const t = parseTarget(targetText(args), HTTP.command);
  if (t.kind === 'all') return null;
  const host = hostFacts(HTTP_PROVIDER);
  const pids = matchingPids(t, host, { command: HTTP.command }).filter((p) => host.looksLikeNode(p));
  if (!pids.length || (args.source !== 'wire' && pids.some((p) => host.librariesOf(p).length))) return null;
  return pids.sort((a, b) => a - b);
}

// The OpenSSL of several processes: one probe set reads them all where they
// map one file (a cluster: one binary); else refused, each to be read alone.
function sharedTls(pids) {
  const found = pids.map((p) => ({ pid: p, tls: findTlsObject(p) }));
  const withTls = found.filter((f) => f.tls.file);
  if (!withTls.length) return found[0].tls;
  const idOf = (f) => { try { const st = fs.statSync(f.tls.file); return `${st.dev}:${st.ino}`; } catch { return null; } };
  const first = idOf(withTls[0]);
  if (withTls.length !== found.length || !first || withTls.some((f) => idOf(f) !== first)) {
    throw new UserError(`PIDs ${pids.join(', ')} do not all map one OpenSSL (different binaries): one trace reads the HTTPS of one binary.`,
      { hint: `Trace each apart: nodetrace http -p ${pids[0]}`, exitCode: EXIT.USAGE });
  }
  return withTls[0].tls;
}

// Several processes without the hook (a cluster): one tracer reads them all
// off their sockets, and off their OpenSSL (one binary's), up to 8.
function wireSetPlan(args, tracer, pids) {
  if (pids.length > 1 + MORE_PIDS) {
    throw new UserError(`${pids.length} Node processes match, and one trace reads at most ${1 + MORE_PIDS} off the wire: ${pids.join(', ')}.`,
      { hint: 'Name fewer (PIDs: 4242,4343), or start them with node -r nodetrace/register and trace them by the hook.', exitCode: EXIT.USAGE });
  }
  const tls = sharedTls(pids);
  const parent = primaryAmong(pids);
  const p = planWire(tracer, pids, tls, { parent: parent || 0 });
  const how = tls.file ? `and their HTTPS off the OpenSSL in ${tls.object} (HTTP/1.x, served and made)`
    : `(plaintext HTTP/1.x, served and made; HTTPS is not seen: ${tls.why})`;
  const later = parent ? `workers that PID ${parent}, their cluster's primary, forks later are read too, from their start.`
    : 'processes started later (a worker forked anew) are not read: name their cluster\'s primary too to read those.';
  const warnings = [`PIDs ${pids.join(', ')} have no nodetrace hook: reading their HTTP off their socket system calls ${how}; ${later}`];
  return { ...p, describe: `HTTP on the sockets of PIDs ${pids.join(', ')}`, warnings: [...(p.warnings || []), ...warnings],
    details: { ...p.details, source: 'wire', pids, parent } };
}

// The one cluster primary among the PIDs (lib/proc/cluster.js: a worker's
// parent, with NODE_UNIQUE_ID in the worker's environ), whose workers forked
// later the trace reads too; null where there is none, or several.
function primaryAmong(pids) {
  const roles = clusterRoles(pids.map(clusterFacts).filter(Boolean));
  const primaries = pids.filter((p) => roles.has(p) && roles.get(p).role === 'primary');
  return primaries.length === 1 ? primaries[0] : null;
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

// One process read off its sockets, and off its OpenSSL where it has one
// that exports SSL_read/SSL_write (lib/http/wire-plan.js).
function wirePlan(args, tracer, pid) {
  let tls = findTlsObject(pid);
  // DTrace's pid provider finds OpenSSL by its path: not in another mount tree.
  const missed = tls.file && tracer.name === 'dtrace' ? pidProviderMisses(pid, tls) : null;
  if (missed) tls = { why: missed };
  const p = planWire(tracer, pid, tls);
  const auto = args.source !== 'wire' && tracer.name !== 'dtrace';
  const how = tls.file ? `and its HTTPS off the OpenSSL in ${tls.object} (HTTP/1.x, served and made)`
    : `(plaintext HTTP/1.x, served and made; HTTPS is not seen: ${tls.why})`;
  // A container's process said as its operator knows it: host PID, PID inside, container.
  const who = describeIdentity(containerIdentity(pid));
  const warnings = [`${who}${auto ? ' has no nodetrace hook: ' : ': '}reading its HTTP off its socket system calls ${how}.`];
  // A process with no socket now: what will be seen, and what will not.
  if (proc.holdsSocket(pid) === false) {
    warnings.push(`${who} holds no socket now: it serves nothing yet; the HTTP of connections it opens or accepts while traced will be seen.`);
  }
  return { ...p, describe: `HTTP on the sockets of ${who}`, warnings: [...(p.warnings || []), ...warnings], details: { ...p.details, source: 'wire', pid } };
}

// '*', PIDs or a name -> the resolved targets, and the first tracer's plan.
function plan(args, tracer) {
  if (args.pid !== undefined && !String(args.pid).includes(',')) proc.requireNodeProcess(proc.parsePid(args.pid));
  if (sourceFor(args, tracer) === 'wire') {
    const pid = onePid(args);
    if (pid === null) return wireSetPlan(args, tracer, wireSet(args, tracer));
    proc.requireNodeProcess(pid);
    return wirePlan(args, tracer, pid);
  }
  // A dry run only names this user's own probe library; a real run makes it.
  const targets = resolveTargets(HTTP, targetText(args), tracer.name, hostFacts(HTTP_PROVIDER),
    { create: !args.dryRun });
  const p = planHttp(tracer, targets, minUs(args));
  const one = targets.kind === 'pids' && targets.pids.length === 1 ? targets.pids[0] : null;
  return { ...p, target: one ? { pid: one } : null, details: { ...p.details, targets } };
}

function minUs(args) {
  return Math.round((args.slowerThan || 0) * 1000);
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
  // Who each process is, read once, when its first request arrives.
  const identities = new Map();
  const identityOf = (pid) => {
    if (!identities.has(pid)) identities.set(pid, identify(pid));
    return identities.get(pid);
  };
  const stats = new LatencyStats({ by: args.by, merge: args.merge, identify: identityOf });
  const shown = { requests: 0 };
  let headerShown = false;
  let output = null;
  const show = (gen, r) => {
    gen.arrivedBy.set(r.pid, (gen.arrivedBy.get(r.pid) || 0) + 1);
    if (!gen.keeps(r.ns, r.pid)) return;         // the other tracer's, at a handover
    if (gen.plan.only && !gen.plan.only.has(r.pid)) return;
    shown.requests++;
    if (args.latency) { stats.add(r); return; }
    if (args.json) output.write(records.renderJSONLine(r, { wallMinusMonoNs: ctx.wallMinusMonoNs }));
    else {
      if (!headerShown) { output.write(records.HEADER); headerShown = true; }
      output.write(records.renderLine(r, { wallMinusMonoNs: ctx.wallMinusMonoNs }));
    }
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
  const identities = new Map();
  const identityOf = (pid) => {
    if (!identities.has(pid)) identities.set(pid, identify(pid));
    return identities.get(pid);
  };
  const stats = new LatencyStats({ by: args.by, merge: args.merge, identify: identityOf });
  const shown = { requests: 0 };
  const minUs = Math.round((args.slowerThan || 0) * 1000);
  let child = null;
  const output = new LineOutput(() => (child ? [{ session: { child } }] : []));
  let headerShown = false;
  const show = (done) => {
    for (const r of done) {
      // A connection whose requests are not read (HTTP/2): a line of its
      // own, in no histogram (the closing lines count them).
      if (r.connection && args.latency) continue;
      if (!r.connection && r.us < minUs) continue;
      if (!r.connection) shown.requests++;
      if (args.latency) { stats.add(r); continue; }
      if (args.json) { output.write(records.renderJSONLine(r, { wallMinusMonoNs: ctx.wallMinusMonoNs })); continue; }
      if (!headerShown) { output.write(records.HEADER); headerShown = true; }
      output.write(records.renderLine(r, { wallMinusMonoNs: ctx.wallMinusMonoNs }));
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
  return `PID ${pid} is a cluster primary: its ${c.workers.length === 1 ? 'worker serves' : `${c.workers.length} workers serve`} the requests, PID ${workers}. `
    + `Trace one with nodetrace http -p ${c.workers[0].pid}.`;
}

// --container NAME: its Node process, then traced as -p PID is (its hook
// where it has one, else the wire).
function withContainerPid(args) {
  if (args.container === undefined) return args;
  const { pid, note } = resolveOneTarget(args, oneProcessHost(), { command: 'http' });
  if (note) process.stderr.write(safeText(`nodetrace: ${note}`) + '\n');
  return { ...args, pid: String(pid), container: undefined };
}

function handler(args) {
  return runTraceCommand(withContainerPid(args), { name: 'http', tracer: tracerFor, plan, run, report });
}

module.exports = {
  ...listed('http'),
  builder,
  handler,
};
