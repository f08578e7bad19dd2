#!/usr/bin/env node
'use strict';
// How long a nodetrace command takes to attach: seconds from spawning it to
// its "tracing ..." line on stderr (planning, the tracer's start and its
// probes attached), RUNS times, one after another. The command's output is
// discarded; NODETRACE_BPFTRACE picks the bpftrace, as for nodetrace.
//
//   sudo node bench/attach-time.js [--runs 2] -- async -p PID -d 1
//   sudo node bench/attach-time.js -- http -p PID -d 1
const path = require('path');
const { spawn } = require('child_process');
const options = require('./options');

const RUNS = options.number('runs', 2);
const dash = process.argv.indexOf('--');
const command = dash >= 0 ? process.argv.slice(dash + 1) : [];
if (!command.length) {
  console.error('usage: node bench/attach-time.js [--runs N] -- COMMAND ARGS (e.g. -- async -p PID -d 1)');
  process.exit(2);
}

function once() {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, [path.join(__dirname, '..', 'bin', 'nodetrace'), ...command], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    let seconds = null;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => {
      err += d;
      if (seconds === null && /^nodetrace: tracing /m.test(err)) seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    });
    // The next run starts once this one has ended (its probes detached).
    child.on('close', () => (seconds === null ? reject(new Error(`no "tracing" line: ${err.trim()}`)) : resolve(seconds)));
  });
}

(async () => {
  const times = [];
  for (let i = 0; i < RUNS; i++) times.push(await once());
  console.log(`nodetrace ${command.join(' ')}: attached in ${times.map((t) => `${t.toFixed(2)} s`).join(', ')}`);
})().catch((err) => { console.error(err.message); process.exitCode = 1; });
