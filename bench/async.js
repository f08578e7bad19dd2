#!/usr/bin/env node
'use strict';
// What `nodetrace async -p PID` costs the process it traces, side by side:
//   none     an HTTP server, untraced
//   floor    the same server while a bpftrace program that only counts the
//            same probes (AsyncReset, MakeCallback entry and return,
//            EmitDestroy, ~AsyncWrap D2/D0) is attached: the probes firing
//            alone, which no program on these probes can make cheaper
//   traced   the same server while `nodetrace async -p PID --json` runs
//   floor-entry  (--end-entry) the floor with a callback's end at an entry
//            probe (EmitTraceEventAfter's) instead of MakeCallback's uretprobe
//   traced-new   (--traced-root DIR) traced by DIR's bin/nodetrace: another
//            checkout's program, against this one's, paired
//
//   node bench/async.js [--rate 5000] [--work 0] [--seconds 3] [--rounds 7] [--sockets 32] [--stat] [--stacks] [--end-entry] [--traced-root DIR]
//   node bench/async.js --tight [--ops 200000]
//   node bench/async.js --hook [--awaits 5] [--rate ...]   (the register hook)
//   node bench/async.js --tight --hook [--ops 200000]
//   node bench/async.js --tight --traps [--ops 200000] [--rounds 3]   (a uprobe, a uretprobe: what each costs)
//
// --hook: the register hook's cost (lib/async/hook.js), side by side:
//   none      the server, untraced, without the hook
//   register  started with -r nodetrace/register, untraced (async_hooks off)
//   traced    started with -r nodetrace/register, while `nodetrace async
//             -p PID --json` runs (async_hooks on: the hook's probes and
//             the uprobes)
// The handler awaits --awaits N resolved promises before it answers (an
// async handler's few awaits: promises for the hook to see).
// The traced run's own report gives the hook's kinds and probe hits a
// request. --tight --hook: one process awaiting resolved promises back to
// back (-r register), untraced, traced, and again after the tracer left;
// beside it another with an empty async_hooks hook always on (no -r): what
// async_hooks itself costs an await.
//
// --work N: the handler builds and sends N KB of JSON (the header says how
// many µs that work takes alone); 0: "ok". 46: about 190 µs of real work a
// request in the server here (its CPU per request less "ok"'s), the ~200 µs
// the issue's case (b) sets (docs/performance.md).
//
// --stat: the handler calls fs.stat() and answers in its callback: one
// AsyncWrap (FSREQCALLBACK) created a request, where a request on a
// kept-alive connection creates none. --stacks (implies --stat): a fourth
// server, traced by `nodetrace async -p PID --json --stacks`, which walks
// the stack of each operation created and keeps the live ones'.
//
// Each server runs its own copy of the node binary: a uprobe is set on a
// file and traps in every process that maps it, whatever the program's PID
// filter (bpftrace before 0.20), so servers sharing one binary would each
// pay for the others' probes.
//
// THE MEASURE, as bench/http-overhead.js: the server's CPU time per request
// (every thread, /proc/PID/task/*/schedstat) at a fixed request rate over
// keep-alive, the cases in turn in rotated rounds, the median round, and
// the median of each round's ratio to the untraced server's (paired, with
// quartiles). The floor's counts give the probe hits per request.
//
// --tight: one process re-initializing an HTTP parser back to back (an
// AsyncWrap ended and created again each time, synchronously), untraced then
// traced: the extra time an operation and a probe hit.
const fs = require('fs');
const os = require('os');
const path = require('path');
const http = require('http');
const { spawn } = require('child_process');

