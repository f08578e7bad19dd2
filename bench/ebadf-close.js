#!/usr/bin/env node
'use strict';
// What watching for a failing close() costs a close()-heavy Node workload.
//
// A worker process opens and closes /dev/null as fast as it can (two system
// calls per op, one of them the close() being watched) and reports ops/sec for
// each window of WINDOW_MS. The bench alternates windows untraced and traced
// (`nodetrace ebadf -p WORKER`, which never fires since no close() fails) and
// under the floor (a bpftrace program with an empty sys_exit_close probe: what
// any syscall-tracepoint watcher costs, whatever it does), in the same process,
// ROUNDS times, and prints the medians side by side.
//
// Workloads (--workload):
//   open-close  fs.closeSync(fs.openSync('/dev/null')): nothing but the two
//               system calls, the worst case (default)
//   read-file   fs.readFileSync() of a 4 KB file: open, fstat, read, close
//
// usage: sudo node bench/ebadf-close.js [--workload W] [--rounds N] [--window-ms MS] [--json]
// Needs root and bpftrace. Record the result in docs/performance.md.
const { spawn } = require('child_process');
// The bpftrace under test: NODETRACE_BPFTRACE's (a tier), else the PATH's.
const BPFTRACE = require('../lib/tracer/detect').detectBpftrace().path || 'bpftrace';
const path = require('path');
const os = require('os');

const options = require('./options');
const ROUNDS = options.number('rounds', 5);
const WINDOW_MS = options.number('window-ms', 3000);
const JSON_OUT = options.flag('json');
const WORKLOAD = options.string('workload', 'open-close');
const OPS = {
  'open-close': { desc: 'fs.closeSync(fs.openSync("/dev/null")) in a loop: one op = open + close', code: "fs.closeSync(fs.openSync('/dev/null', 'r'))" },
  'read-file': { desc: 'fs.readFileSync() of a 4 KB file in a loop: one op = open + fstat + read + close', code: 'fs.readFileSync(FILE)' },
};
if (!OPS[WORKLOAD]) { process.stderr.write(`--workload: one of ${Object.keys(OPS).join(', ')}\n`); process.exit(2); }
const FILE = path.join(os.tmpdir(), `ebadf-bench-${process.pid}.txt`);
const NODETRACE = path.join(__dirname, '..', 'bin', 'nodetrace');

const WORKER = `
const fs = require('fs');
const FILE = ${JSON.stringify(FILE)};
let ops = 0;
process.on('message', (m) => {
  if (m !== 'measure') return;
  ops = 0;
  const t0 = process.hrtime.bigint();
  const end = Date.now() + ${WINDOW_MS};
  while (Date.now() < end) {
    for (let i = 0; i < 1000; i++) { ${OPS[WORKLOAD].code}; ops++; }
  }
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  process.send({ opsPerSec: ops / secs });
});
process.send('ready');
`;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function once(emitter, event, test = () => true) {
  return new Promise((resolve) => {
    const on = (x) => { if (test(x)) { emitter.removeListener(event, on); resolve(x); } };
    emitter.on(event, on);
  });
}

const DEBUG = process.env.BENCH_DEBUG ? (...a) => process.stderr.write(`[${new Date().toISOString()}] ${a.join(' ')}\n`) : () => {};

async function measure(worker) {
  DEBUG('measure');
  worker.send('measure');
  const m = await once(worker, 'message', (x) => x && x.opsPerSec);
  return m.opsPerSec;
}

