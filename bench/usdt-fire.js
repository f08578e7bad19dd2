#!/usr/bin/env node
'use strict';
// Cost of a USDT probe, side by side in one run:
//   empty     an empty function called with a callback (the floor)
//   disabled  probe.fire(cb) while no tracer is attached
//   enabled   probe.fire(cb) while bpftrace counts the probe (Linux, root)
//   and, as `nodetrace probes` traces it (lib/probes/program.js's programs):
//   a line per firing (d-scripts/usdt-probes.bt), and --count
//   (d-scripts/usdt-count.bt)
//
//   node bench/usdt-fire.js [--seconds-per-case 1]
//
// Each case has its own loop (so each call site is monomorphic, as in real
// code) and runs a few rounds; the best round counts.

const { spawn } = require('child_process');
// The bpftrace under test: NODETRACE_BPFTRACE's (a tier), else the PATH's.
const BPFTRACE = require('../lib/tracer/detect').detectBpftrace().path || 'bpftrace';
const usdt = require('../lib/usdt');

const argSeconds = process.argv.indexOf('--seconds-per-case');
const SECONDS = argSeconds > 0 ? Number(process.argv[argSeconds + 1]) : 1;
const ROUNDS = 5;

const provider = usdt.createDTraceProvider('nodetrace_bench');
const probe = provider.addProbe('tick', 'int');
provider.enable();

let sink = 0;
function args() { sink++; return [sink]; }

// eslint-disable-next-line no-unused-vars -- takes the callback as probe.fire(cb) does
const obj = { empty(cb) { return undefined; } };

function timeLoop(loop) {
  // Calibrate the iteration count to about SECONDS / ROUNDS per round.
  let n = 1e5;
  for (;;) {
    const t0 = process.hrtime.bigint();
    loop(n);
    const dt = Number(process.hrtime.bigint() - t0);
    if (dt > 2e7 || n >= 1e9) {
      n = Math.max(1e4, Math.round(n * (SECONDS * 1e9 / ROUNDS) / dt));
      break;
    }
    n *= 4;
  }
  let wall = Infinity;
  let cpu = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    loop(n);
    const t = Number(process.hrtime.bigint() - t0);
    const c = process.cpuUsage(c0);
    wall = Math.min(wall, t / n);
    cpu = Math.min(cpu, (c.user + c.system) * 1000 / n);
  }
  return { wall, cpu };
}

function loopEmpty(n) {
  let fired = 0;
  for (let i = 0; i < n; i++) if (obj.empty(args) !== undefined) fired++;
  return fired;
}

function loopProbe(n) {
  let fired = 0;
  for (let i = 0; i < n; i++) if (probe.fire(args) !== undefined) fired++;
  return fired;
}

