'use strict';
// nodetrace probes: the USDT probes of live processes, an application's own
// dtrace-provider probes first (lib/usdt), listed (`dtrace -l -n
// 'myapp*:::'`), or traced: one line per firing with its arguments read as
// their declared types, counts (--count), or a latency histogram between
// two probes (--latency START END). Linux, bpftrace: DTrace for Linux reads
// no stapsdt notes (docs/probes.md).
const { listed } = require('./list');
const fs = require('fs');
const { UserError, UsageError, EXIT } = require('../errors');
const proc = require('../proc');
const { requireRoot } = require('../privilege');
const { requireTracer, INSTALL_HINT } = require('../tracer/detect');
const { runTraceCommand } = require('../tracer/run-command');
const { tracedSpanMs } = require('../tracer/session');
const { LineOutput } = require('../tracer/line-output');
const { safeText } = require('../terminal-safe');
const { noun } = require('../render/text');
const { targetOptions, checkTarget, targetText } = require('../targets/options');
const { durationOption, checkDuration, dryRunOption, jsonOption, backendOption } = require('./common-options');
const { identify } = require('../proc/identity');
const { processProbes } = require('../probes/inventory');
const list = require('../probes/list');
const { parseSpec, specMatches } = require('../probes/spec');
const libraries = require('../probe-libraries');
const targets = require('../probes/targets');
const { planProbes, latencyKeyRefusal, argumentsRead } = require('../probes/program');
const { ProbeFollower, ProbeGeneration, ProcessLibraryWatch } = require('../probes/follow');
const { WATCH_EVERY_MS } = require('../probe-libraries/library-follower');
const { onTerminationSignals } = require('../tracer/signals');
const firings = require('../probes/firings');
const probeReport = require('../probes/report');

// --wait's bound: a wait longer than a day is a mistake, not a plan.
const MAX_WAIT_SECONDS = 86400;

// -p and --container name the processes: then every word is a probe.
function split(a) {
  const words = [...(a.target !== undefined ? [String(a.target)] : []), ...(a.probes || []).map(String)];
  if ([a.pid, a.container, a.pod].some((v) => v !== undefined)) return { target: undefined, specs: words };
  return { target: words[0], specs: words.slice(1) };
}

// The target as text (-p's PIDs, or the first word), as the others read it.
function targetOf(args) {
  return args.pid !== undefined ? targetText(args) : split(args).target;
}

