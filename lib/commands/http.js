'use strict';
// nodetrace http: one line per HTTP request that Node processes served or
// made, with status and latency (nhttpsnoop for today's Node), or latency
// histograms per route. The processes run with `node -r nodetrace/register`,
// which fires nodetrace:::http-*-request-done (lib/http/hook.js).
const { UserError, EXIT } = require('../errors');
const proc = require('../proc');
const { requireRoot } = require('../privilege');
const { requireTracer } = require('../tracer/detect');
const { planTracer, renderPlan } = require('../tracer/plan');
const { TracerSession, abnormalEnd } = require('../tracer/session');
const { describeTracerFailure } = require('../tracer/failure');
const libraries = require('../usdt/probe-libraries');
const { HTTP_PROVIDER } = require('../http/probes');
const records = require('../http/records');
const { durationOption, checkDuration, dryRunOption } = require('./common-options');

const SCRIPT = 'http';
const PREPARE = 'Start it with the hook: node -r nodetrace/register app.js (ES modules: node --import nodetrace/register app.mjs, '
  + 'or NODE_OPTIONS="--require nodetrace/register"); its probes appear with its first HTTP request.';

function builder(y) {
  return y
    .usage('$0 http (-p PID | \'*\') [options]\n\n'
      + 'One line per completed HTTP request, served (http/https servers, Express, Fastify) or made\n'
      + '(http.request, fetch): time, PID, direction, method, status, latency, URL. The processes\n'
      + 'run with `node -r nodetrace/register`; untraced, that costs a semaphore read per request.')
    .positional('target', { type: 'string', describe: "'*': every process of this user started with the hook, now or later" })
    .option('pid', { alias: 'p', type: 'string', describe: 'Trace this process (started with the hook)' })
    .option('duration', durationOption('Stop after this many seconds (default: Ctrl-C)'))
    .option('slower-than', { type: 'number', describe: 'Only requests that took at least this many ms (filtered in the tracer)' })
    .option('latency', { alias: 'l', type: 'boolean', default: false, describe: 'Latency histograms per direction, method and route instead of lines' })
    .option('by', { choices: ['route', 'status'], default: 'route', describe: 'With -l: one histogram per route or per status' })
    .option('json', { type: 'boolean', default: false, describe: 'One JSON object per request (with -l: the histograms as JSON)' })
    .option('backend', { choices: ['bpftrace'], describe: 'Tracer to use (http.d for DTrace is not written yet)' })
    .option('dry-run', dryRunOption())
    .check((a) => {
      const target = a.target;
      if (a.pid === undefined && target === undefined) throw new Error("Give a process: -p PID, or '*' for every process started with the hook.");
      if (a.pid !== undefined && target !== undefined) throw new Error("Give either -p PID or '*', not both.");
      if (target !== undefined && String(target) !== '*') {
        throw new Error(`http takes -p PID or '*'; "${target}" is neither (process names are not supported yet: use pgrep).`);
      }
      checkDuration(a);
      const s = a.slowerThan;
      if (s !== undefined && !(Number.isFinite(s) && s >= 0 && s <= 86400000)) throw new Error('--slower-than expects milliseconds, e.g. --slower-than 100.');
      return true;
    })
    .example('sudo $0 http -p 4242', 'every request of process 4242, as it completes')
    .example("sudo $0 http '*' --slower-than 100", 'requests over 100 ms in every prepared process, also those started later')
    .example('sudo $0 http -p 4242 -l -d 30', 'latency histograms per route after 30 seconds')
    .example('$0 http -p 4242 -n', 'show exactly what would run');
}

/** The tracer run: the probe library to attach to, the PID filter, the threshold. */
function plan(args, tracer) {
  if (tracer.name !== 'bpftrace') {
    throw new UserError('nodetrace http runs on bpftrace only for now (d-scripts/http.d is not written yet).', { hint: 'Use --backend bpftrace.' });
  }
  const minUs = Math.round((args.slowerThan || 0) * 1000);
  const o = { script: SCRIPT, env: { BPFTRACE_STRLEN: '200' } };
  let library;
  if (args.pid !== undefined) {
    const pid = proc.parsePid(args.pid);
    proc.requireNodeProcess(pid);
    const found = libraries.librariesOf(pid, HTTP_PROVIDER);
    if (!found.length) {
      throw new UserError(`PID ${pid} has no nodetrace HTTP probes: it was not started with nodetrace/register, or has made or served no HTTP request yet.`,
        { hint: PREPARE, exitCode: EXIT.NOT_FOUND });
    }
    library = found[0];
    // With -p, bpftrace enables the probes' semaphores in that process only.
    o.pid = pid;
    o.positional = [library, pid, minUs];
    o.describe = `HTTP requests of PID ${pid}`;
  } else {
    // The file every process of this user maps (content-addressed): made now
    // if need be, so that processes started later are covered.
    library = libraries.createOwnLibrary(HTTP_PROVIDER);
    if (!library) throw new UserError('could not create the probe library for nodetrace\'s HTTP probes.', { hint: 'Run nodetrace doctor.' });
    o.positional = [library, 0, minUs];
    o.describe = 'HTTP requests of every process started with nodetrace/register';
    o.notes = ['Only processes of this user: other users\' processes map their own copy of the library.'];
  }
  return planTracer(tracer, o);
}

function wallMinusMonoNs() {
  return BigInt(Date.now()) * 1000000n - process.hrtime.bigint();
}

async function handler(args) {
  const tracer = requireTracer(args.backend || 'bpftrace');
  const p = plan(args, tracer);
  if (args.dryRun) {
    process.stdout.write(renderPlan(p));
    return;
  }
  requireRoot('nodetrace http');
  const offset = wallMinusMonoNs();
  const joiner = new records.RequestJoiner();
  const seen = [];
  let headerShown = false;
  const session = new TracerSession(p, {
    durationSeconds: args.duration,
    onLine: (line) => {
      const r = joiner.push(line);
      if (!r) return;
      if (args.latency) { seen.push(r); return; }
      if (args.json) process.stdout.write(records.renderJSONLine(r, { wallMinusMonoNs: offset }));
      else {
        if (!headerShown) { process.stdout.write(records.HEADER); headerShown = true; }
        process.stdout.write(records.renderLine(r, { wallMinusMonoNs: offset }));
      }
      seen.push(r);
    },
  });
  const result = await session.run();
  if (!result.ready && result.endReason === null) throw describeTracerFailure(tracer, result, p.argv.includes('-p') ? Number(args.pid) : undefined);
  if (!result.ready) return;
  if (args.latency) {
    const o = { by: args.by };
    process.stdout.write(args.json ? records.histogramsJSON(seen, o) : records.renderHistograms(seen, o));
  } else if (!seen.length) {
    process.stderr.write(`nodetrace: no HTTP request completed${args.slowerThan ? ` slower than ${args.slowerThan} ms` : ''} while tracing.\n`);
  }
  const broken = abnormalEnd(result, p);
  if (broken) throw new UserError(`${broken}; the results are incomplete.`);
}

module.exports = {
  command: 'http [target]',
  describe: 'One line per HTTP request (server and client, fetch too) with status and latency, or histograms per route',
  builder,
  handler,
  plan,
};