const ROOT = path.join(__dirname, '..');
const options = require('./options');
const { nodeCopy } = require('./node-copy');
const { enableStats, bpftraceChild, runTimeOf } = require('./bpf-run-time');
const { load, measure: measureRound, median } = require('./http-load');
const RATE = options.number('rate', 5000);
const WORK_KB = options.number('work', 0);
const SECONDS = options.number('seconds', 3);
const ROUNDS = options.number('rounds', 7);
const SOCKETS = options.number('sockets', 32);
const OPS = options.number('ops', 200000);
const HOOK = options.flag('hook');
const STACKS = options.flag('stacks');
const STAT = STACKS || options.flag('stat');
const END_ENTRY = options.flag('end-entry');
const NEW_ROOT = options.string('traced-root', null);
const AWAITS = options.number('awaits', HOOK ? 5 : 0);
const REGISTER = path.join(ROOT, 'register.js');

// About kb KB of JSON, built anew for each request: the (b) handler's work.
const ITEM = { id: 0, name: 'nodetrace', tags: ['a', 'b', 'c'], score: 0.5, ok: true };
function jsonOf(kb) {
  const items = [];
  for (let i = 0; i < kb * 12; i++) items.push({ ...ITEM, id: i, score: Math.random() });
  return JSON.stringify(items);
}

// What that work costs alone, in this process (warmed up; the median of 9
// batches of 200), so that the figures say how much real work a request
// does: the issue's (b) asks for about 200 µs.
function workUs(kb) {
  for (let i = 0; i < 2000; i++) jsonOf(kb);
  const batches = [];
  for (let b = 0; b < 9; b++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 200; i++) jsonOf(kb);
    batches.push(Number(process.hrtime.bigint() - t0) / 200 / 1000);
  }
  return median(batches);
}

if (process.argv[2] === '--server') {
  const kb = Number(process.argv[3]);
  const awaits = Number(process.argv[4] || 0);
  const stat = process.argv[5] === 'stat';
  const server = http.createServer(awaits ? async (req, res) => {
    for (let i = 0; i < awaits; i++) await null;
    res.end('ok');
  } : stat ? (req, res) => {
    fs.stat(__filename, () => res.end('ok'));
  } : (req, res) => {
    if (!kb) return res.end('ok');
    res.setHeader('content-type', 'application/json');
    return res.end(jsonOf(kb));
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`ready ${server.address().port}\n`));
  return;
}

if (process.argv[2] === '--await-loop') {
  // Resolved promises awaited back to back: each await one promise made
  // and one reaction run (an init, a before and an after for the hook).
  // Prints the ns per await.
  const ops = Number(process.argv[3]);
  // --bare-hook: async_hooks alone, an empty hook always on (what the
  // register hook's probes add is the rest).
  if (process.argv[4] === '--bare-hook') require('async_hooks').createHook({ init() {}, before() {}, after() {}, destroy() {} }).enable();
  const run = async (n) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await null;
    return Number(process.hrtime.bigint() - t0) / n;
  };
  setInterval(() => {}, 1000);
  process.on('SIGUSR2', () => { run(ops).then((ns) => process.stdout.write(`ns ${ns.toFixed(1)}\n`)); });
  run(ops).then(() => process.stdout.write('ready\n'));
  return;
}

if (process.argv[2] === '--reset-loop') {
  // An HTTP parser initialized again and again, synchronously: each time one
  // AsyncReset (a new async ID) after ending the last (EmitDestroy), with no
  // I/O and no thread pool to blur the figure. Prints the ns per operation.
  const ops = Number(process.argv[3]);
  const { HTTPParser } = require('_http_common');
  const parser = new HTTPParser();
  const run = (n) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) parser.initialize(HTTPParser.REQUEST, {});
    return Number(process.hrtime.bigint() - t0) / n;
  };
  setInterval(() => {}, 1000);   // alive between runs
  process.on('SIGUSR2', () => process.stdout.write(`ns ${run(ops).toFixed(1)}\n`));
  run(ops);
  process.stdout.write('ready\n');
  return;
}

// `preload`: -r nodetrace/register, its probe library in `usdtDir`.
function startNode(node, args, { preload = false, usdtDir } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [...(preload ? ['-r', REGISTER] : []), __filename, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...(usdtDir ? { NODETRACE_USDT_DIR: usdtDir } : {}) },
    });
    child.stdout.setEncoding('utf8');
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /ready ?(\d*)/.exec(out);
      if (m && !child.port) { child.port = Number(m[1]) || null; resolve(child); }
    });
    child.on('exit', () => reject(new Error(`${args[0]} ended: ${out}`)));
  });
}