function builder(y) {
  targetOptions(y.usage('$0 probes (<target> | -p PID | --container NAME | --pod NAME) [PROVIDER:PROBE ...] [options]\n\n'
      + 'The USDT probes of live processes: the providers an application made with the\n'
      + 'dtrace-provider API (node -r nodetrace/register, or nodetrace/lib/usdt), with their\n'
      + 'argument types and whether a tracer has them on, then every other stapsdt probe of the\n'
      + 'objects they map (libstdc++\'s, ...). Given PROVIDER:PROBE globs (\'myapp*:request-*\',\n'
      + 'or dtrace\'s \'myapp*:::request-*\'), it traces them: one line per firing with its\n'
      + 'arguments read as their types (strings, integers, JSON), --count, or --latency.\n'
      + '<target> is a PID (or PIDs), part of a command line, or \'*\': every provider made with\n'
      + 'the API that the globs name, in every process, also those started later.'), { many: true, container: 'all' });
  return y
    .positional('probes', { type: 'string', array: true, describe: 'PROVIDER:PROBE globs to trace (none: list them)' })
    .option('json', jsonOption('JSON: the list as one document; one object per firing; --count and --latency as one document'))
    .option('count', { type: 'boolean', default: false, describe: 'Count firings per process and probe (in the kernel) instead of one line each' })
    .option('latency', {
      type: 'string', array: true, nargs: 2, requiresArg: true,
      describe: 'START END: a latency histogram per process from START to END (each PROVIDER:PROBE), paired by an argument both have (--key)',
    })
    .option('key', { type: 'number', default: 0, describe: 'With --latency: the argument that pairs a start with its end (0: the first)' })
    .option('duration', durationOption('Stop after this many seconds (default: Ctrl-C)'))
    .option('wait', {
      type: 'number', requiresArg: true,
      describe: 'Wait up to this many seconds for the application to make a provider the globs name (default: refused at once)',
    })
    .option('backend', backendOption('Tracer (default bpftrace). DTrace for Linux reads no stapsdt notes: it cannot see these probes'))
    .option('dry-run', { ...dryRunOption(), describe: 'Print exactly what would run (tracer command line, environment, program) as a shell script, and exit; a list runs no tracer, and is printed as it is' })
    .check((a) => {
      const { target, specs } = split(a);
      checkTarget({ ...a, target }, { many: true, extra: ['container'] });
      if ([a.pid, a.container, a.pod].every((v) => v === undefined) && !specs.length && a.latency === undefined
        && /:/.test(String(target))) {
        throw new Error(`"${target}" is a probe: name the process first, e.g. nodetrace probes -p PID '${target}' (or '*' for every process with it).`);
      }
      checkDuration(a);
      for (const s of specs) parseSpec(s);
      if (a.latency !== undefined) {
        if (a.latency.length !== 2) throw new Error('--latency takes two probes: START END, e.g. --latency myapp:request-start myapp:request-done.');
        for (const s of a.latency) parseSpec(s);
        if (specs.length) throw new Error('--latency names its own probes (START END): give no others.');
        if (a.count) throw new Error('--count and --latency are two reports: choose one.');
      }
      if (a.key !== 0 && a.latency === undefined) throw new Error('--key chooses the argument --latency pairs by: give --latency START END.');
      if (!(Number.isInteger(a.key) && a.key >= 0 && a.key < 12)) throw new Error('--key expects an argument\'s place, from 0 (the first) to 11.');
      if (a.count && !specs.length) throw new Error('--count counts the probes given: name them, e.g. nodetrace probes -p PID --count \'myapp:*\'.');
      if (!specs.length && a.latency === undefined && a.duration !== undefined) throw new Error('-d applies to a trace: name the probes to trace (PROVIDER:PROBE).');
      if (a.wait !== undefined) {
        if (!(Number.isFinite(a.wait) && a.wait > 0 && a.wait <= MAX_WAIT_SECONDS)) throw new Error(`--wait expects seconds, more than 0 and at most ${MAX_WAIT_SECONDS}.`);
        if (!specs.length && a.latency === undefined) throw new Error('--wait waits for probes to trace: name them (PROVIDER:PROBE).');
      }
      return true;
    })
    .example('sudo $0 probes -p 4242', 'every USDT probe of process 4242: its own providers first, then its libraries\'')
    .example("sudo $0 probes -p 4242 'myapp:*'", 'one line per firing of provider myapp\'s probes, arguments as declared')
    .example("sudo $0 probes my-service 'bunyan:log-*' --json", 'bunyan\'s probes in processes whose command line has "my-service", as JSON')
    .example("sudo $0 probes -p 4242 'myapp:*' --count -d 10", 'how often each fired in 10 seconds')
    .example('sudo $0 probes -p 4242 --latency myapp:request-start myapp:request-done', 'a histogram of start-to-done times, paired by the first argument')
    .example("sudo $0 probes '*' 'myapp:request-done'", 'every process with provider myapp, also those started later')
    .example("sudo $0 probes -p 4242 'myapp:*' --wait 60", 'the same, waiting up to a minute for the application to make provider myapp')
    .example("$0 probes -p 4242 'myapp:*' -n", 'show exactly what would run');
}

