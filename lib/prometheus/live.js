'use strict';
// --prometheus [HOST:]PORT on a tracing command (latency, gc, loop, async,
// http): the command's running maps served for Prometheus while it traces.
// A command gives its metrics, { read(dump) -> parsed (pure), render(parsed
// | null, { labels, state }) -> { text, state } (pure) }, or instead of
// read, current() -> its running figures (http keeps them itself, in user
// space, and its program prints no dump); the rest is here,
// the same for every command: the option, the program's LIVE slot, the
// labels of the traced process, the dumps taken from the session, and the
// endpoint (lib/prometheus/server.js), which listens only once the target
// is planned, so that a command that cannot trace never says it serves.
const { UserError, UsageError } = require('../errors');
const { instantiateSlot, declaredSlot } = require('../tracer/template');
const { LiveDumps } = require('./live-dumps');
const { parseListen, urlOf } = require('./listen');
const { serveMetrics } = require('./server');

// A program's LIVE slot is declared as `/CONDITION && 0/`: never true as
// the script is; --prometheus fills it with `/CONDITION/` (while the
// window is open: `@phase == 1`; loop.bt, which has none: while tracing).
const LIVE_DECLARED = /^\/(.+) && 0\/$/;

/** The --prometheus option, `what` the command's words for what it serves. */
function prometheusOption(what, { scope = 'bpftrace, one process' } = {}) {
  return {
    type: 'string', requiresArg: true,
    describe: `Serve ${what} at http://[HOST:]PORT/metrics for Prometheus (HOST default 127.0.0.1; PORT 0: any free port, said on stderr) `
      + `until Ctrl-C or the target's exit, then print the report (docs/prometheus.md). ${scope}`,
  };
}

// For .check(): the address reads, and nothing that ends the trace or
// changes what its series are is asked with it: the endpoint runs as long
// as the trace, whose end is the operator's (Ctrl-C) or the target's.
// `clashes`: [[argument key, its flag], ...] beyond -d.
function checkPrometheus(a, clashes = []) {
  if (a.prometheus === undefined) return;
  parseListen(a.prometheus);
  const clash = [['duration', '-d'], ...clashes].find(([k]) => a[k] !== undefined && a[k] !== false);
  if (clash) throw new Error(`--prometheus serves a running trace of one process until Ctrl-C or its exit: not with ${clash[1]}.`);
}

/** A D script prints its aggregations only at its end: --prometheus needs bpftrace's LIVE clause. */
function requireLiveTracer(tracer) {
  if (tracer.name !== 'bpftrace') {
    throw new UsageError('--prometheus needs bpftrace: the D script prints its maps only at the end.',
      'Run it with --backend bpftrace where bpftrace is installed.');
  }
}

/**
 * The program with its LIVE clause on: its maps printed every second while
 * counting. bpftrace only (a D script prints its aggregations at its end).
 */
function withLiveClause(programText, tracer, command) {
  requireLiveTracer(tracer);
  const declared = LIVE_DECLARED.exec(declaredSlot(programText, 'LIVE') || '');
  if (!declared) throw new Error('the program declares no LIVE slot of the form /CONDITION && 0/');
  return instantiateSlot(programText, 'LIVE', `/${declared[1]}/`,
    `instantiated by nodetrace ${command} --prometheus: the maps printed every second, for its endpoint`);
}

/** The labels every series of one traced process carries: pid, and its container and pod where it has them. */
function processLabels(identity) {
  if (!identity) return [];
  const labels = [['pid', String(identity.pid)]];
  if (identity.container) labels.push(['container', identity.container.name || identity.container.id]);
  if (identity.pod) labels.push(['pod', identity.pod.name || identity.pod.uid]);
  return labels;
}

/**
 * The endpoint of a planned trace: listens (a port taken is said now,
 * before any probe is attached), says where, and reads the latest dump
 * when scraped. -> { takeLine (for the session), close() }.
 */
async function serveLive(listenText, plan, metrics) {
  const where = parseListen(listenText);
  const labels = processLabels(plan.details && plan.details.process);
  let dump = null;
  let read = null;
  let parsed = null;
  let state;
  const render = () => {
    // A command that keeps its running figures itself (http) gives them as they are now.
    if (metrics.current) parsed = metrics.current();
    else if (dump !== read) { parsed = metrics.read(dump); read = dump; }
    const out = metrics.render(parsed, { labels, state });
    state = out.state;
    return out.text;
  };
  let served;
  try {
    served = await serveMetrics(where, render);
  } catch (err) {
    throw new UserError(`--prometheus cannot listen on ${urlOf(where)}: ${err.code || err.message}.`,
      { hint: 'Choose another port (0: any free one), or an address of this host.' });
  }
  process.stderr.write(`nodetrace: serving metrics at ${urlOf(served.address)}\n`);
  if (metrics.current) return { close: served.close };
  const dumps = new LiveDumps((text) => { dump = text; });
  return { takeLine: (line) => dumps.take(line), close: served.close };
}

module.exports = { prometheusOption, checkPrometheus, requireLiveTracer, withLiveClause, processLabels, serveLive };
