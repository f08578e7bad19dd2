#!/usr/bin/env node
'use strict';
// How well `nodetrace profile` names JavaScript frames from V8's metadata
// (no flag on the target), against a truth: the target runs with
// --perf-basic-prof, so /tmp/perf-PID.map names every JIT frame. One
// profile of each target, with the modules the command uses
// (d-scripts/profile-js.bt, lib/profile/js-frames.js, lib/symbolize.js):
// each sampled frame of the main thread is named both ways in the same run,
// the V8 walk's name (what nameStacks shows) beside the perf map's name of
// the same return address. Targets (bench/naming-target.js):
//   steady  functions of every kind, a few calls deep
//   churn   the same allocating heavily, a full GC every 300 ms (--expose-gc)
//   many    5,000 distinct generated functions, no flag (as unprepared as a
//           service is): how long naming takes after the trace ends
// Counts are of frames, weighted by samples. A frame is JavaScript when the
// perf map names it; "agree" compares the function (file:line:column, then
// the whole text) of the two names. Unnamed frames are split by why (in a
// sample taken in the kernel, deeper than the walk); frames at code the
// perf map names more than one way (V8 reused that code space: its last
// name may be a later function's) are counted apart, as the truth is
// ambiguous there. NAMING_DEBUG=1 prints each disagreement's chains.
//
//   sudo node bench/profile-naming.js [--seconds 10] [--many-seconds 30]
//        [--hz 99] [--functions 5000] [--only steady,churn,many] [--json]
// NODETRACE_BPFTRACE picks another bpftrace (lib/tracer/detect.js).
const fs = require('fs');
const path = require('path');
const readline = require('readline');
const { spawn } = require('child_process');
const options = require('./options');
const { detectBpftrace } = require('../lib/tracer/detect');
const { rawUserStackEnv } = require('../lib/tracer/capabilities');
const { openJsFrames, profileFrame } = require('../lib/profile/js-frames');
const { parseProfile, userAddresses } = require('../lib/profile/parse');
const { nameStacks, isV8Code } = require('../lib/profile/name-stacks');
const { userFrame } = require('../lib/profile/frames');
const { Symbolizer } = require('../lib/symbolize');
const { splitAtEndMarker } = require('../lib/tracer/output-formats');

const ROOT = path.join(__dirname, '..');
const PROGRAM = path.join(ROOT, 'd-scripts', 'profile-js.bt');
const TARGET = path.join(__dirname, 'naming-target.js');
// The program's walk (d-scripts/profile-js.bt unroll(64)): deeper frames are never named from V8.
const WALK_FRAMES = 64;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function startTarget(mode, { perfMap, functions }) {
  const flags = [...(perfMap ? ['--perf-basic-prof'] : []), ...(mode === 'churn' ? ['--expose-gc'] : [])];
  const child = spawn(process.execPath, [...flags, TARGET], {
    stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NAMING_MODE: mode, NAMING_FUNCTIONS: String(functions) },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => { out += d; if (/^ready \d+$/m.test(out)) resolve(child); });
    child.on('exit', (code) => reject(new Error(`naming-target.js (${mode}) exited (${code})`)));
  });
}

/**
 * One profile of a target, named as `nodetrace profile` names it.
 * -> { pid, parsed, names (SampleNames), symbolizer, snap, during/afterMs (SFI naming) }
 */
async function profileOnce(tracer, child, { hz, seconds }) {
  const pid = child.pid;
  const opened = openJsFrames(pid);
  if (opened.note) throw new Error(opened.note);
  const names = opened.names;
  const symbolizer = new Symbolizer();
  // (CODE as the command gives it: what each frame's code inlined is read too.)
  const bt = spawn(tracer.path, [PROGRAM, String(hz), String(pid), String(opened.shared), String(opened.code)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...rawUserStackEnv(tracer), BPFTRACE_MAP_KEYS_MAX: '65536' },
  });
  let err = '';
  bt.stderr.setEncoding('utf8');
  bt.stderr.on('data', (d) => { err += d; });
  const lines = [];
  let ended = false;
  let duringMs = 0;
  let afterMs = 0;
  let ready;
  const started = new Promise((r) => { ready = r; });
  readline.createInterface({ input: bt.stdout }).on('line', (line) => {
    lines.push(line);
    if (/^Sampling PID/.test(line)) ready();
    // Each SFI is named as it is printed (every second while tracing; the rest at the end).
    const t0 = process.hrtime.bigint();
    names.take(line);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (ended) afterMs += ms; else duringMs += ms;
  });
  const closed = new Promise((r) => bt.on('close', r));
  await Promise.race([started, closed]);
  await sleep(seconds * 1000);
  // What the perf map held as the trace ended: every frame sampled until then.
  const snap = symbolizer.snapshot(pid);
  ended = true;
  const endedAt = process.hrtime.bigint();
  bt.kill('SIGINT');
  const code = await closed;
  if (code !== 0 && !lines.includes('Tracing ended.')) {
    throw new Error(`bpftrace failed (${code}): ${err.split('\n').filter((l) => !/WARNING|RLIMIT/.test(l)).slice(0, 4).join(' | ')}`);
  }
  const tracerExitMs = Number(process.hrtime.bigint() - endedAt) / 1e6;
  const parsed = parseProfile(splitAtEndMarker(lines).maps);
  return { pid, parsed, names, symbolizer, snap, duringMs, afterMs, tracerExitMs };
}