// Linux's USDT probes are stapsdt notes: bpftrace reads them, DTrace for Linux does not.
function tracerFor(args) {
  if (args.backend === 'dtrace' || process.platform !== 'linux') {
    throw new UserError(`nodetrace probes traces with bpftrace on Linux: the probes are stapsdt USDT probes, which DTrace for Linux does not read${process.platform === 'linux' ? '' : `, and on ${process.platform} dtrace itself lists and traces them`}.`,
      { hint: process.platform === 'linux' ? 'Use --backend bpftrace (the default).' : 'Use dtrace -l -n \'myapp*:::\' and dtrace -n \'myapp*:::request-start { ... }\'.' });
  }
  try {
    return requireTracer('bpftrace');
  } catch (err) {
    // The common hint offers DTrace for Linux as the other choice: not here.
    if (err instanceof UserError && err.hint === INSTALL_HINT) {
      err.hint = 'Install bpftrace (Debian/Ubuntu: sudo apt-get install -y bpftrace; Fedora/RHEL: sudo dnf install bpftrace): DTrace for Linux cannot see these probes.';
    }
    throw err;
  }
}

// --- listing ---------------------------------------------------------------

function listProbes(args) {
  requireRoot('nodetrace probes');
  const processes = targets.resolveProcesses({ target: targetOf(args), container: args.container, pod: args.pod });
  const pids = processes.kind === 'all' ? targets.processesWithProviders() : processes.pids;
  if (processes.kind === 'all' && !pids.length) {
    throw new UserError('no process maps a provider made with the dtrace-provider API.', { hint: 'Start one with node -r nodetrace/register app.js, or list one process\'s probes: nodetrace probes -p PID.', exitCode: EXIT.NOT_FOUND });
  }
  const rows = [];
  for (const pid of pids) {
    const found = processProbes(pid);
    if (!found) continue;
    rows.push({ who: identify(pid), command: proc.commandLine(pid).join(' '), objects: found.objects });
  }
  if (!rows.length) throw new UserError(`PID ${pids.join(', ')} exited before its probes were read.`, { exitCode: EXIT.NOT_FOUND });
  process.stdout.write(args.json ? list.renderJson(rows) : list.renderText(rows));
}

// --- tracing ---------------------------------------------------------------

function modeOf(args) {
  return args.latency ? 'latency' : args.count ? 'count' : 'lines';
}

// The probes asked for, each with its role (latency: start or end).
function chosenProbes(args, candidates, where) {
  if (!args.latency) return targets.matchProbes(split(args).specs.map(parseSpec), candidates, { where })
    .map((p) => ({ ...p, role: null }));
  const [start, end] = args.latency.map(parseSpec);
  const starts = targets.matchProbes([start], candidates, { where });
  const ends = targets.matchProbes([end], candidates, { where });
  const both = starts.find((p) => ends.includes(p));
  if (both) throw new UsageError(`--latency's START and END both name ${both.provider}:${both.name}: give a start probe and an end probe.`);
  return [...starts.map((p) => ({ ...p, role: 'start' })), ...ends.map((p) => ({ ...p, role: 'end' }))];
}

function describeProbes(clauses) {
  const names = [...new Set(clauses.map((c) => `${c.probe.provider}:${c.probe.name}`))];
  return names.length <= 4 ? names.join(', ') : `${names.length} probes (${names.slice(0, 3).join(', ')}, ...)`;
}

// A tracer's plan for these clauses.
function planClauses(tracer, args, processes, clauses, { opened, sites, notes = [], later = false }) {
  const how = targets.attachment(tracer, processes, clauses, opened, { later });
  const { pids, only } = targets.pidSlots(processes);
  const mode = modeOf(args);
  if (mode === 'latency') {
    const why = latencyKeyRefusal(tracer, clauses.map((c) => c.probe), args.key);
    if (why) throw new UsageError(`--latency cannot pair by argument ${args.key}: ${why}.`, 'Choose the argument both probes carry the same value in with --key N (0: the first).');
  }
  const plan = planProbes(tracer, {
    mode,
    pid: how.pid,
    pids,
    key: args.key,
    sites,
    probes: clauses.map((c) => ({ ...c.probe, library: how.libraryOf(c) })),
    describe: describeProbes(clauses),
    notes: [...notes, ...(opened.size ? [] : clauses.some((c) => c.object.api) && !how.pid ? ['nodetrace points the tracer at its own verified descriptor of each probe library; by hand, at the files'] : [])],
  });
  const unread = clauses.filter((c) => argumentsRead(tracer, c.probe) < c.probe.kinds.length);
  for (const c of unread) plan.warnings.push(`${tracer.name} ${tracer.version} reads the first ${argumentsRead(tracer, c.probe)} of the ${c.probe.kinds.length} arguments of ${c.probe.provider}:${c.probe.name} (the rest from 0.24).`);
  plan.only = only;
  return plan;
}

