'use strict';
// A bench workload's stdout, line by line, and its answer to SIGUSR2: the
// workloads (test/targets/sqlite-loop.js, bench/cpu-workload.js) print one
// line of counters when asked, so a bench reads them between rounds.

function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

// Keeps the child's complete stdout lines in child.lines.
function collectLines(child) {
  child.stdout.setEncoding('utf8');
  child.lines = [];
  let buf = '';
  child.stdout.on('data', (c) => {
    buf += c;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) { child.lines.push(buf.slice(0, nl)); buf = buf.slice(nl + 1); }
  });
  return child;
}

// SIGUSR2, then the fields of the line it answers with (waiting up to waitMs
// for it; the last line so far if none came).
async function askForCounters(child, waitMs) {
  const before = child.lines.length;
  child.kill('SIGUSR2');
  for (let i = 0; i < waitMs / 10 && child.lines.length === before; i++) await sleep(10);
  return child.lines[child.lines.length - 1].split(' ');
}

module.exports = { sleep, collectLines, askForCounters };
