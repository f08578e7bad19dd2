#!/usr/bin/env node
'use strict';
// What one sample (one wait) of `nodetrace profile` costs in the kernel, by
// the stack's depth, from the kernel's own run-time statistics of the BPF
// programs (bench/bpf-run-time.js: kernel.bpf_stats_enabled, run_cnt and
// run_time_ns in the tracer's fdinfo), which a busy host does not blur as it
// blurs throughput. Side by side in one run, per depth of JavaScript frames
// (bench/depth-workload.js: down() DEPTH deep, then a loop that never
// returns), and per program:
//   user    samples taken in user mode: `profile -p PID -F HZ` (profile-js.bt:
//           the V8 walk) and `--no-v8-frames` (profile.bt: the perf map only)
//   kernel  samples taken in a system call (read of /dev/zero): the walk
//           starts from the user registers saved on entry
//   wait    `profile --off-cpu` (offcpu.bt with SHARED: the walk in each
//           wait of the main thread; --no-v8-frames: without), a FIFO read
// Every workload and its profiler start at once; only one workload runs at
// a time (the others are SIGSTOPped), round after round, and each round
// reads every tracer's statistics before and after. The program runs on
// every CPU at each tick (offcpu.bt: at every context switch), the target's
// or not: a run for another process stops at the PID test. That floor is
// measured in the same seconds on the tracers whose workloads are stopped
// (all of their runs are such), and taken off:
//   per sample = (run time - (runs - samples) x floor) / samples
//   per wait   = (run time - (runs - 2 x waits) x floor) / waits
// (a wait takes two runs: the switch out, which walks, and the switch back
// in, which sums). Samples and waits are the main thread's, counted by the
// report (the workload runs only on it). Root and bpftrace.
//
// --baseline DIR: the V8 walk of another checkout's nodetrace (DIR/bin/
// nodetrace, e.g. main's) in place of the perf map only, paired with this
// one's in the same rounds: a change's cost, as a ratio.
//
//   sudo node bench/profile-cost.js [--depths 5,20,50,100] [--kinds user,kernel,wait]
//                                   [--seconds 2] [--rounds 3] [--hz 99] [--baseline DIR]
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const { sleep, collectLines } = require('./workload-lines');
const { enableStats, programStats, between } = require('./bpf-run-time');
const { parseFolded } = require('../lib/profile/folded');
const options = require('./options');

const ROOT = path.join(__dirname, '..');
const DEPTHS = options.string('depths', '5,20,50,100').split(',').map(Number);
const KINDS = options.string('kinds', 'user,kernel,wait').split(',');
const SECONDS = options.number('seconds', 2);
const ROUNDS = options.number('rounds', 3);
const HZ = options.number('hz', 99);
const BASELINE = options.string('baseline', null);
// BPF program types (include/uapi/linux/bpf.h): profile:hz is a perf-event
// program, sched_switch a tracepoint one.
const PERF_EVENT = 7;
const TRACEPOINT = 5;

const everything = [];
function cleanup() { for (const p of everything) { try { p.kill('SIGKILL'); } catch { /* gone */ } } }

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-profile-cost-'));

function startWorkload(kind, depth) {
  const child = spawn(process.execPath, [path.join(__dirname, 'depth-workload.js')], {
    stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, KIND: kind, DEPTH: String(depth) },
  });
  everything.push(child);
  collectLines(child);
  child.ready = (async () => {
    for (let i = 0; i < 300 && !child.lines.some((l) => l.startsWith('ready')); i++) await sleep(100);
    child.kill('SIGSTOP');
  })();
  return child;
}

function childrenOf(pid) {
  try { return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number); } catch { return []; }
}