// The trace's first plan, and what following it needs.
function plan(args, tracer) {
  const processes = targets.resolveProcesses({ target: targetOf(args), container: args.container, pod: args.pod });
  const specs = args.latency ? args.latency.map(parseSpec) : split(args).specs.map(parseSpec);
  const { candidates, where, refused, matcher } = targets.candidatesOf(processes, specs);
  if (processes.kind === 'all' && !candidates.length) {
    throw new UserError(`no process on this host has a provider made with the dtrace-provider API that ${specs.map((s) => `"${s.text}"`).join(', ')} names.`,
      { hint: 'List a process\'s providers with: nodetrace probes -p PID', exitCode: EXIT.NOT_FOUND });
  }
  const chosen = chosenProbes(args, candidates, where);
  const { clauses, notes, sites } = targets.clausesOf(chosen, { tracer, specs, where });
  for (const r of refused) notes.push(`not reading ${r.path}: ${r.why}.`);
  // Probe libraries in a trace of several processes or '*' are held open,
  // checked, for the tracer (lib/probe-libraries/index.js OpenedLibraries);
  // not for a dry run, which names the files.
  const p = planClauses(tracer, args, processes, clauses, { opened: new Map(), sites, notes });
  const one = processes.kind === 'pids' && processes.pids.length === 1 ? processes.pids[0] : null;
  if (processes.note) p.warnings.unshift(`tracing ${processes.note}.`);
  p.target = one ? { pid: one } : null;
  p.details.onePid = p.argv.includes('-p');
  p.details = { ...p.details, processes, clauses, specs, matcher, sites, notes };
  return p;
}

// The probes of libraries that appeared, as a plan (null: none asked for).
function laterPlan(tracer, args, first, libs, opened) {
  const { processes, specs } = first.details;
  const wanted = [];
  for (const file of libs) {
    const v = libraries.openVerified(file, first.details.matcher);
    if (v.refused) continue;
    fs.closeSync(v.fd);
    for (const p of targets.libraryProbes({ path: file, provider: v.provider, uid: v.uid })) {
      if (!specs.some((s) => specMatches(s, p))) continue;
      const role = args.latency ? (specMatches(specs[0], p) ? 'start' : 'end') : null;
      wanted.push({ ...p, role, pid: processes.kind === 'pids' ? processes.pids[0] : null });
    }
  }
  if (!wanted.length) return null;
  const { clauses, sites } = targets.clausesOf(wanted, { tracer, specs, where: 'the libraries that appeared' });
  return planClauses(tracer, args, processes, clauses, { opened, sites, later: true });
}

