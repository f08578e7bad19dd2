'use strict';
// Worker thread of usdt-target.js: declares a provider in this thread and
// fires one of its probes, then reports how often the callback ran.
const { parentPort, workerData, threadId } = require('worker_threads');
const usdt = require('../../lib/usdt');

const { provider, probes, probe, values, times } = workerData;
const dtp = usdt.createDTraceProvider(provider);
for (const def of probes) dtp.addProbe(...def);
dtp.enable();
const p = dtp[probe];
let calls = 0;
let fired = 0;
for (let i = 0; i < times; i++) {
  if (p.fire(() => { calls++; return values; }) === true) fired++;
}
parentPort.postMessage({ ok: true, calls, fired, threadId, status: usdt.status() });