// `nodetrace probes`' program for the tick probe (lines or count), written
// to a private directory: [bpftrace's arguments, its environment].
function probesProgram(mode, libPath) {
  const fs = require('fs');
  const path = require('path');
  const tracer = require('../lib/tracer/detect').detectBpftrace();
  const plan = require('../lib/probes/program').planProbes(tracer, {
    mode, pids: [process.pid], probes: [{ library: libPath, provider: 'nodetrace_bench', name: 'tick', kinds: ['int'], api: true }],
  });
  const dir = fs.mkdtempSync(path.join(require('os').tmpdir(), 'nodetrace-bench-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  for (const f of plan.files) fs.writeFileSync(path.join(dir, f.name), f.text);
  return [plan.argv.map((a) => (typeof a === 'object' ? path.join(dir, a.temp) : a)), plan.env];
}

function startTracer(libPath, mode = null) {
  return new Promise((resolve, reject) => {
    const [argv, env] = mode ? probesProgram(mode, libPath) : [['-e', `usdt:${libPath}:nodetrace_bench:tick { @fired = count(); }`], {}];
    const bt = spawn(BPFTRACE, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    // Attached once bpftrace says "Attaching N probes..." on stdout.
    const timer = setTimeout(() => { bt.kill('SIGKILL'); reject(new Error('bpftrace did not attach: ' + err)); }, 20000);
    let lines = 0;
    let attached = false;
    bt.stdout.on('data', (d) => {
      // A line per firing is read and dropped, as nodetrace reads it: only the count is kept.
      if (mode === 'lines') lines += String(d).split('\n').length - 1;
      else out += d;
      if (!attached && (/Attaching \d+ probe|attached_probes/.test(mode === 'lines' ? String(d) : out))) {
        attached = true;
        clearTimeout(timer);
        resolve({ bt, output: () => out, lines: () => lines });
      }
    });
    bt.stderr.on('data', (d) => { err += d; });
    bt.on('error', (e) => { clearTimeout(timer); reject(e); });
    process.on('exit', () => bt.kill('SIGKILL'));   // never leave a tracer behind
    bt.on('exit', (code) => { clearTimeout(timer); reject(new Error(`bpftrace exited (${code}): ${err}`)); });
  });
}

// bpftrace 0.17 sometimes ignores the first SIGINT; ask again, then insist.
function stopTracer(t) {
  return new Promise((resolve) => {
    t.bt.removeAllListeners('exit');
    const again = setInterval(() => t.bt.kill('SIGINT'), 2000);
    const kill = setTimeout(() => t.bt.kill('SIGKILL'), 15000);
    t.bt.on('exit', () => { clearInterval(again); clearTimeout(kill); resolve(t.output()); });
    t.bt.kill('SIGINT');
  });
}

function fmt(ns) { return (ns < 10 ? ns.toFixed(2) : ns.toFixed(0)).padStart(8); }

async function main() {
  const st = usdt.status();
  console.log(`node ${process.version}, ${process.platform}/${process.arch}, ${require('os').cpus().length} CPUs, ` +
    `load ${require('os').loadavg()[0].toFixed(1)}, USDT native: ${st.native}` + (st.reason ? ` (${st.reason})` : ''));

  let attached = false;
  probe.fire(() => { attached = true; });
  if (attached) {
    console.error('A tracer is already attached to nodetrace_bench:tick; stop it first.');
    process.exit(1);
  }
  const empty = timeLoop(loopEmpty);
  const disabled = timeLoop(loopProbe);
  const calledDisabled = sink;

  let enabled = null;
  let seen = '';
  const lib = st.native ? usdt.status().libraries[0] : null;
  const canTrace = lib && typeof process.getuid === 'function' && process.getuid() === 0;
  if (canTrace) {
    const t = await startTracer(lib);
    const before = sink;
    enabled = timeLoop(loopProbe);
    const fires = sink - before;
    const out = await stopTracer(t);
    const m = /@fired: (\d+)/.exec(out);
    seen = m ? `bpftrace counted ${m[1]} of ${fires} fires` : 'bpftrace printed no count';
  }
  // nodetrace probes' programs: --count, and a line per firing.
  const probes = {};
  if (canTrace) {
    for (const mode of ['count', 'lines']) {
      const t = await startTracer(lib, mode);
      const before = sink;
      const r = timeLoop(loopProbe);
      const fires = sink - before;
      const out = await stopTracer(t);
      const m = /"@count": \{"\d+,1": (\d+)\}/.exec(out);
      probes[mode] = { ...r, seen: mode === 'count' ? (m ? `counted ${m[1]} of ${fires} fires` : 'no count printed') : `${t.lines()} lines for ${fires} fires` };
    }
  }

  // CPU time per call is what the caller pays; wall time also counts time
  // spent waiting for a CPU on a busy host. Both are the best of the rounds.
  console.log('                          ns/call (cpu)  ns/call (wall)  cpu ratio');
  const row = (name, r, ratio) => console.log(`${name.padEnd(26)}${fmt(r.cpu)}       ${fmt(r.wall)}        ${ratio}`);
  row('empty function call', empty, '1x');
  row('probe.fire(cb) disabled', disabled, `${(disabled.cpu / empty.cpu).toFixed(2)}x empty`);
  if (calledDisabled) console.log(`  BUG: the callback ran ${calledDisabled} times with no tracer attached`);
  if (enabled) {
    row('probe.fire(cb) enabled', enabled, `${(enabled.cpu / empty.cpu).toFixed(0)}x empty, ` +
      `${(enabled.cpu / disabled.cpu).toFixed(0)}x disabled`);
    console.log(`  (${seen})`);
    for (const [mode, r] of Object.entries(probes)) {
      row(`  nodetrace probes ${mode === 'count' ? '--count' : '(lines)'}`, r, `${(r.cpu / empty.cpu).toFixed(0)}x empty, ${(r.cpu / enabled.cpu).toFixed(2)}x counting`);
      console.log(`    (${r.seen})`);
    }
  } else {
    console.log('probe.fire(cb) enabled    skipped: needs Linux, root, bpftrace and the native addon');
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
