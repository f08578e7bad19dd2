'use strict';
// For test/gc.test.js: makes V8 collect garbage in known ways, steadily:
// young objects that die at once (scavenges), and every GC_FULL_MS a
// global.gc() when run with --expose-gc (mark-compact pauses), while an
// old-generation array grows and is dropped (incremental marking).
//   GC_FULL_MS  how often a full GC is forced (default 500 ms)
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
process.stdout.write(`ready ${process.pid}\n`);