/**
 * Pure but for symbolizing: every user frame of the main thread's samples,
 * named by the perf map and by the V8 walk -> the counts.
 */
function compare({ pid, parsed, names, symbolizer, snap }) {
  const stacks = parsed.stacks.filter((s) => s.tid === pid);
  const { pcs, returns } = userAddresses(stacks);
  const a = symbolizer.symbolize(snap, pcs, { allPcs: true });
  const b = symbolizer.symbolize(snap, returns, { allReturnAddresses: true });
  const perf = new Map();
  pcs.forEach((x, i) => perf.set('pc:' + x, a.frames[i]));
  returns.forEach((x, i) => perf.set('ret:' + x, b.frames[i]));
  const reused = reusedCode(snap, stacks);
  const c = { samples: 0, ambiguous: 0, ambiguousWrong: 0, jsFrames: 0, both: 0, sameFunction: 0, sameText: 0,
    unnamed: 0, inKernel: 0, jsInKernel: 0, wrongInKernel: 0, noChain: 0, beyondWalk: 0, v8Only: 0, jitUnnamedByMap: 0,
    wrong: new Map(), wrongAt: new Map(), missed: new Map() };
  for (const s of stacks) {
    c.samples += s.count;
    const chain = s.chain ? names.chain(s.chain) : new Map();
    s.user.forEach((f, i) => {
      const raw = perf.get((i === 0 ? 'pc:' : 'ret:') + f.toLowerCase());
      if (!raw) return;
      const truth = userFrame(raw);
      const v8 = isV8Code(raw) ? chain.get(i) : null;
      const shown = v8 ? profileFrame(v8) : null;
      if (truth.category === 'jit') c.jitUnnamedByMap += s.count;
      if (truth.category !== 'js') { if (shown) c.v8Only += s.count; return; }
      c.jsFrames += s.count;
      if (s.kernel.length) c.jsInKernel += s.count;
      if (!shown) {
        c.unnamed += s.count;
        if (i >= WALK_FRAMES) c.beyondWalk += s.count;
        // Sampled in the kernel: walked from the user registers the kernel
        // saved (none found where no pt_regs matched).
        else if (s.kernel.length) c.inKernel += s.count;
        else if (!s.chain) c.noChain += s.count;
        c.missed.set(truth.name, (c.missed.get(truth.name) || 0) + s.count);
        return;
      }
      c.both += s.count;
      // Code space reused: the perf map names this address more than one
      // way, and its last name (the symbolizer's) may be a later function's.
      const ambiguous = reused.has((i === 0 ? 0 : -1) + parseInt(f, 16));
      if (ambiguous) c.ambiguous += s.count;
      if (where(shown.name) !== where(truth.name) && ambiguous) c.ambiguousWrong += s.count;
      if (where(shown.name) === where(truth.name)) c.sameFunction += s.count;
      else {
        const key = `${shown.name}  ≠  ${truth.name}`;
        c.wrong.set(key, (c.wrong.get(key) || 0) + s.count);
        c.wrongAt.set(i, (c.wrongAt.get(i) || 0) + s.count);
        if (s.kernel.length) c.wrongInKernel += s.count;
        if (process.env.NAMING_DEBUG) {
          const perfNames = s.user.slice(0, i + 2).map((x, j) => { const r = perf.get((j === 0 ? 'pc:' : 'ret:') + x.toLowerCase()); return r ? userFrame(r).name.split(' ')[0] : x; });
          console.error(`at ${i}: perf ${perfNames.join(' | ')}   V8 ${[...chain].map(([d, r]) => `${d}=${r.name}`).join(', ')}`);
        }
      }
      if (shown.name === truth.name) c.sameText += s.count;
    });
  }
  return c;
}

