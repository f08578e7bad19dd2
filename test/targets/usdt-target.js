'use strict';
// Target for the USDT tests: a process that declares providers and fires
// probes when its parent (the test) asks, over the IPC channel of fork().
// It counts how often each fire callback runs, which is how the tests see
// whether a probe was enabled (callbacks run only while a tracer listens).
//
// Requests: { id, cmd, ... }; replies: { id, ok, ...result } or { id, error }.

const { Worker } = require('worker_threads');
const path = require('path');
const usdt = require('../../lib/usdt');

const providers = new Map();   // key -> provider
const calls = {};              // "provider:probe" -> callback invocations
const warnings = [];
process.on('warning', (w) => warnings.push(`${w.code || w.name}: ${w.message}`));

function countingCallback(key, values) {
  return function (...extra) {
    calls[key] = (calls[key] || 0) + 1;
    return extra.length ? extra : values;
  };
}

const handlers = {
  create({ key, provider, module, probes }) {
    const dtp = module === undefined ? usdt.createDTraceProvider(provider)
      : usdt.createDTraceProvider(provider, module);
    for (const p of probes) dtp.addProbe(...p);
    providers.set(key, dtp);
    return {};
  },
  enable({ key }) {
    providers.get(key).enable();
    return { status: usdt.status() };
  },
  disable({ key }) {
    providers.get(key).disable();
    return {};
  },
  // Fires `times` times; `values` is what the callback returns; `extra` are
  // passed through fire() to the callback (which then returns them).
  fire({ key, probe, values = [], times = 1, via = 'probe', extra }) {
    const dtp = providers.get(key);
    const ck = `${key}:${probe}`;
    const cb = countingCallback(ck, values);
    let fired = 0;
    for (let i = 0; i < times; i++) {
      const r = via === 'provider'
        ? dtp.fire(probe, cb, ...(extra || []))
        : dtp[probe].fire(cb, ...(extra || []));
      if (r === true) fired++;
    }
    return { calls: calls[ck] || 0, fired };
  },
  // Resolves once a tracer has enabled the probe (its semaphore is set):
  // bpftrace prints "Attaching N probes..." before it attaches them.
  async waitEnabled({ key, probe, timeout = 30000 }) {
    const p = providers.get(key)[probe];
    const end = Date.now() + timeout;
    while (!p._enabled()) {
      if (Date.now() > end) throw new Error(`${key}:${probe} not enabled after ${timeout} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return {};
  },
  // Creates and drops providers in a loop (with --expose-gc: collects them),
  // firing in between; distinct definitions every `distinctEvery` rounds.
  churn({ rounds = 200, distinctEvery = 10 }) {
    let fires = 0;
    for (let i = 0; i < rounds; i++) {
      const name = i % distinctEvery === 0 ? `nt_churn_${i}` : 'nt_churn';
      let dtp = usdt.createDTraceProvider(name);
      const p = dtp.addProbe('tick', 'int', 'char *');
      dtp.enable();
      if (p.fire(() => [i, 'x']) === true) fires++;
      if (i % 3 === 0) dtp.disable();
      dtp = null;
      if (global.gc && i % 20 === 0) global.gc();
    }
    if (global.gc) global.gc();
    return { fires };
  },
  // A worker thread that declares a provider and fires one probe `times` times.
  worker({ provider, probes, probe, values, times = 1 }) {
    return new Promise((resolve, reject) => {
      const w = new Worker(path.join(__dirname, 'usdt-worker.js'), {
        workerData: { provider, probes, probe, values, times },
      });
      w.once('message', (m) => resolve(m));
      w.once('error', reject);
      w.once('exit', (code) => { if (code !== 0) reject(new Error('worker exit ' + code)); });
    });
  },
  status() {
    return { status: usdt.status(), maps: usdt.loadedProbeLibraries(process.pid), warnings, pid: process.pid };
  },
  exit() {
    setImmediate(() => process.exit(0));
    return {};
  },
};

process.on('message', async (m) => {
  try {
    const result = await handlers[m.cmd](m);
    process.send({ id: m.id, ok: true, ...result });
  } catch (err) {
    process.send({ id: m.id, ok: false, error: err.stack || String(err) });
  }
});
process.on('disconnect', () => process.exit(0));
process.send({ ready: true, pid: process.pid });
