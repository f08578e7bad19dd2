'use strict';
// `async --json` reports merged: each kind (its source, Node's provider
// number and name) once, its counts added (created, callbacks, destroyed,
// created minus destroyed, and the rates: the processes' together), its
// wait and callback histograms added bucket by bucket, callback time added
// and its share of the loops' busy time read again from the sums. A kind
// grows when it grows in one of the sources (which: by source). What does
// not add is left to each source: the alive count second by second (the
// traces did not start together), the JavaScript functions (each report
// lists its ten busiest: a function outside one report's ten counted
// nothing there, so a sum would be short), --stacks' live operations. Pure.
const { readBuckets, addBuckets, bucketsJson, percentileOf, maxOf } = require('./histogram');
const { jsonInteger, jsonEstimate } = require('../render/json');
const F = require('./fields');

function readPart(p, what) {
  F.object(p, what);
  return {
    max: F.integerOrNull(p.max_us, `${what}.max_us`),
    p99: F.numberOrNull(p.p99_us, `${what}.p99_us`),
    buckets: readBuckets(p.histogram, `${what}.histogram`, { maxBuckets: F.MAX_BUCKETS }),
  };
}

function read(report) {
  return {
    tracer: F.textOrNull(report.tracer, 'tracer'),
    process: F.processOf(report),
    node_version: F.textOrNull(report.node_version, 'node_version'),
    traced_ns: F.integerOrNull(report.traced_ns, 'traced_ns'),
    loop_busy_ns: F.integerOrNull(report.loop_busy_ns, 'loop_busy_ns'),
    hook: report.hook === true,
    kinds: F.list(report.kinds, 'kinds', 4096).map((k, i) => {
      const what = `kinds[${i}]`;
      F.object(k, what);
      const callback = readPart(k.callback, `${what}.callback`);
      return {
        provider: F.numberOrNull(k.provider, `${what}.provider`),
        source: F.text(k.source, `${what}.source`),
        name: F.text(k.name, `${what}.name`),
        threads: F.numberOrNull(k.threads, `${what}.threads`),
        created: F.integer(k.created, `${what}.created`),
        created_per_s: F.numberOrNull(k.created_per_s, `${what}.created_per_s`),
        callbacks: F.integer(k.callbacks, `${what}.callbacks`),
        destroyed: F.integer(k.destroyed, `${what}.destroyed`),
        alive_delta: F.integer(k.alive_delta, `${what}.alive_delta`),
        growing: F.boolean(k.growing, `${what}.growing`),
        wait: readPart(k.wait, `${what}.wait`),
        callback: {
          ...callback,
          total_ns: F.integerOrNull(k.callback.total_ns, `${what}.callback.total_ns`),
          loop_ns: F.integerOrNull(k.callback.loop_ns, `${what}.callback.loop_ns`),
          functions: F.list(k.callback.functions || [], `${what}.callback.functions`, 64).map((fn, j) => {
            const at = `${what}.callback.functions[${j}]`;
            F.object(fn, at);
            return { function: F.textOrNull(fn.function, `${at}.function`), address: F.textOrNull(fn.address, `${at}.address`), calls: jsonInteger(F.integer(fn.calls, `${at}.calls`)), total_ns: jsonInteger(F.integer(fn.total_ns, `${at}.total_ns`)) };
          }),
        },
      };
    }),
  };
}

const sum = (values) => (values.includes(null) ? null : values.reduce((a, b) => a + b, 0n));

function mergePart(parts, what) {
  const buckets = addBuckets(parts.map((p) => p.buckets), what);
  const max = maxOf(parts.map((p) => p.max));
  return { buckets, max, json: { p50_us: percentileOf(buckets, 50, max), p99_us: percentileOf(buckets, 99, max),
    max_us: jsonInteger(max) } };
}

function merge(inputs, { bySource = false } = {}) {
  const reports = inputs.map((i) => i.report);
  const loopBusy = sum(reports.map((r) => r.loop_busy_ns));
  const alike = F.gatherRows(inputs, (r) => r.kinds, (k) => JSON.stringify([k.source, k.provider, k.name]), 'kind');
  const kinds = alike.map((parts) => {
    const k0 = parts[0].kind;
    const ks = parts.map((p) => p.kind);
    const what = `the ${k0.name} operations`;
    const wait = mergePart(ks.map((k) => k.wait), `${what}' wait`);
    const callback = mergePart(ks.map((k) => k.callback), `${what}' callbacks`);
    const loopNs = sum(ks.map((k) => k.callback.loop_ns));
    const rates = ks.map((k) => k.created_per_s);
    return {
      provider: k0.provider,
      source: k0.source,
      name: k0.name,
      threads: ks.some((k) => k.threads === null) ? null : ks.reduce((n, k) => n + k.threads, 0),
      created: jsonInteger(ks.reduce((n, k) => n + k.created, 0n)),
      created_per_s: rates.includes(null) ? null : jsonEstimate(rates.reduce((a, b) => a + b, 0)),
      callbacks: jsonInteger(ks.reduce((n, k) => n + k.callbacks, 0n)),
      destroyed: jsonInteger(ks.reduce((n, k) => n + k.destroyed, 0n)),
      alive_delta: jsonInteger(ks.reduce((n, k) => n + k.alive_delta, 0n)),
      growing: ks.some((k) => k.growing),
      alive_each_second: null,
      wait: { ...wait.json, histogram: bucketsJson(wait.buckets) },
      callback: {
        ...callback.json,
        total_ns: jsonInteger(sum(ks.map((k) => k.callback.total_ns))),
        loop_ns: jsonInteger(loopNs),
        loop_share: loopNs === null || !loopBusy ? null : jsonEstimate(Number(loopNs) / Number(loopBusy)),
        histogram: bucketsJson(callback.buckets),
        functions: null,
      },
      ...(bySource ? {
        by_source: parts.map(({ source, kind: k }) => ({
          source, created: jsonInteger(k.created), callbacks: jsonInteger(k.callbacks),
          destroyed: jsonInteger(k.destroyed),
          growing: k.growing, callback_p99_us: k.callback.p99, functions: k.callback.functions,
        })),
      } : {}),
    };
  });
  // Most loop time first, as async's own order.
  kinds.sort((a, b) => Number(BigInt(b.callback.loop_ns || 0) - BigInt(a.callback.loop_ns || 0)));
  return {
    pid: null,
    tracer: F.common(reports.map((r) => r.tracer)),
    node_version: F.common(reports.map((r) => r.node_version)),
    seconds: null,
    traced_ns: null,
    loop_busy_ns: jsonInteger(loopBusy),
    loop_thread: null,
    workers: [],
    hook: reports.every((r) => r.hook),
    unit: 'us',
    kinds,
    // One process's threads: not added across processes.
    threads: null,
    sources: inputs.map(({ source, report }) => ({ source, process: report.process, tracer: report.tracer,
      node_version: report.node_version, traced_ns: jsonInteger(report.traced_ns), hook: report.hook })),
  };
}

module.exports = { read, merge, VERSIONS: [1] };