// `nodetrace async -p PID --json [more]`, as a user runs it (NODETRACE_BPFTRACE picks the bpftrace).
function startTracer(pid, more = [], root = ROOT) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bin', 'nodetrace'), 'async', '-p', String(pid), '--json', ...more], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => {
      err += d;
      const m = /tracing the asynchronous operations of PID \d+ with (\S+ \S+)/.exec(err);
      if (m && !child.tracer) { child.tracer = m[1]; resolve(child); }
    });
    child.report = () => out;
    child.on('exit', () => { if (!child.tracer) reject(new Error(`nodetrace async did not start: ${err}`)); });
  });
}

// A program that only counts the probes nodetrace async sets, in `pid`.
// endAtEntry (--end-entry): a callback's end at the entry of
// EmitTraceEventAfter, which MakeCallback calls right after
// InternalMakeCallback returns (its one caller in every build of the
// matrix), in place of MakeCallback's uretprobe.
const EMIT_TRACE_EVENT_AFTER = '_ZN4node9AsyncWrap19EmitTraceEventAfterENS0_12ProviderTypeEd';
function startFloor(pid, { endAtEntry = false } = {}) {
  return startCounting(pid, (f) => [
    `uprobe:$1:${f.RESET} /pid == $2/ { @hits["created"] = count(); }`,
    `uprobe:$1:${f.CALLBACK} /pid == $2/ { @hits["callback"] = count(); }`,
    endAtEntry ? `uprobe:$1:${EMIT_TRACE_EVENT_AFTER} /pid == $2/ { @hits["callback end"] = count(); }`
      : `uretprobe:$1:${f.CALLBACK} /pid == $2/ { @hits["callback return"] = count(); }`,
    `uprobe:$1:${f.DESTROY}, uprobe:$1:${f.DTOR}, uprobe:$1:${f.DELETING_DTOR} /pid == $2/ { @hits["destroyed"] = count(); }`,
  ]);
}