async function run(firstPlan, ctx) {
  const { args, tracer } = ctx;
  const { processes } = firstPlan.details;
  const mode = modeOf(args);
  const say = (text) => process.stderr.write(safeText(`nodetrace: ${text}`, { oneLine: true }) + '\n');
  for (const n of firstPlan.details.notes) say(n);
  const identities = new Map();
  const identityOf = (pid) => {
    if (!identities.has(pid)) identities.set(pid, identify(pid));
    return identities.get(pid);
  };
  let headerShown = false;
  const probeWidth = Math.max(...firstPlan.details.clauses.map((c) => firings.probeName(c.probe).length));
  const shown = { firings: 0 };
  const show = (gen, f) => {
    if (gen.plan.only && !gen.plan.only.has(f.pid)) return;
    shown.firings++;
    if (args.json) { output.write(firings.renderJsonLine(f, { wallMinusMonoNs: ctx.wallMinusMonoNs })); return; }
    if (!headerShown) { output.write(firings.header(probeWidth)); headerShown = true; }
    output.write(firings.renderLine(f, { wallMinusMonoNs: ctx.wallMinusMonoNs, probeWidth }));
  };
  // Our stdout full, the tracers are not read: nodetrace holds no more than a read's lines.
  let output = null;
  const follower = new ProbeFollower({
    tracer,
    provider: firstPlan.details.matcher,
    one: 'a probe library',
    many: 'probe libraries',
    verb: 'tracing',
    task: 'trace',
    say,
    planFor: (libs, opened) => (libs === initial ? first : laterPlan(tracer, args, firstPlan, libs, opened)),
    newGeneration: (p, libs) => new ProbeGeneration(p, libs),
    durationSeconds: args.duration,
    onEnding: () => { output.ending = true; output.resume(); },
    watch: processes.kind === 'pids' ? (known) => new ProcessLibraryWatch(processes.pids, known, firstPlan.details.matcher) : undefined,
    session: (gen) => ({
      statusStream: gen === follower.main ? undefined : null,
      handleSignals: false,
      onLine: (item) => {
        if (gen.reader) for (const f of gen.reader.push(item)) show(gen, f);
        else if (item && ['map', 'hist', 'stats'].includes(item.type)) gen.items.push(item);
      },
    }),
    ended: (gen) => { if (gen.reader) for (const f of gen.reader.end()) show(gen, f); },
  });
  output = new LineOutput(() => follower.generations);
  // Every probe library the first tracer covers (its other objects' probes are not followed).
  const initial = targets.coveredLibraries(firstPlan.details.clauses);
  // Several processes or '*': the tracer is pointed at verified descriptors.
  let first = firstPlan;
  if (!firstPlan.details.onePid && initial.length) {
    const opened = follower.opened.open(initial);
    for (const r of follower.opened.refused) say(`not tracing ${r.path}: ${r.why}.`);
    const kept = firstPlan.details.clauses.filter((c) => !c.object.api || opened.includes(c.object.file));
    if (!kept.length) {
      follower.opened.closeAll();
      throw new UserError('none of the probe libraries passed nodetrace\'s checks (above): nothing to trace.', { exitCode: EXIT.NOT_FOUND });
    }
    const plan2 = planClauses(tracer, args, processes, kept,
      { opened: follower.opened.fds, sites: kept.reduce((n, c) => n + c.probe.sites, 0) });
    first = Object.assign(plan2, { target: firstPlan.target, details: { ...firstPlan.details, ...plan2.details } });
  }
  // The processes traced gone, the trace is over.
  const exitWatch = processes.kind === 'pids'
    ? setInterval(() => { if (!processes.pids.some((pid) => proc.isRunning(pid))) follower.stop('target exited'); }, 500) : null;
  let result;
  try {
    result = (await follower.run(initial, { follow: true, known: initial })).result;
  } finally {
    if (exitWatch) clearInterval(exitWatch);
  }
  ctx.probes = { follower, identityOf, shown, mode };
  return { result, abnormal: () => follower.abnormalEnd() };
}

