#!/usr/bin/env node
'use strict';
// What `nodetrace profile` costs the profiled, and what --perf-basic-prof
// costs: a CPU-bound workload (bench/cpu-workload.js) in four processes,
// untraced, profiled by nodetrace profile (99 Hz unless --hz), started with
// --perf-basic-prof, and both. All four run at once, the profiler attached
// for the whole run, but only one is ever running: the others are
// SIGSTOPped, so each is measured on the same machine, round after round;
// each profiled round is also divided by the untraced round just before it
// (paired ratios: their median and range say how much the machine's own
// drift blurs the figure).
// Also the tracer's own CPU time (bpftrace, and nodetrace), and what each
// sample costs in the kernel: the run time the kernel counts for the BPF
// program (kernel.bpf_stats_enabled, on for the run and restored after;
// read from /proc/PID/fdinfo of the tracer's program), which a busy machine
// does not blur as it blurs throughput. Needs root and bpftrace.
// With --off-cpu: `nodetrace profile --off-cpu` instead, on the workload
// with --pingpong N round trips to a worker thread per batch (default 50),
// each blocking the main thread once; its program runs on every context
// switch of the machine, and the context-switch rate is reported too.
//
//   sudo node bench/profile-overhead.js [--seconds 4] [--rounds 5] [--hz 99] [--churn | --steady]
//   sudo node bench/profile-overhead.js --off-cpu [--pingpong 50] [--seconds 4] [--rounds 5]
//   sudo node bench/profile-overhead.js --programs [--steady] ...   untraced, the walk, the perf map only
//   ... --node PATH: the workloads run on that node (Node 24 and 26: each
//   frame's code read through V8's dispatch table); --source-maps: the
//   workload is run from a copy that ends with an inline source map (each
//   frame then read where it puts them, at the report)
// profile names JavaScript from V8's metadata by default (profile-js.bt: a
// frame walk in each sample; with --off-cpu, in each wait of the main thread);
// --perf-map-only passes --no-v8-frames (profile.bt; offcpu.bt without SHARED).
const { sleep, collectLines, askForCounters } = require('./workload-lines');
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');

const ROOT = path.join(__dirname, '..');
const options = require('./options');
const SECONDS = options.number('seconds', 4);
const ROUNDS = options.number('rounds', 5);
const HZ = options.number('hz', 99);
const CHURN = options.flag('churn');
const STEADY = options.flag('steady');
const OFF_CPU = options.flag('off-cpu');
const PERF_MAP_ONLY = options.flag('perf-map-only');
// Untraced, the V8 walk and the perf map only side by side (not with --off-cpu).
const PROGRAMS = options.flag('programs');
const NODE = options.string('node', process.execPath);
const SOURCE_MAPS = options.flag('source-maps');
const PINGPONG = OFF_CPU ? options.number('pingpong', 50) : 0;
const { cpuTicks } = require('../lib/proc/stat');


const everything = [];
function cleanup() { for (const p of everything) { try { p.kill('SIGKILL'); } catch { /* gone */ } } }

// With --source-maps: a copy of the workload that ends with an inline map
// of itself (each line to itself), beside the original, as a bundler writes one.
let mappedCopy = null;
function workloadFile() {
  const file = path.join(__dirname, 'cpu-workload.js');
  if (!SOURCE_MAPS) return file;
  if (mappedCopy) return mappedCopy;
  const text = fs.readFileSync(file, 'utf8');
  const lines = text.split('\n').length;
  const map = { version: 3, sources: ['cpu-workload.ts'], names: [], mappings: ['AAAA', ...Array(lines - 1).fill('AACA')].join(';') };
  const copy = path.join(fs.mkdtempSync(path.join(require('os').tmpdir(), 'nodetrace-bench-')), 'cpu-workload.js');
  fs.writeFileSync(copy, `${text}\n//# sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(map)).toString('base64')}\n`);
  process.on('exit', () => fs.rmSync(path.dirname(copy), { recursive: true, force: true }));
  mappedCopy = copy;
  return copy;
}

function startWorkload(nodeArgs) {
  const child = spawn(NODE, [...nodeArgs, workloadFile()], {
    stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, CHURN: CHURN ? '1' : '0', STEADY: STEADY ? '1' : '0', PINGPONG: String(PINGPONG) },
  });
  everything.push(child);
  return collectLines(child);
}

async function sample(child) {
  const [, count, ns, cpuUs] = await askForCounters(child, 5000);
  return { count: Number(count), ns: BigInt(ns), cpuUs: Number(cpuUs) };
}

// CPU time (user + system, in seconds) of a process and its threads.
function cpuSeconds(pid) {
  const ticks = cpuTicks(pid);
  return ticks === null ? NaN : ticks / 100;   // USER_HZ
}

