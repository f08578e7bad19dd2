#!/usr/bin/env node
'use strict';
// Where the test suite's time goes: runs each test file on its own (mocha,
// JSON reporter), one after another as a serial run would, and prints a
// Markdown table of the files by wall time (hooks and traces included: a
// file's before() that traces once is part of its cost), with each file's
// slowest tests, and the CPU time the file's processes used (mocha, its
// targets, nodetrace, the tracers: all waited for, so all counted by
// /usr/bin/time): on a 2-core machine a run of files side by side cannot
// take less than their CPU time over 2. test/README.md keeps the table of
// the last full run.
//
//   node scripts/test-times.js [--grep RE] [--out DIR] [FILE...]
//
// Default files: every test/*.test.js. The bpftrace under test is the one
// NODETRACE_BPFTRACE names (or the host's), as for mocha itself. Each
// file's JSON report is kept in DIR (default: a new directory under /tmp).
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');

const ROOT = path.join(__dirname, '..');
const MOCHA = path.join(ROOT, 'node_modules', '.bin', 'mocha');

function parseArgs(argv) {
  const opts = { grep: null, out: null, files: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--grep') opts.grep = argv[++i];
    else if (argv[i] === '--out') opts.out = argv[++i];
    else opts.files.push(argv[i]);
  }
  if (!opts.files.length) {
    opts.files = fs.readdirSync(path.join(ROOT, 'test')).filter((f) => f.endsWith('.test.js')).sort().map((f) => `test/${f}`);
  }
  return opts;
}

const seconds = (ms) => (ms / 1000).toFixed(1);

function timeFile(file, { grep, out }) {
  const report = path.join(out, path.basename(file) + '.json');
  const cpuFile = path.join(out, path.basename(file) + '.cpu');
  const args = ['-o', cpuFile, '-f', '%U %S', MOCHA, file, '--reporter', 'json', '--reporter-option', `output=${report}`];
  if (grep) args.push('--grep', grep);
  const started = Date.now();
  const run = spawnSync('/usr/bin/time', args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const wallMs = Date.now() - started;
  let cpuMs = NaN;
  try {
    const [user, sys] = fs.readFileSync(cpuFile, 'utf8').trim().split('\n').pop().split(' ').map(Number);
    cpuMs = (user + sys) * 1000;
  } catch { /* no figure */ }
  let json = { stats: {}, tests: [] };
  try { json = JSON.parse(fs.readFileSync(report, 'utf8')); } catch { /* no report: counted as failed */ }
  const slowest = json.tests.filter((t) => t.duration).sort((a, b) => b.duration - a.duration).slice(0, 3);
  return {
    file, wallMs, cpuMs, status: run.status,
    passes: json.stats.passes || 0, failures: json.stats.failures || 0, pending: json.stats.pending || 0,
    slowest: slowest.map((t) => `${t.title.slice(0, 60).replace(/\|/g, '\\|')} ${seconds(t.duration)}`),
  };
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  opts.out = opts.out || fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-test-times-'));
  fs.mkdirSync(opts.out, { recursive: true });
  const rows = [];
  for (const file of opts.files) {
    const row = timeFile(file, opts);
    rows.push(row);
    process.stderr.write(`${file}: ${seconds(row.wallMs)} s (CPU ${seconds(row.cpuMs)} s), ${row.passes} passing, ${row.failures} failing, ${row.pending} pending\n`);
  }
  const total = rows.reduce((n, r) => n + r.wallMs, 0);
  const cpu = rows.reduce((n, r) => n + r.cpuMs, 0);
  console.log(`Load at the end: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; reports in ${opts.out}`);
  console.log('');
  console.log('| file | s | CPU s | passing | failing | pending | slowest tests (s) |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const r of rows.sort((a, b) => b.wallMs - a.wallMs)) {
    console.log(`| ${r.file} | ${seconds(r.wallMs)} | ${seconds(r.cpuMs)} | ${r.passes} | ${r.failures} | ${r.pending} | ${r.slowest.join('; ')} |`);
  }
  console.log(`| all ${rows.length} files | ${seconds(total)} | ${seconds(cpu)} | | | | |`);
  if (rows.some((r) => r.status !== 0)) process.exitCode = 1;
}

main();
