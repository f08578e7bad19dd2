'use strict';
// nodetrace http: one line per HTTP request that Node processes served or
// made, with status and latency (nhttpsnoop for today's Node), or latency
// histograms per route. The processes run with `node -r nodetrace/register`,
// which fires nodetrace:::http-*-request-done (lib/http/hook.js).
const { UserError } = require('../errors');
const proc = require('../proc');
const { requireTracer } = require('../tracer/detect');
const { runTraceCommand } = require('../tracer/run-command');
const { LibraryFollower, Generation } = require('../usdt/library-follower');
const { resolveTargets, hostFacts, parseTarget } = require('../usdt/probe-targets');
const { HTTP_PROVIDER } = require('../http/probes');
const { planHttp } = require('../http/plan');
const { safeText } = require('../terminal-safe');
const records = require('../http/records');
const { targetOptions, checkTarget, targetText } = require('../targets/options');
const { durationOption, checkDuration, dryRunOption } = require('./common-options');

// How `nodetrace http` names its targets and their probes (lib/usdt/probe-targets.js).
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
      + '`node -r nodetrace/register`; untraced, that costs a semaphore read per request.'), { many: true });
  return y
    .option('duration', durationOption('Stop after this many seconds (default: Ctrl-C)'))
    .option('slower-than', { type: 'number', describe: 'Only requests that took at least this many ms (filtered in the tracer)' })
    .option('latency', { type: 'boolean', default: false, describe: 'Latency histograms per direction, method and route instead of lines' })
    .option('by', { choices: ['route', 'status'], default: 'route', describe: 'With -l: one histogram per route or per status' })
    .option('json', { type: 'boolean', default: false, describe: 'One JSON object per request (with -l: the histograms as JSON)' })
    .option('backend', { choices: ['bpftrace'], describe: 'Tracer to use (the probes are USDT probes in the stapsdt format, which only bpftrace reads on Linux)' })
    .option('dry-run', dryRunOption())
    .check((a) => {
      checkTarget(a, { many: true });
      checkDuration(a);
      const s = a.slowerThan;
      if (s !== undefined && !(Number.isFinite(s) && s >= 0 && s <= 86400000)) throw new Error('--slower-than expects milliseconds, e.g. --slower-than 100.');
      return true;
    })
    .example('sudo $0 http -p 4242', 'every request of process 4242, as it completes')
    .example('sudo $0 http my-service', 'processes whose command line contains "my-service"')
    .example("sudo $0 http '*' --slower-than 100", 'requests over 100 ms in every prepared process, also those started later')
    .example('sudo $0 http -p 4242 --latency -d 30', 'latency histograms per route after 30 seconds')
    .example('$0 http -p 4242 -n', 'show exactly what would run');
}

function tracerFor(args) {
  const tracer = requireTracer(args.backend || 'bpftrace');
  if (tracer.name !== 'bpftrace') {
    throw new UserError('nodetrace http runs on bpftrace only for now: its probes are stapsdt USDT probes.', { hint: 'Use --backend bpftrace.' });
  }
  parseTarget(targetText(args), HTTP.command);   // syntax errors before anything is looked at
  return tracer;
}

// '*', PIDs or a name -> the resolved targets, and the first tracer's plan.
function plan(args, tracer) {
  if (args.pid !== undefined && !String(args.pid).includes(',')) proc.requireNodeProcess(proc.parsePid(args.pid));
  // A dry run only names this user's own probe library; a real run makes it.
  const targets = resolveTargets(HTTP, targetText(args), tracer.name, hostFacts(HTTP_PROVIDER), { create: !args.dryRun });
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
    this.received = 0;    // requests read from this tracer (before any filter)
  }

  // Requests its probes saw that it did not hand over (full batch maps).
  missed() {
    return this.reader.fired !== null && this.reader.fired > this.received ? this.reader.fired - this.received : 0;
  }
}

// The trace: the first tracer, and new ones as probe libraries appear ('*').
async function follow(firstPlan, ctx) {
  const { args, tracer } = ctx;
  const targets = firstPlan.details.targets;
  const say = (text) => process.stderr.write(safeText(`nodetrace: ${text}`) + '\n');
  for (const note of targets.notes) say(note);
  const seen = [];
  let headerShown = false;
  const show = (gen, r) => {
    gen.received++;
    if (!gen.keeps(r.ns, r.pid)) return;         // the other tracer's, at a handover
    if (gen.plan.only && !gen.plan.only.has(r.pid)) return;
    seen.push(r);
    if (args.latency) return;
    if (args.json) process.stdout.write(records.renderJSONLine(r, { wallMinusMonoNs: ctx.wallMinusMonoNs }));
    else {
      if (!headerShown) { process.stdout.write(records.HEADER); headerShown = true; }
      process.stdout.write(records.renderLine(r, { wallMinusMonoNs: ctx.wallMinusMonoNs }));
    }
  };
  // '*' follows probe libraries that appear later (another user's first
  // process with the hook): lib/usdt/library-follower.js.
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
    session: (gen) => ({
      // One status line, the first tracer's; the follower handles signals.
      statusStream: gen === follower.main ? undefined : null,
      handleSignals: false,
      onLine: (item) => { for (const r of gen.reader.push(item)) show(gen, r); },
    }),
  });
  // Libraries other than one process's own (-p) are opened and verified first.
  const single = targets.kind === 'pids' && targets.pids.length === 1 && targets.libraries.length === 1;
  const libs = single ? targets.libraries : follower.admitFirst(targets.libraries);
  const first = await follower.run(libs, { follow: targets.kind === 'all', known: targets.libraries });
  ctx.http = { follower, seen };
  return { result: first.result, abnormal: () => follower.abnormalEnd() };
}

function report(result, { args, http, broken }) {
  const { follower, seen } = http;
  const missed = follower.generations.reduce((n, g) => n + g.missed(), 0);
  if (missed) {
    const fired = follower.generations.reduce((n, g) => n + (g.reader.fired || 0), 0);
    process.stderr.write(`nodetrace: ${missed} of ${fired} requests were seen by the probes but not reported (the tracer's buffers or batch map were full).\n`);
  }
  if (args.latency) {
    const o = { by: args.by };
    process.stdout.write(args.json ? records.histogramsJSON(seen, o) : records.renderHistograms(seen, o));
  } else if (!seen.length && !broken) {
    process.stderr.write(`nodetrace: no HTTP request completed${args.slowerThan ? ` slower than ${args.slowerThan} ms` : ''} while tracing.\n`);
  }
  return { gathered: seen.length > 0 };
}

function handler(args) {
  return runTraceCommand(args, { name: 'http', tracer: tracerFor, plan, run: follow, report });
}

module.exports = {
  command: 'http [target]',
  describe: 'One line per HTTP request (server and client, fetch too) with status and latency, or histograms per route',
  builder,
  handler,
};