// nodetrace profile of one stopped workload, until SIGINT: resolves once its bpftrace runs.
function startProfiler(m) {
  m.folded = path.join(dir, `${m.name.replace(/\W+/g, '-')}.folded`);
  const args = ['profile', '-p', String(m.child.pid), ...(m.kind === 'wait' ? ['--off-cpu'] : ['-F', String(HZ)]),
    ...(m.walk ? [] : ['--no-v8-frames']), '--json', '--top', '1', '--folded', m.folded];
  const p = spawn(process.execPath, [path.join(m.baseline ? path.resolve(BASELINE) : ROOT, 'bin/nodetrace'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  everything.push(p);
  m.command = `nodetrace ${args.slice(0, -2).join(' ').replace(String(m.child.pid), 'PID')}`;
  p.out = '';
  p.err = '';
  p.stdout.setEncoding('utf8');
  p.stdout.on('data', (c) => { p.out += c; });
  p.stderr.setEncoding('utf8');
  p.stderr.on('data', (c) => { p.err += c; });
  p.done = new Promise((resolve) => p.on('close', resolve));
  p.ready = (async () => {
    for (let i = 0; i < 1200; i++) {
      const tracer = childrenOf(p.pid).find((c) => { try { return /(profile|profile-js|offcpu)\.bt/.test(fs.readFileSync(`/proc/${c}/cmdline`, 'utf8')); } catch { return false; } });
      // (loaded once its program fds are there: the run counts start then)
      if (tracer && programStats(tracer).some((s) => s.type === m.type)) { p.tracerPid = tracer; return; }
      await sleep(100);
    }
    throw new Error(`${m.name}: nodetrace profile did not start bpftrace: ${p.err.trim()}`);
  })();
  return p;
}

// The program that samples (profile:hz; not interval:s:1, also a perf-event
// one) or that runs at each switch: the tracer's one of that type with the most runs.
function mainProgram(stats, type) {
  return stats.filter((s) => s.type === type).sort((a, b) => b.runs - a.runs)[0] || { runs: 0, ns: 0 };
}

function loadAverage() { return fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '); }

// Main-thread stacks of a folded file -> { frames: weighted median of frames a stack, down: the same of down() frames }.
function depthOf(file) {
  let stacks = [];
  try { stacks = parseFolded(fs.readFileSync(file, 'utf8')).filter((s) => /\(main thread\)$/.test(s.frames[0])); } catch { return {}; }
  const median = (key) => {
    const xs = stacks.map((s) => ({ v: key(s), n: s.count })).sort((a, b) => a.v - b.v);
    let left = xs.reduce((t, x) => t + x.n, 0) / 2;
    for (const x of xs) { left -= x.n; if (left <= 0) return x.v; }
    return NaN;
  };
  return { frames: median((s) => s.frames.length - 1),
    down: median((s) => s.frames.filter((f) => /^down /.test(f)).length) };
}

async function main() {
  const modes = [];
  for (const kind of KINDS) {
    for (const depth of DEPTHS) {
      for (const walk of [true, false]) {
        const baseline = Boolean(BASELINE) && !walk;
        modes.push({ kind, depth, walk: walk || baseline, baseline, type: kind === 'wait' ? TRACEPOINT : PERF_EVENT,
          name: `${kind} depth ${depth} ${walk ? 'V8 walk' : baseline ? 'V8 walk, baseline' : 'perf map only'}`, ns: 0, runs: 0 });
      }
    }
  }
  for (const m of modes) m.child = startWorkload(m.kind, m.depth);
  await Promise.all(modes.map((m) => m.child.ready));
  // A few at a time: each bpftrace compiles its program (seconds of CPU).
  for (let i = 0; i < modes.length; i += 4) {
    const some = modes.slice(i, i + 4);
    for (const m of some) m.profiler = startProfiler(m);
    await Promise.all(some.map((m) => m.profiler.ready));
  }
  await sleep(2000);
  const floor = { [PERF_EVENT]: { ns: 0, runs: 0 }, [TRACEPOINT]: { ns: 0, runs: 0 } };
  const restoreStats = enableStats();
  const loadBefore = loadAverage();
  const started = Date.now();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const m of modes) {
        const before = modes.map((x) => programStats(x.profiler.tracerPid));
        m.child.kill('SIGCONT');
        await sleep(SECONDS * 1000);
        m.child.kill('SIGSTOP');
        await sleep(50);
        modes.forEach((x, i) => {
          const d = mainProgram(between(before[i], programStats(x.profiler.tracerPid)), x.type);
          const into = x === m ? x : floor[x.type];
          into.ns += d.ns;
          into.runs += d.runs;
        });
      }
    }
  } finally {
    restoreStats();
  }
  const seconds = (Date.now() - started) / 1000;
  const loadAfter = loadAverage();
  for (const m of modes) m.profiler.kill('SIGINT');
  for (const m of modes) {
    await Promise.race([m.profiler.done, sleep(120000)]);
    try {
      const report = JSON.parse(m.profiler.out);
      m.events = m.kind === 'wait' ? report.blocks : (report.threads.find((t) => t.role === 'main') || { samples: 0 }).samples;
      m.inKernel = m.kind === 'kernel' ? (report.categories.find((c) => c.category === 'kernel') || { share: NaN }).share : null;
    } catch { m.events = NaN; m.error = (m.profiler.err || m.profiler.out).trim().split('\n').slice(-2).join(' '); }
    Object.assign(m, depthOf(m.folded));
  }
  cleanup();
  fs.rmSync(dir, { recursive: true, force: true });

  const floorNs = (type) => floor[type].ns / floor[type].runs;
  console.log(`nodetrace profile's BPF program, by JavaScript depth: ${ROUNDS} rounds of ${SECONDS} s of each workload, one running at a time,`
    + ` ${modes.length} tracers attached (${seconds.toFixed(0)} s; load average before ${loadBefore}, after ${loadAfter})`);
  console.log(`  floor (a run for another process, measured on the tracers whose workload was stopped): profile:hz ${floorNs(PERF_EVENT).toFixed(0)} ns`
    + ` over ${floor[PERF_EVENT].runs} runs; sched_switch ${floorNs(TRACEPOINT).toFixed(0)} ns over ${floor[TRACEPOINT].runs} runs`);
  console.log(`  ${'workload, program'.padEnd(34)} ${'frames'.padStart(6)} ${'down()'.padStart(6)} ${'runs'.padStart(7)} ${'ns/run'.padStart(7)} ${'samples'.padStart(8)}  ns per sample (wait)`);
  for (const m of modes) {
    const f = floorNs(m.type);
    const own = m.kind === 'wait' ? 2 * m.events : m.events;
    const per = (m.ns - (m.runs - own) * f) / m.events;
    const kernel = m.inKernel === null ? '' : `  (${(100 * m.inKernel).toFixed(0)}% of samples in the kernel)`;
    console.log(`  ${m.name.padEnd(34)} ${String(m.frames ?? '?').padStart(6)} ${String(m.down ?? '?').padStart(6)} ${String(m.runs).padStart(7)} ${(m.ns / m.runs).toFixed(0).padStart(7)} ${String(m.events).padStart(8)}  ${per.toFixed(0).padStart(6)}${kernel}${m.error ? `  ${m.error}` : ''}`);
  }
  if (BASELINE) {
    const perOf = (m) => (m.ns - (m.runs - (m.kind === 'wait' ? 2 * m.events : m.events)) * floorNs(m.type)) / m.events;
    for (let i = 0; i < modes.length; i += 2) {
      console.log(`  ${modes[i].kind} depth ${modes[i].depth}: this checkout / ${BASELINE} ${(perOf(modes[i]) / perOf(modes[i + 1])).toFixed(2)}`);
    }
  }
  console.log('  (frames: the weighted median of frames in a main-thread stack as the report names them; down(): how many of them the report named down)');
  console.log('  commands: ' + [...new Set(modes.map((m) => m.command.replace(/ -F \d+/, ` -F ${HZ}`)))].join('; '));
}

process.on('SIGINT', () => { cleanup(); process.exit(130); });
main().then(() => process.exit(0), (err) => { console.error(err); cleanup(); process.exit(1); });