async function startTracing(pid) {
  DEBUG('start tracing');
  const nt = spawn(NODETRACE, ['ebadf', '-p', String(pid), '-o', os.tmpdir()], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  nt.stderr.setEncoding('utf8');
  await new Promise((resolve, reject) => {
    nt.stderr.on('data', (d) => { err += d; if (/watching PID/.test(err)) resolve(); });
    nt.on('exit', (code) => reject(new Error(`nodetrace exited (${code}) before attaching:\n${err}`)));
  });
  return nt;
}

// The floor: the same tracepoint with nothing in it.
async function startFloor() {
  DEBUG('start floor');
  const bt = spawn(BPFTRACE, ['-e', 'BEGIN { printf("ready\\n"); } tracepoint:syscalls:sys_exit_close { }'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  bt.stdout.setEncoding('utf8');
  bt.stderr.setEncoding('utf8');
  bt.stderr.on('data', (d) => { err += d; });
  await new Promise((resolve, reject) => {
    bt.stdout.on('data', (d) => { out += d; if (/ready/.test(out)) resolve(); });
    bt.on('exit', (code) => reject(new Error(`bpftrace exited (${code}) before attaching:\n${err}`)));
  });
  return bt;
}

async function stopFloor(bt) {
  if (bt.exitCode !== null || bt.signalCode !== null) return;
  const done = new Promise((resolve) => bt.on('exit', resolve));
  // SIGTERM, again until it ends: bpftrace 0.17 can miss one (docs/platforms.md).
  const again = setInterval(() => bt.kill('SIGTERM'), 1000);
  bt.kill('SIGTERM');
  await done;
  clearInterval(again);
}

async function stopTracing(nt) {
  DEBUG('stop tracing', nt.exitCode, nt.signalCode);
  if (nt.exitCode !== null || nt.signalCode !== null) return;
  const done = new Promise((resolve) => nt.on('exit', resolve));
  nt.kill('SIGINT');
  await done;
}

async function main() {
  if (process.getuid() !== 0) throw new Error('run as root: the traced half needs bpftrace');
  require('fs').writeFileSync(FILE, 'x'.repeat(4096));
  process.on('exit', () => require('fs').rmSync(FILE, { force: true }));
  const worker = spawn(process.execPath, ['-e', WORKER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await once(worker, 'message', (m) => m === 'ready');
  await measure(worker); // warm up
  const untraced = [];
  const traced = [];
  const floor = [];
  for (let r = 0; r < ROUNDS; r++) {
    untraced.push(await measure(worker));
    const nt = await startTracing(worker.pid);
    traced.push(await measure(worker));
    await stopTracing(nt);
    const bt = await startFloor();
    floor.push(await measure(worker));
    await stopFloor(bt);
    if (!JSON_OUT) {
      process.stderr.write(`round ${r + 1}/${ROUNDS}: untraced ${Math.round(untraced[r])} ops/s, traced ${Math.round(traced[r])} ops/s, `
        + `floor ${Math.round(floor[r])} ops/s\n`);
    }
  }
  worker.kill();
  const u = median(untraced);
  const t = median(traced);
  const f = median(floor);
  const paired = (xs) => Number((median(untraced.map((x, i) => (x - xs[i]) / x * 100))).toFixed(2));
  const result = {
    workload: OPS[WORKLOAD].desc,
    rounds: ROUNDS, windowMs: WINDOW_MS, untracedOpsPerSec: Math.round(u), tracedOpsPerSec: Math.round(t),
    overheadPercent: Number(((u - t) / u * 100).toFixed(2)),
    // Each traced window against the untraced one just before it: cancels slow drifts in the host's load.
    pairedOverheadPercent: paired(traced),
    floorOpsPerSec: Math.round(f),
    floorOverheadPercent: Number(((u - f) / u * 100).toFixed(2)),
    pairedFloorOverheadPercent: paired(floor),
    host: { cpus: os.cpus().length, loadavg: os.loadavg().map((x) => Number(x.toFixed(2))), kernel: os.release(),
      node: process.version },
  };
  if (JSON_OUT) {
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  } else {
    process.stdout.write(`\n${result.workload}\n`
      + `                 median ops/sec (${ROUNDS} windows of ${WINDOW_MS} ms each)\n`
      + `  untraced       ${result.untracedOpsPerSec}\n`
      + `  traced         ${result.tracedOpsPerSec}   (nodetrace ebadf -p PID, watching close() for EBADF)\n`
      + `  floor          ${result.floorOpsPerSec}   (bpftrace, an empty sys_exit_close probe)\n`
      + `  overhead       ${result.overheadPercent}% (median of paired windows: ${result.pairedOverheadPercent}%)\n`
      + `  floor overhead ${result.floorOverheadPercent}% (paired: ${result.pairedFloorOverheadPercent}%): what the tracepoint alone costs\n`
      + `  host           ${result.host.cpus} CPUs, load average ${result.host.loadavg.join(' ')}, Linux ${result.host.kernel}, node ${result.host.node}\n`);
  }
}

main().catch((err) => { process.stderr.write(String(err.stack || err) + '\n'); process.exit(1); });