// The machine's load averages over 1, 5 and 15 minutes: how quiet it was.
function loadAverage() {
  return fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

// Context switches of the whole machine so far (/proc/stat's ctxt).
function contextSwitches() {
  return Number(/^ctxt (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'))[1]);
}

function childrenOf(pid) {
  try { return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number); } catch { return []; }
}

// nodetrace profile -p PID until SIGINT: resolves once its tracer is ready.
function startProfiler(pid, perfMapOnly) {
  const how = [...(OFF_CPU ? ['--off-cpu'] : ['-F', String(HZ)]), ...(perfMapOnly ? ['--no-v8-frames'] : [])];
  const p = spawn(process.execPath, [path.join(ROOT, 'bin/nodetrace'), 'profile', '-p', String(pid), ...how, '--json', '--top', '5'], { stdio: ['ignore', 'pipe', 'pipe'] });
  everything.push(p);
  p.out = '';
  p.stdout.setEncoding('utf8');
  p.stdout.on('data', (c) => { p.out += c; });
  p.ready = (async () => {
    for (let i = 0; i < 600; i++) {
      const tracer = childrenOf(p.pid).find((c) => { try { return /(profile|profile-js|offcpu)\.bt/.test(fs.readFileSync(`/proc/${c}/cmdline`, 'utf8')); } catch { return false; } });
      // (not `bpftrace --version`, which nodetrace runs first to learn the version)
      if (tracer) { p.tracerPid = tracer; await sleep(3000); return; }
      await sleep(100);
    }
    throw new Error('nodetrace profile did not start bpftrace');
  })();
  p.done = new Promise((resolve) => p.on('close', resolve));
  return p;
}

const STATS = '/proc/sys/kernel/bpf_stats_enabled';
let statsSeconds = 0;

// The tracer's BPF programs of one type (perf-event: 7, the profile probe;
// tracepoint: 5, sched_switch): { runs, ns }.
const PROG_TYPE = OFF_CPU ? 5 : 7;
function bpfRunTime(pid) {
  const total = { runs: 0, ns: 0 };
  let fds = [];
  try { fds = fs.readdirSync(`/proc/${pid}/fdinfo`); } catch { return total; }
  for (const fd of fds) {
    let info;
    try { info = fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'); } catch { continue; }
    if (!new RegExp(`^prog_type:\\s*${PROG_TYPE}$`, 'm').test(info)) continue;
    const ns = /^run_time_ns:\s*(\d+)$/m.exec(info);
    const runs = /^run_cnt:\s*(\d+)$/m.exec(info);
    if (ns && runs) { total.ns += Number(ns[1]); total.runs += Number(runs[1]); }
  }
  return total;
}

async function measureRounds(modes) {
  for (const m of modes) m.child.kill('SIGSTOP');
  for (let round = 0; round < ROUNDS; round++) {
    for (const m of modes) {
      m.child.kill('SIGCONT');
      await sleep(300);
      const a = await sample(m.child);
      const tracerA = m.profiler ? cpuSeconds(m.profiler.tracerPid) : 0;
      const nodetraceA = m.profiler ? cpuSeconds(m.profiler.pid) : 0;
      await sleep(SECONDS * 1000);
      const b = await sample(m.child);
      m.child.kill('SIGSTOP');
      const wall = Number(b.ns - a.ns) / 1e9;
      m.rates.push((b.count - a.count) / wall);
      m.perCpu.push((b.count - a.count) / ((b.cpuUs - a.cpuUs) / 1e6));
      if (m.profiler) {
        m.tracerCpu.push((cpuSeconds(m.profiler.tracerPid) - tracerA) / wall);
        m.nodetraceCpu.push((cpuSeconds(m.profiler.pid) - nodetraceA) / wall);
      }
    }
  }
}

async function main() {
  // `baseline`: the untraced mode each is compared with, round by round.
  const mode = (name, nodeArgs, profiled, baseline,
    perfMapOnly = PERF_MAP_ONLY) => ({ name, child: startWorkload(nodeArgs), profiled, baseline, perfMapOnly, rates: [],
      perCpu: [], tracerCpu: [], nodetraceCpu: [] });
  const modes = PROGRAMS ? [
    mode('untraced', [], false, 0),
    mode(`nodetrace profile at ${HZ} Hz (V8 walk)`, [], true, 0, false),
    mode(`nodetrace profile at ${HZ} Hz --no-v8-frames`, [], true, 0, true),
  ] : OFF_CPU ? [
    mode('untraced', [], false, 0),
    mode('nodetrace profile --off-cpu', [], true, 0),
  ] : [
    mode('untraced', [], false, 0),
    mode(`nodetrace profile at ${HZ} Hz`, [], true, 0),
    mode('--perf-basic-prof, untraced', ['--perf-basic-prof'], false, 2),
    mode(`--perf-basic-prof, nodetrace profile at ${HZ} Hz`, ['--perf-basic-prof'], true, 2),
  ];
  await sleep(1500);
  for (const m of modes.filter((x) => x.profiled)) {
    m.profiler = startProfiler(m.child.pid, m.perfMapOnly);
    await m.profiler.ready;
  }
  let statsBefore = null;
  try { statsBefore = fs.readFileSync(STATS, 'utf8').trim(); fs.writeFileSync(STATS, '1'); } catch { statsBefore = null; }
  const statsFrom = Date.now();
  const loadBefore = loadAverage();
  const switchesFrom = contextSwitches();
  let switchesPerSecond = 0;
  try {
    await measureRounds(modes);
    statsSeconds = (Date.now() - statsFrom) / 1000;
    switchesPerSecond = (contextSwitches() - switchesFrom) / statsSeconds;
    for (const m of modes.filter((x) => x.profiled)) m.bpf = bpfRunTime(m.profiler.tracerPid);
  } finally {
    if (statsBefore !== null) fs.writeFileSync(STATS, statsBefore);
  }
  for (const m of modes) m.child.kill('SIGCONT');
  for (const m of modes.filter((x) => x.profiled)) {
    m.profiler.kill('SIGINT');
    await Promise.race([m.profiler.done, sleep(120000)]);
    try {
      const report = JSON.parse(m.profiler.out);
      m.gathered = OFF_CPU ? `${report.blocks} waits (${(report.blocks / report.seconds).toFixed(0)} a second, counting the rounds it was stopped)` : `${report.samples} samples`;
    } catch { m.gathered = '?'; }
  }
  cleanup();
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const base = median(modes[0].rates);
  const baseCpu = median(modes[0].perCpu);
  const what = STEADY ? ' (steady: arithmetic 20 calls deep, no allocation)' : OFF_CPU ? `, ${PINGPONG} blocking round trips to a worker thread per 2,000 rounds` : CHURN ? ' compiling a new function each round' : '';
  console.log(`CPU-bound workload${what}, ${ROUNDS} rounds of ${SECONDS} s each, one process running at a time`
    + ` (load average before: ${loadBefore}):`);
  console.log(`  ${'mode'.padEnd(48)} ${'rounds/s'.padStart(9)} ratio  ${'per CPU-s'.padStart(9)} ratio  paired per CPU-s: median [range]`);
  for (const m of modes) {
    const med = median(m.rates);
    const cpu = median(m.perCpu);
    // Each round against its baseline's round just before it: the machine drifts less in seconds than over the run.
    const pairs = m.perCpu.map((x, i) => x / modes[m.baseline].perCpu[i]);
    const paired = m.baseline === modes.indexOf(m) ? '' : `${median(pairs).toFixed(3)} [${Math.min(...pairs).toFixed(3)}, ${Math.max(...pairs).toFixed(3)}]`;
    console.log(`  ${m.name.padEnd(48)} ${med.toFixed(0).padStart(9)} ${(med / base).toFixed(3)}  ${cpu.toFixed(0).padStart(9)} ${(cpu / baseCpu).toFixed(3)}  ${paired}`);
  }
  console.log(`  rounds/s of each round: ${modes.map((m) => `${m.name}: ${m.rates.map((x) => x.toFixed(0)).join(', ')}`).join('; ')}`);
  console.log(`  the machine switched context ${switchesPerSecond.toFixed(0)} times a second while measuring; load average after: ${loadAverage()}`);
  for (const m of modes.filter((x) => x.profiled)) {
    console.log(`  ${m.name}: bpftrace used ${(100 * median(m.tracerCpu)).toFixed(2)}% of a CPU, nodetrace ${(100 * median(m.nodetraceCpu)).toFixed(2)}%; ${m.gathered} in the report`);
    if (m.bpf && m.bpf.runs) {
      // Every CPU takes the probe HZ times a second (--off-cpu: at every
      // context switch), the target's or not; the target pays for the runs
      // that sampled it (that saw it block).
      const perRun = m.bpf.ns / m.bpf.runs;
      // Runs on other processes' samples stop at the PID test; the average
      // mixes them with the target's, so the whole program's time is given too.
      console.log(`    its BPF program ran ${m.bpf.runs} times in ${statsSeconds.toFixed(0)} s on all CPUs, ${(perRun / 1000).toFixed(2)} µs each on average, `
        + `${(m.bpf.ns / 1e6).toFixed(1)} ms in all: ${(100 * m.bpf.ns / 1e9 / statsSeconds).toFixed(3)}% of one CPU`);
    }
  }
}

process.on('SIGINT', () => { cleanup(); process.exit(130); });
// (exit at once: the race above leaves its 120 s timer pending)
main().then(() => process.exit(0), (err) => { console.error(err); cleanup(); process.exit(1); });
