'use strict';
// For test/gc.test.js: makes V8 collect garbage in known ways, steadily:
// young objects that die at once (scavenges), and every GC_FULL_MS a
// global.gc() when run with --expose-gc (mark-compact pauses), while an
// old-generation array grows and is dropped (incremental marking).
//   GC_FULL_MS  how often a full GC is forced (default 500 ms)
// Its own count, the truth a trace is held to: the first SIGUSR2 marks a
// start, the second an end, and 300 ms later (once V8 has handed them
// over) it prints the collections that started between the two by
// PerformanceObserver's kind, and the time between the marks:
// "gc {"minor":N,"major":N,...,"ms":MS}".
const { PerformanceObserver, performance, constants } = require('perf_hooks');

const FULL_MS = Number(process.env.GC_FULL_MS || 500);
let old = [];

setInterval(() => {
  // About 5 MB of short-lived objects a tick: several scavenges a second.
  for (let i = 0; i < 50000; i++) ({ i, s: 'x' + i });
  // Kept a while, then dropped: old-generation garbage for incremental marking.
  for (let i = 0; i < 2000; i++) old.push({ i, a: new Array(8).fill(i) });
  if (old.length > 200000) old = [];
}, 10);

if (typeof global.gc === 'function') setInterval(() => global.gc(), FULL_MS);

const KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};
const seen = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) seen.push({ at: e.startTime, kind: KINDS[(e.detail || e).kind] || 'other' });
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
process.stdout.write(`ready ${process.pid}\n`);
