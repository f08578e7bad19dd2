'use strict';
// For test/gc.test.js: makes V8 collect garbage in known ways, steadily:
// young objects that die at once (scavenges), and every GC_FULL_MS a
// global.gc() when run with --expose-gc (mark-compact pauses), while an
// old-generation array grows and is dropped (incremental marking).
//   GC_FULL_MS    how often a full GC is forced (default 500 ms)
//   GC_IN_WORKER  1: all that in a worker_threads Worker (named "churn")
//                 while the main thread only waits; the Worker counts its
//                 own collections (PerformanceObserver 'gc' entries: minor
//                 are scavenges, major the mark-compacts), and the main
//                 thread answers SIGUSR2 with "gc MINOR MAJOR TID THREAD_ID"
//                 (the Worker's counts so far, its TID and threadId)
// Otherwise its own count is the truth a trace is held to: the first
// SIGUSR2 marks a start, the second an end, and 300 ms later (once V8 has
// handed them over) it prints the collections that started between the
// two by PerformanceObserver's kind, and the time between the marks:
// "gc {"minor":N,"major":N,...,"ms":MS}".
//   GC_ON_SIGNAL  N: no churn; each SIGUSR2 forces N full GCs (--expose-gc)
//                 and, 300 ms later, prints "burst K: minor N major N", its
//                 collections since its start by PerformanceObserver's kind
//                 (test/gc-prometheus.test.js)
const { Worker, isMainThread, workerData } = require('worker_threads');

const FULL_MS = Number(process.env.GC_FULL_MS || 500);

function churn() {
  let old = [];
  setInterval(() => {
    // About 5 MB of short-lived objects a tick: several scavenges a second.
    for (let i = 0; i < 50000; i++) ({ i, s: 'x' + i });
    // Kept a while, then dropped: old-generation garbage for incremental marking.
    for (let i = 0; i < 2000; i++) old.push({ i, a: new Array(8).fill(i) });
    if (old.length > 200000) old = [];
  }, 10);
  if (typeof global.gc === 'function') setInterval(() => global.gc(), FULL_MS);
}

// The collections of this thread that started between each two SIGUSR2s.
function countBetweenMarks() {
  const { PerformanceObserver, performance, constants } = require('perf_hooks');
  const KINDS = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
  };
  const seen = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) seen.push({ at: e.startTime, kind: KINDS[e.detail ? e.detail.kind : e.kind] || 'other' });
    // (Kept bounded: the marks ask about the last few seconds only.)
    if (seen.length > 100000) seen.splice(0, seen.length - 50000);
  }).observe({ entryTypes: ['gc'] });
  const marks = [];
  process.on('SIGUSR2', () => {
    marks.push(performance.now());
    if (marks.length % 2) return;
    const [from, to] = marks.slice(-2);
    setTimeout(() => {
      const counts = { minor: 0, major: 0, incremental: 0, weakcb: 0 };
      for (const e of seen) if (e.at >= from && e.at <= to) counts[e.kind] = (counts[e.kind] || 0) + 1;
      counts.ms = to - from;
      process.stdout.write(`gc ${JSON.stringify(counts)}\n`);
    }, 300);
  });
}

// Full GCs on demand, each counted by the process itself.
function burstsOnSignal(perBurst) {
  const { PerformanceObserver, constants } = require('perf_hooks');
  const counts = { minor: 0, major: 0 };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = e.detail ? e.detail.kind : e.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) counts.minor++;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) counts.major++;
    }
  }).observe({ entryTypes: ['gc'] });
  let bursts = 0;
  process.on('SIGUSR2', () => {
    for (let i = 0; i < perBurst; i++) global.gc();
    const n = ++bursts;
    setTimeout(() => process.stdout.write(`burst ${n}: minor ${counts.minor} major ${counts.major}\n`), 300);
  });
  setInterval(() => {}, 1000);
}

if (process.env.GC_ON_SIGNAL) {
  burstsOnSignal(Number(process.env.GC_ON_SIGNAL));
  process.stdout.write(`ready ${process.pid}\n`);
} else if (process.env.GC_IN_WORKER !== '1') {
  churn();
  countBetweenMarks();
  process.stdout.write(`ready ${process.pid}\n`);
} else if (isMainThread) {
  // [0] minor GCs, [1] major GCs, [2] the Worker's TID: written by the Worker.
  const counts = new BigInt64Array(new SharedArrayBuffer(24));
  const worker = new Worker(__filename, { workerData: counts.buffer, name: 'churn' });
  worker.on('error', (err) => { console.error(err); process.exit(1); });
  const ready = () => {
    if (Atomics.load(counts, 2) === 0n) { setTimeout(ready, 10); return; }
    process.stdout.write(`ready ${process.pid}\n`);
  };
  ready();
  process.on('SIGUSR2', () => {
    console.log(`gc ${Atomics.load(counts, 0)} ${Atomics.load(counts, 1)} ${Atomics.load(counts, 2)} ${worker.threadId}`);
  });
} else {
  const fs = require('fs');
  const { PerformanceObserver, constants } = require('perf_hooks');
  const counts = new BigInt64Array(workerData);
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = e.detail ? e.detail.kind : e.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) Atomics.add(counts, 0, 1n);
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) Atomics.add(counts, 1, 1n);
    }
  }).observe({ entryTypes: ['gc'] });
  Atomics.store(counts, 2, BigInt(fs.readlinkSync('/proc/thread-self').split('/').pop()));
  churn();
}
