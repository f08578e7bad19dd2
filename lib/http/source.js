'use strict';
// Which tracer and which source read the HTTP of `nodetrace http`'s target,
// and the first tracer's plan: the hook's probes (lib/http/plan.js) in the
// processes started with nodetrace/register, else the wire, their socket
// system calls and their OpenSSL (lib/http/wire-plan.js), for one process
// or several of one binary (a cluster). The run is lib/http/runner.js.
const fs = require('fs');
const { UserError, EXIT } = require('../errors');
const proc = require('../proc');
const { requireTracer } = require('../tracer/detect');
const { resolveTargets, hostFacts, parseTarget } = require('../probe-libraries/probe-targets');
const { pidProviderMisses } = require('../tracer/pid-provider-reach');
const { describeIdentity, identityOf: containerIdentity } = require('../proc/container');
const { targetText } = require('../targets/options');
const { resolveOneTarget, podPidsTarget, hostFacts: oneProcessHost } = require('../targets/one-process');
const { matchingPids } = require('../targets/resolve');
const { clusterFacts, clusterRoles } = require('../proc/cluster');
const { safeText } = require('../terminal-safe');
const { HTTP_PROVIDER } = require('./probes');
const { planHttp } = require('./plan');
const { planWire, MORE_PIDS } = require('./wire-plan');
const { findTlsObject } = require('./tls-object');

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

// --slower-than in the tracer's unit.
function minUs(args) {
  return Math.round((args.slowerThan || 0) * 1000);
}

// --container NAME: its Node process, then traced as -p PID is (its hook
// where it has one, else the wire); --pod NAME: the pod's Node processes
// now, as -p PID,PID... is.
function withContainerPid(args) {
  if (args.pod !== undefined) {
    const { pid, note } = podPidsTarget(args.pod, { command: 'http', verbing: 'tracing' });
    process.stderr.write(safeText(`nodetrace: ${note}`) + '\n');
    return { ...args, pid, pod: undefined };
  }
  if (args.container === undefined) return args;
  const { pid, note } = resolveOneTarget(args, oneProcessHost(), { command: 'http' });
  if (note) process.stderr.write(safeText(`nodetrace: ${note}`) + '\n');
  return { ...args, pid: String(pid), container: undefined };
}

module.exports = { HTTP, tracerFor, plan, minUs, withContainerPid };