// bpftrace running `lines(functions)` (the probes of `pid`'s AsyncWrap
// functions: $1 the object, $2 the PID), resolved 2 s after it attached.
function startCounting(pid, lines) {
  const { detectBpftrace } = require('../lib/tracer/detect');
  const { locateAsyncWrap } = require('../lib/async/wrap-functions');
  const tracer = detectBpftrace();
  const found = locateAsyncWrap(pid);
  if (found.missing) throw new Error(found.missing);
  const program = lines(found.functions).join('\n');
  const child = spawn(tracer.path, ['-e', program, found.file, String(pid)], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.tracer = `bpftrace ${tracer.version}`;
  return new Promise((resolve, reject) => {
    let out = '';
    const take = (d) => {
      out += d;
      if (/Attach/.test(out) && !child.ready) { child.ready = true; setTimeout(() => resolve(child), 2000); }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.output = () => out;
    child.on('exit', () => { if (!child.ready) reject(new Error(`the floor's bpftrace ended: ${out}`)); });
  });
}

const loadOf = (server, seconds) => ({ port: server.port, seconds, rate: RATE, sockets: SOCKETS });
const measure = (server) => measureRound(server.pid, loadOf(server, SECONDS));
const ended = (child) => new Promise((resolve) => { if (child.exitCode !== null) resolve(); else child.on('exit', resolve); });

async function servers(dir) {
  // --hook: no floor; the register hook loaded untraced in its place.
  const cases = HOOK ? ['none', 'register', 'traced'] : ['none', 'floor', ...(END_ENTRY ? ['floor-entry'] : []), 'traced', ...(NEW_ROOT ? ['traced-new'] : []), ...(STACKS ? ['stacks'] : [])];
  const started = {};
  const attached = {};
  let requests = 0;
  try {
    for (const c of cases) {
      const preload = HOOK && c !== 'none';
      started[c] = await startNode(nodeCopy(`node-${c}`, dir), ['--server', String(WORK_KB), String(AWAITS), STAT ? 'stat' : ''],
        { preload, usdtDir: preload ? path.join(dir, `usdt-${c}`) : undefined });
    }
    if (!HOOK) attached.floor = await startFloor(started.floor.pid);
    if (END_ENTRY) attached['floor-entry'] = await startFloor(started['floor-entry'].pid, { endAtEntry: true });
    attached.traced = await startTracer(started.traced.pid);
    if (NEW_ROOT) attached['traced-new'] = await startTracer(started['traced-new'].pid, [], NEW_ROOT);
    if (STACKS) attached.stacks = await startTracer(started.stacks.pid, ['--stacks']);
    // The hook turns on within its poll (lib/async/probes.js POLL_MS) of the attach.
    if (HOOK) await new Promise((resolve) => { setTimeout(resolve, 500); });
    for (const c of cases) await load(loadOf(started[c], 1));   // warm up each server's JIT
    // The run time of each traced server's BPF programs, by the kernel's statistics.
    const bpftraceOf = { floor: attached.floor && attached.floor.pid, 'floor-entry': attached['floor-entry'] && attached['floor-entry'].pid, traced: bpftraceChild(attached.traced.pid), 'traced-new': attached['traced-new'] && bpftraceChild(attached['traced-new'].pid), stacks: attached.stacks && bpftraceChild(attached.stacks.pid) };
    const restoreStats = enableStats();
    const results = Object.fromEntries(cases.map((c) => [c, []]));
    try {
      for (let r = 0; r < ROUNDS; r++) {
        for (let i = 0; i < cases.length; i++) {
          const c = cases[(r + i) % cases.length];
          let m;
          if (bpftraceOf[c]) {
            const { result, ns } = await runTimeOf(bpftraceOf[c], () => measure(started[c]));
            m = { ...result, bpfNsPerReq: ns / result.done };
          } else {
            m = await measure(started[c]);
          }
          if (c === 'floor' || (HOOK && c === 'traced')) requests += m.done;
          results[c].push(m);
        }
      }
    } finally {
      restoreStats();
    }
    const baseCpu = median(results.none.map((x) => x.cpuUsPerReq));
    console.log(`${RATE} requests/s, handler ${AWAITS ? `${AWAITS} awaits, "ok"` : STAT ? 'fs.stat, "ok"' : WORK_KB ? `${WORK_KB} KB of JSON (${workUs(WORK_KB).toFixed(0)} µs of work alone)` : '"ok"'}, ${SECONDS} s per case, ${ROUNDS} interleaved rounds,`
      + ` node ${process.version}, ${attached.traced.tracer}; the server's CPU time per request (all threads), median round:`);
    for (const c of cases) {
      const cpu = median(results[c].map((x) => x.cpuUsPerReq));
      const rps = median(results[c].map((x) => x.rps));
      const short = results[c].filter((x) => x.rps < RATE * 0.98).length;
      const paired = results[c].map((x, r) => x.cpuUsPerReq / results.none[r].cpuUsPerReq).sort((a, b) => a - b);
      const q = (f) => paired[Math.floor(f * (paired.length - 1))].toFixed(3);
      console.log(`  ${c.padEnd(11)} ${cpu.toFixed(2).padStart(7)} µs CPU/req  x${(cpu / baseCpu).toFixed(3)}`
        + (c === 'none' ? '' : `, paired x${median(paired).toFixed(3)} [${q(0.25)}, ${q(0.75)}]`)
        + `  (${rps.toFixed(0)} req/s${short ? `; ${short} rounds under ${RATE * 0.98}` : ''})`
        + (bpftraceOf[c] ? `; its BPF programs ${median(results[c].map((x) => x.bpfNsPerReq)).toFixed(0)} ns/req` : ''));
    }
    if (NEW_ROOT) {
      const r = results['traced-new'].map((x, i) => x.cpuUsPerReq / results.traced[i].cpuUsPerReq).sort((x, y) => x - y);
      const q = (f) => r[Math.floor(f * (r.length - 1))].toFixed(3);
      console.log(`  traced-new / traced, paired: x${median(r).toFixed(3)} [${q(0.25)}, ${q(0.75)}]`);
    }
    if (END_ENTRY) {
      // The two floors against each other, round by round: what ending at an entry probe saves.
      const r = results['floor-entry'].map((x, i) => x.cpuUsPerReq / results.floor[i].cpuUsPerReq).sort((x, y) => x - y);
      const q = (f) => r[Math.floor(f * (r.length - 1))].toFixed(3);
      console.log(`  floor-entry / floor, paired: x${median(r).toFixed(3)} [${q(0.25)}, ${q(0.75)}]`);
    }
    console.log(`  rounds (µs CPU/req): ${cases.map((c) => `${c} ${results[c].map((x) => x.cpuUsPerReq.toFixed(1)).join(' ')}`).join('; ')}`);
  } finally {
    for (const t of Object.values(attached)) t.kill('SIGINT');
    await Promise.all(Object.values(attached).map(ended));
    if (HOOK && attached.traced) {
      // The hook's probe hits per request (one a callback, at its end), and
      // what was made, from the traced run's own report (warm-up included).
      let json = null;
      try { json = JSON.parse(attached.traced.report()); } catch { /* no report */ }
      const total = requests + RATE;
      if (json) {
        const hook = json.kinds.filter((k) => k.source === 'async_hooks');
        console.log(`  the hook's kinds per request (traced): ${hook.map((k) => `${k.name} ${(k.created / total).toFixed(2)} made, ${(k.callbacks / total).toFixed(2)} callbacks`).join('; ')};`
          + ` ${(hook.reduce((n, k) => n + k.callbacks, 0) / total).toFixed(2)} probe hits`);
      }
    }
    for (const c of ['floor', 'floor-entry'].filter((x) => attached[x])) {
      // Probe hits per request, from the floor's counts (warm-up included: 1 s at RATE;
      // floor-entry served as many requests as the floor).
      const hits = [...attached[c].output().matchAll(/@hits\[(.+?)\]: (\d+)/g)].map((m) => [m[1], Number(m[2])]);
      const total = requests + RATE;
      console.log(`  probe hits per request (${c}): ${hits.map(([k, n]) => `${k} ${(n / total).toFixed(2)}`).join(', ')};`
        + ` ${(hits.reduce((s, [, n]) => s + n, 0) / total).toFixed(2)} in all`);
    }
    for (const s of Object.values(started)) s.kill('SIGKILL');
  }
}

// --tight --hook: the extra time of an await (a promise made, its reaction
// run) with the hook on, over the same process untraced.
async function tightHook(dir) {
  const bare = await startNode(nodeCopy('node-bare', dir), ['--await-loop', String(OPS), '--bare-hook']);
  const target = await startNode(nodeCopy('node-tight', dir), ['--await-loop', String(OPS)], { preload: true, usdtDir: path.join(dir, 'usdt') });
  const nsOnce = (proc = target) => new Promise((resolve) => {
    let out = '';
    const on = (d) => { out += d; const m = /ns (\S+)/.exec(out); if (m) { proc.stdout.off('data', on); resolve(Number(m[1])); } };
    proc.stdout.on('data', on);
    proc.kill('SIGUSR2');
  });
  const RUNS = 5;
  try {
    const runs = { untraced: [], bare: [], traced: [], after: [] };
    for (let i = 0; i < RUNS; i++) runs.untraced.push(await nsOnce());
    for (let i = 0; i < RUNS; i++) runs.bare.push(await nsOnce(bare));
    const tracer = await startTracer(target.pid);
    await new Promise((resolve) => { setTimeout(resolve, 500); });
    for (let i = 0; i < RUNS; i++) runs.traced.push(await nsOnce());
    tracer.kill('SIGINT');
    await ended(tracer);
    await new Promise((resolve) => { setTimeout(resolve, 500); });
    for (let i = 0; i < RUNS; i++) runs.after.push(await nsOnce());
    const promise = JSON.parse(tracer.report()).kinds.find((k) => k.name === 'PROMISE');
    const base = median(runs.untraced);
    console.log(`await of a resolved promise, back to back, ${OPS} a run, ${RUNS} runs each, node ${process.version}, ${tracer.tracer}, -r register:`
      + ` untraced ${base.toFixed(0)} ns/await; an empty async_hooks hook (no -r) ${median(runs.bare).toFixed(0)} ns/await; traced ${median(runs.traced).toFixed(0)} ns/await (+${(median(runs.traced) - base).toFixed(0)});`
      + ` after the tracer left ${median(runs.after).toFixed(0)} ns/await; PROMISE created while traced: ${promise ? promise.created : 0}`);
    console.log(`  runs (ns/await): ${Object.entries(runs).map(([c, xs]) => `${c} ${xs.join(' ')}`).join('; ')}`);
  } finally {
    target.kill('SIGKILL');
    bare.kill('SIGKILL');
  }
}

async function tight(dir) {
  const target = await startNode(nodeCopy('node-tight', dir), ['--reset-loop', String(OPS)]);
  const nsOnce = () => new Promise((resolve) => {
    let out = '';
    const on = (d) => { out += d; const m = /ns (\S+)/.exec(out); if (m) { target.stdout.off('data', on); resolve(Number(m[1])); } };
    target.stdout.on('data', on);
    target.kill('SIGUSR2');
  });
  const RUNS = 5;
  try {
    const runs = { untraced: [], floor: [], traced: [] };
    for (let i = 0; i < RUNS; i++) runs.untraced.push(await nsOnce());
    const floor = await startFloor(target.pid);
    for (let i = 0; i < RUNS; i++) runs.floor.push(await nsOnce());
    floor.kill('SIGINT');
    await ended(floor);
    const tracer = await startTracer(target.pid);
    for (let i = 0; i < RUNS; i++) runs.traced.push(await nsOnce());
    tracer.kill('SIGINT');
    await ended(tracer);
    // The probe hits an operation, from the floor's counts.
    const hitCount = [...floor.output().matchAll(/@hits\[(.+?)\]: (\d+)/g)].reduce((n, m) => n + Number(m[2]), 0);
    const hits = hitCount / (OPS * RUNS);
    const base = median(runs.untraced);
    const extra = (c) => median(runs[c]) - base;
    console.log(`HTTP parser re-initialized back to back (AsyncReset), ${OPS} a run, ${RUNS} runs each, node ${process.version}, ${tracer.tracer}:`
      + ` ${hits.toFixed(2)} probe hits an operation; untraced ${base.toFixed(0)} ns/op;`
      + ` floor +${extra('floor').toFixed(0)} ns/op (${(extra('floor') / hits).toFixed(0)} ns a hit);`
      + ` traced +${extra('traced').toFixed(0)} ns/op (${(extra('traced') / hits).toFixed(0)} ns a hit)`);
    console.log(`  runs (ns/op): ${Object.entries(runs).map(([c, xs]) => `${c} ${xs.join(' ')}`).join('; ')}`);
  } finally {
    target.kill('SIGKILL');
  }
}

// --tight --traps: what each kind of probe hit costs, in the same loop
// (each re-initialization one Parser::Initialize calling one AsyncReset,
// both starting with `push %rbp`): AsyncReset's entry alone; with a
// uretprobe on it too (how async.bt ends a callback: MakeCallback's
// return); with a second entry probe instead, on Parser::Initialize (what
// ending a callback at the entry of a function MakeCallback calls last,
// such as ~InternalCallbackScope, would cost at the least). Rounds
// interleaved and rotated, each case attached anew, its runs' median.
const PARSER_INITIALIZE = '_ZN4node12_GLOBAL__N_16Parser10InitializeERKN2v820FunctionCallbackInfoINS2_5ValueEEE';
async function traps(dir) {
  const target = await startNode(nodeCopy('node-traps', dir), ['--reset-loop', String(OPS)]);
  const nsOnce = () => new Promise((resolve) => {
    let out = '';
    const on = (d) => { out += d; const m = /ns (\S+)/.exec(out); if (m) { target.stdout.off('data', on); resolve(Number(m[1])); } };
    target.stdout.on('data', on);
    target.kill('SIGUSR2');
  });
  const CASES = {
    entry: (f) => [`uprobe:$1:${f.RESET} /pid == $2/ { @hits["entry"] = count(); }`],
    'entry+return': (f) => [`uprobe:$1:${f.RESET} /pid == $2/ { @hits["entry"] = count(); }`,
      `uretprobe:$1:${f.RESET} /pid == $2/ { @hits["return"] = count(); }`],
    'entry+entry': (f) => [`uprobe:$1:${f.RESET} /pid == $2/ { @hits["entry"] = count(); }`,
      `uprobe:$1:${PARSER_INITIALIZE} /pid == $2/ { @hits["second entry"] = count(); }`],
  };
  const RUNS = 3;
  const ROUNDS_T = options.number('rounds', 3);
  const runs = { none: [], ...Object.fromEntries(Object.keys(CASES).map((c) => [c, []])) };
  let tracer = '';
  try {
    for (let r = 0; r < ROUNDS_T; r++) {
      const xs = [];
      for (let i = 0; i < RUNS; i++) xs.push(await nsOnce());
      runs.none.push(median(xs));
      const order = Object.entries(CASES);
      for (const [c, lines] of [...order.slice(r % order.length), ...order.slice(0, r % order.length)]) {
        const child = await startCounting(target.pid, lines);
        tracer = child.tracer;
        const ys = [];
        for (let i = 0; i < RUNS; i++) ys.push(await nsOnce());
        child.kill('SIGINT');
        await ended(child);
        const hits = [...child.output().matchAll(/@hits\[(.+?)\]: (\d+)/g)].map((m) => `${m[1]} ${(Number(m[2]) / (OPS * RUNS)).toFixed(2)}`);
        if (r === 0) console.log(`  ${c}: hits an operation ${hits.join(', ')}`);
        runs[c].push(median(ys));
      }
    }
    // Paired within each round: what the probe added to that round's own baseline.
    const added = (c, base) => runs[c].map((x, r) => x - runs[base][r]);
    const show = (xs) => { const s = [...xs].sort((a, b) => a - b); return `${median(s).toFixed(0)} ns [${s[0].toFixed(0)}, ${s[s.length - 1].toFixed(0)}]`; };
    console.log(`probe hits by kind, HTTP parser re-initialized back to back, ${OPS} a run, ${RUNS} runs a case, ${ROUNDS_T} rounds, node ${process.version}, ${tracer}:`
      + ` untraced ${median(runs.none).toFixed(0)} ns/op; an entry uprobe +${show(added('entry', 'none'))};`
      + ` a uretprobe beside it +${show(added('entry+return', 'entry'))}; a second entry uprobe instead +${show(added('entry+entry', 'entry'))} (median [min, max] of the rounds)`);
    console.log(`  rounds (ns/op): ${Object.entries(runs).map(([c, xs]) => `${c} ${xs.map((x) => x.toFixed(0)).join(' ')}`).join('; ')}`);
  } finally {
    target.kill('SIGKILL');
  }
}

(async () => {
  if (!(process.platform === 'linux' && process.getuid() === 0)) throw new Error('bench/async.js traces: Linux, as root');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-bench-async-'));
  try {
    if (options.flag('tight')) await (HOOK ? tightHook(dir) : options.flag('traps') ? traps(dir) : tight(dir));
    else await servers(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
})().catch((err) => { console.error(err.message); process.exitCode = 1; });