function report(result, { args, probes: state }) {
  const { follower, identityOf, shown, mode } = state;
  const gens = follower.generations.filter((g) => g.result && g.result.ready);
  const seconds = follower.main && follower.main.result ? Math.round(tracedSpanMs(follower.main.result) / 100) / 10
    : null;
  if (mode === 'lines') {
    const s = gens.reduce((t, g) => {
      for (const k of Object.keys(t)) t[k] += g.reader.stats[k];
      return t;
    }, { firings: 0, incomplete: 0, lostEvents: 0, malformed: 0, strays: 0 });
    if (s.lostEvents) process.stderr.write(`nodetrace: ${s.lostEvents} events lost: the tracer's buffer overflowed (${s.incomplete} firings shown with arguments missing, as ?); count with --count instead, which loses none.\n`);
    if (!shown.firings) process.stderr.write('nodetrace: no probe fired while tracing.\n');
    return { gathered: shown.firings > 0 };
  }
  const runs = gens.map((g) => ({ items: g.items, probes: g.plan.details.probes }));
  // More processes than the program's slots: it counted every process mapping the libraries; the targets' are kept.
  const only = follower.main.plan.only;
  const kept = (rows) => (only ? rows.filter((r) => only.has(r.pid)) : rows);
  const pids = follower.main.plan.details.processes && follower.main.plan.details.processes.kind === 'pids' ? follower.main.plan.details.processes.pids : [];
  if (mode === 'count') {
    const probes = follower.generations.flatMap((g) => g.plan.details.probes);
    const rows = kept(probeReport.counts(runs));
    const all = pids.length ? probeReport.withZeros(rows, probes, pids) : rows;
    process.stdout.write(args.json ? probeReport.renderCountsJson(all, { identityOf, seconds })
      : probeReport.renderCountsText(all, { identityOf }));
    return { gathered: true };
  }
  const rows = kept(probeReport.latencies(runs));
  const [start, end] = args.latency;
  process.stdout.write(args.json
    ? probeReport.renderLatencyJson(rows, { identityOf, start, end, key: args.key, seconds })
    : probeReport.renderLatencyText(rows, { identityOf, start, end }));
  return { gathered: true };
}

// --wait: until every glob names a probe of the processes (or, for '*',
// of the host's probe libraries), looked for as the follower looks for
// later libraries (every WATCH_EVERY_MS); the trace then begins as if they
// had been there. A process that exits, Ctrl-C or the bound ends the wait
// with nothing traced (exit 3, as a probe not found at once).
async function waitForProbes(args) {
  requireRoot('nodetrace probes');
  const specs = args.latency ? args.latency.map(parseSpec) : split(args).specs.map(parseSpec);
  const names = specs.map((sp) => `"${sp.text}"`).join(', ');
  const until = Date.now() + args.wait * 1000;
  let stopped = null;
  const stopHandling = onTerminationSignals((sig) => { stopped = sig; });
  try {
    for (let said = false; ; said = true) {
      const processes = targets.resolveProcesses({ target: targetOf(args), container: args.container, pod: args.pod });
      const { candidates, where } = targets.candidatesOf(processes, specs);
      if (specs.every((sp) => candidates.some((p) => specMatches(sp, p)))) {
        if (said) process.stderr.write(safeText(`nodetrace: ${names} now ${noun(specs.length, 'names', 'name')} probes of ${where}.`, { oneLine: true }) + '\n');
        return;
      }
      if (!said) {
        process.stderr.write(safeText(`nodetrace: no probe of ${where} matches ${names} yet: waiting up to ${args.wait} s for one to be made (Ctrl-C to stop).`, { oneLine: true }) + '\n');
      }
      for (const next = Math.min(until, Date.now() + WATCH_EVERY_MS); Date.now() < next && !stopped;) {
        await new Promise((r) => setTimeout(r, 100));
      }
      if (stopped || Date.now() >= until) {
        throw new UserError(`no probe of ${where} matching ${names} was made ${stopped ? 'before the wait was stopped' : `within ${args.wait} s`}: nothing traced.`,
          { exitCode: EXIT.NOT_FOUND });
      }
    }
  } finally {
    stopHandling();
  }
}

async function handler(args) {
  const { specs } = split(args);
  if (!specs.length && args.latency === undefined) {
    if (args.backend === 'dtrace') tracerFor(args);
    return listProbes(args);
  }
  if (args.wait !== undefined && !args.dryRun) {
    tracerFor(args);
    await waitForProbes(args);
  }
  return runTraceCommand(args, { name: 'probes', tracer: tracerFor, plan, run, report, dataOnStdout: () => true });
}

module.exports = {
  ...listed('probes'),
  builder,
  handler,
};