// The sampled code addresses that more than one function's code covered
// during the run (entries of the perf map as the snapshot saw it).
function reusedCode(snap, stacks) {
  const wanted = new Set();
  for (const s of stacks) {
    s.user.forEach((f, i) => { if (/^0x/i.test(f)) wanted.add(parseInt(f, 16) - (i === 0 ? 0 : 1)); });
  }
  const names = new Map();
  const pm = snap.perfMap;
  if (!pm || pm.fd === undefined) return new Set();
  const buf = Buffer.alloc(pm.size);
  fs.readSync(pm.fd, buf, 0, pm.size, 0);
  const sorted = [...wanted].sort((a, b) => a - b);
  for (const line of buf.toString('utf8').split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/i.exec(line);
    if (!m) continue;
    const start = parseInt(m[1], 16);
    const end = start + parseInt(m[2], 16);
    // (the first sampled address at or after start)
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (sorted[mid] < start) lo = mid + 1; else hi = mid; }
    for (let k = lo; k < sorted.length && sorted[k] < end; k++) {
      const set = names.get(sorted[k]) || new Set();
      set.add(m[3].replace(/^(JS|LazyCompile|Function):[~^+*]?/, ''));
      names.set(sorted[k], set);
    }
  }
  return new Set([...names].filter(([, set]) => set.size > 1).map(([a]) => a));
}

// "name /file.js:3:17" -> "/file.js:3:17": where the function starts.
function where(name) {
  return name.slice(name.lastIndexOf(' ') + 1);
}

function top(map, n) {
  return [...map].sort((x, y) => y[1] - x[1]).slice(0, n).map(([k, v]) => `${v}× ${k}`);
}

function pct(n, d) {
  return d ? `${(100 * n / d).toFixed(2)}%` : 'n/a';
}

async function accuracy(tracer, mode, o) {
  const child = await startTarget(mode, { perfMap: true, functions: o.functions });
  try {
    await sleep(2000);   // warmed up: its hot functions compiled and optimized
    const run = await profileOnce(tracer, child, o);
    try {
      const c = compare(run);
      return { mode, seconds: o.seconds, hz: o.hz, ...c, wrongFrames: c.both - c.sameFunction, wrong: top(c.wrong, 8),
        missed: top(c.missed, 8) };
    } finally {
      run.symbolizer.release(run.snap);
      run.names.close();
    }
  } finally {
    child.kill('SIGKILL');
    fs.rmSync(`/tmp/perf-${child.pid}.map`, { force: true });   // the perf map the flag made
  }
}

// The many-function target without the flag: what naming adds after the trace ends.
async function namingTime(tracer, o) {
  const child = await startTarget('many', { perfMap: false, functions: o.functions });
  try {
    await sleep(3000);
    const run = await profileOnce(tracer, child, { hz: o.hz, seconds: o.manySeconds });
    try {
      const timed = (f) => { const t0 = process.hrtime.bigint(); const r = f(); return { r,
        ms: Number(process.hrtime.bigint() - t0) / 1e6 }; };
      // First without V8's names (loads the ELF symbols: the same either way), then again, then with them.
      const cold = timed(() => nameStacks(run.parsed, run.symbolizer, run.snap));
      const plain = timed(() => nameStacks(run.parsed, run.symbolizer, run.snap));
      const withV8 = timed(() => nameStacks(run.parsed, run.symbolizer, run.snap, { js: run.names }));
      let jit = 0;
      let named = 0;
      let frames = 0;
      for (const s of withV8.r.stacks) {
        if (s.tid !== run.pid) continue;
        for (const f of s.frames) {
          frames += s.count;
          if (f.category === 'jit') jit += s.count;
          if (f.category === 'js') named += s.count;
        }
      }
      const distinct = [...run.names.names.values()].filter(Boolean).length;
      return {
        functions: o.functions, seconds: o.manySeconds, hz: o.hz,
        samples: run.parsed.stacks.filter((s) => s.tid === run.pid).reduce((x, s) => x + s.count, 0),
        distinctSfis: run.names.names.size, distinctNamed: distinct, sfiNamingDuringMs: run.duringMs,
        sfiNamingAfterMs: run.afterMs,
        tracerExitMs: run.tracerExitMs, nameStacksColdMs: cold.ms, nameStacksPlainMs: plain.ms,
        nameStacksWithV8Ms: withV8.ms,
        addedAfterEndMs: run.afterMs + Math.max(0, withV8.ms - plain.ms), jsNamed: named, jitUnnamed: jit, frames,
      };
    } finally {
      run.names.close();
    }
  } finally {
    child.kill('SIGKILL');
  }
}

async function main() {
  const tracer = detectBpftrace();
  if (!tracer.available) throw new Error(`bpftrace: ${tracer.reason}`);
  const o = {
    seconds: options.number('seconds', 10), manySeconds: options.number('many-seconds', 30), hz: options.number('hz', 99),
    functions: options.number('functions', 5000),
  };
  const only = options.string('only', 'steady,churn,many').split(',');
  const report = { bpftrace: tracer.version, node: process.version, hz: o.hz };
  for (const mode of ['steady', 'churn']) if (only.includes(mode)) report[mode] = await accuracy(tracer, mode, o);
  if (only.includes('many')) report.many = await namingTime(tracer, o);
  if (options.flag('json')) { console.log(JSON.stringify(report, null, 1)); return; }
  console.log(`bpftrace ${report.bpftrace}, node ${report.node}, ${o.hz} Hz; frames of the main thread, weighted by samples`);
  const modes = ['steady', 'churn'].filter((m) => report[m]);
  if (modes.length) {
    const row = (label, f) => console.log(`${label.padEnd(52)}${modes.map((m) => String(f(report[m])).padStart(22)).join('')}`);
    row('', (r) => `${r.mode} (${r.seconds} s)`);
    row('samples', (r) => r.samples);
    row('JavaScript frames (named by the perf map)', (r) => r.jsFrames);
    row('named by both', (r) => r.both);
    row('agree: same function (goal >= 99%)', (r) => `${r.sameFunction} ${pct(r.sameFunction, r.both)}`);
    row('agree: same text', (r) => `${r.sameText} ${pct(r.sameText, r.both)}`);
    row('named without the map (goal >= 95%)', (r) => pct(r.both, r.jsFrames));
    row('of the JS frames: named and right', (r) => pct(r.sameFunction, r.jsFrames));
    row('of the JS frames: unnamed', (r) => `${r.unnamed} ${pct(r.unnamed, r.jsFrames)}`);
    row('  of which deeper than the walk\'s 64 frames', (r) => r.beyondWalk);
    row('  of which in samples taken in the kernel', (r) => r.inKernel);
    row('  of which in other samples with no chain', (r) => r.noChain);
    row('of the JS frames: wrong (goal <= 0.5%)', (r) => `${r.wrongFrames} ${pct(r.wrongFrames, r.jsFrames)}`);
    row('  of which at the sampled pc (depth 0)', (r) => r.wrongAt.get(0) || 0);
    row('  of which in samples taken in the kernel', (r) => r.wrongInKernel);
    row('JS frames in samples taken in the kernel', (r) => r.jsInKernel);
    row('named by both, at code the map names 2+ ways', (r) => r.ambiguous);
    row('  of which disagree', (r) => r.ambiguousWrong);
    row('wrong where the map is unambiguous', (r) => `${r.wrongFrames - r.ambiguousWrong} ${pct(r.wrongFrames - r.ambiguousWrong, r.jsFrames - r.ambiguous)}`);
    row('named by V8 only (interpreted, builtins)', (r) => r.v8Only);
    row('JIT frames the perf map does not name', (r) => r.jitUnnamedByMap);
    for (const m of modes) {
      for (const w of report[m].wrong) console.log(`  ${m} wrong: ${w}`);
      for (const w of report[m].missed) console.log(`  ${m} unnamed: ${w}`);
    }
  }
  const n = report.many;
  if (n) {
    const ms = (x) => `${Math.round(x)} ms`;
    console.log(`\n${n.functions} generated functions, no flag, ${n.seconds} s at ${n.hz} Hz: ${n.samples} samples, ${n.distinctSfis} distinct SFIs captured (${n.distinctNamed} named)`);
    console.log(`  SFIs named while tracing (every second): ${ms(n.sfiNamingDuringMs)} in all; after the end: ${ms(n.sfiNamingAfterMs)}`);
    console.log(`  bpftrace's exit after SIGINT: ${ms(n.tracerExitMs)}`);
    console.log(`  nameStacks: ${ms(n.nameStacksColdMs)} the first time (ELF symbols), ${ms(n.nameStacksPlainMs)} without V8's names, ${ms(n.nameStacksWithV8Ms)} with them`);
    console.log(`  added after the trace ends by V8 naming (goal <= 2 s): ${ms(n.addedAfterEndMs)}`);
    console.log(`  frames: ${n.jsNamed} JavaScript named, ${n.jitUnnamed} JIT unnamed, of ${n.frames}`);
  }
}

if (require.main === module) main().catch((err) => { console.error(`profile-naming: ${err.message}`); process.exit(1); });

module.exports = { compare, where };
