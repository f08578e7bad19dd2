#!/usr/bin/env node
'use strict';
// What tracing costs the traced: the article's sqlite3 loop, untraced, traced
// by `nodetrace latency` (d-scripts/addon-latency.bt) and traced the article's
// way (every function of node_sqlite3.node instrumented), measured side by
// side in one run. All three run at once, attached, but only one is ever
// running: the others are SIGSTOPped, so each measures on the same idle
// machine, round after round. Needs root and bpftrace.
//
//   sudo node bench/latency-overhead.js [--seconds 5] [--rounds 3] [--no-article]
const path = require('path');
const { spawn, execFileSync } = require('child_process');

const ROOT = path.join(__dirname, '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf('--' + name); return i >= 0 ? Number(args[i + 1]) : dflt; };
const SECONDS = opt('seconds', 5);
const ROUNDS = opt('rounds', 3);
const ARTICLE = !args.includes('--no-article');
const ADDON = require.resolve('sqlite3/build/Release/node_sqlite3.node', { paths: [ROOT] });

function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

function startLoop() {
  const child = spawn(process.execPath, [path.join(ROOT, 'test/targets/sqlite-loop.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
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

async function sample(child) {
  const before = child.lines.length;
  child.kill('SIGUSR2');
  for (let i = 0; i < 200 && child.lines.length === before; i++) await sleep(10);
  const [, loops, ns] = child.lines[child.lines.length - 1].split(' ');
  return { loops: Number(loops), ns: BigInt(ns) };
}

function startTracer(args, env = {}) {
  const t = spawn('bpftrace', args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  t.stdout.setEncoding('utf8');
  t.ready = new Promise((resolve, reject) => {
    let out = '';
    t.stdout.on('data', (c) => { out += c; if (out.includes('Hit Ctrl-C to end.')) resolve(); });
    let err = '';
    t.stderr.on('data', (c) => { err += c; });
    t.on('exit', (code) => reject(new Error('bpftrace exited ' + code + ': ' + err.slice(-500))));
  });
  return t;
}

// The article's probe set: every function of the add-on. bpftrace refuses
// the add-on's zero-sized symbols (register_tm_clones...), so name the
// sized ones by address.
function articleProgram(addon) {
  const syms = execFileSync('nm', ['--defined-only', '-S', addon], { encoding: 'utf8', maxBuffer: 1 << 26 })
    .split('\n').map((l) => l.split(' ')).filter((f) => f.length === 4 && /^[Tt]$/.test(f[2]) && parseInt(f[1], 16) > 0);
  const probes = [...new Set(syms.map((f) => `uprobe:${addon}:0x${f[0].replace(/^0+/, '')}`))];
  const fs = require('fs');
  const script = fs.readFileSync(path.join(ROOT, 'd-scripts/addon-latency-every-function.bt'), 'utf8')
    .replace('uprobe:$2:*', probes.join(',\n'));
  return { script, count: probes.length };
}

async function main() {
  const modes = [{ name: 'untraced' }, { name: 'nodetrace latency' }];
  if (ARTICLE) modes.push({ name: "article's way (every add-on function)" });
  for (const m of modes) { m.child = startLoop(); m.loopsPerSec = []; }
  await sleep(500);
  modes[1].tracer = startTracer(['-p', String(modes[1].child.pid), path.join(ROOT, 'd-scripts/addon-latency.bt'), `/proc/${modes[1].child.pid}/exe`]);
  if (ARTICLE) {
    const { script, count } = articleProgram(ADDON);
    modes[2].probes = count;
    modes[2].tracer = startTracer(['-p', String(modes[2].child.pid), '-e', script, `/proc/${modes[2].child.pid}/exe`, ADDON],
      { BPFTRACE_MAX_PROBES: String(count + 100) });
    process.stderr.write(`attaching ${count} uprobes the article's way (this takes minutes)...\n`);
  }
  const t0 = Date.now();
  await Promise.all(modes.filter((m) => m.tracer).map((m) => m.tracer.ready));
  process.stderr.write(`all tracers attached after ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
  for (const m of modes) m.child.kill('SIGSTOP');
  for (let round = 0; round < ROUNDS; round++) {
    for (const m of modes) {
      m.child.kill('SIGCONT');
      await sleep(300);
      const a = await sample(m.child);
      await sleep(SECONDS * 1000);
      const b = await sample(m.child);
      m.child.kill('SIGSTOP');
      m.loopsPerSec.push((b.loops - a.loops) / (Number(b.ns - a.ns) / 1e9));
    }
  }
  for (const m of modes) { m.child.kill('SIGKILL'); if (m.tracer) m.tracer.kill('SIGKILL'); }
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const base = median(modes[0].loopsPerSec);
  console.log(`sqlite3 loop (open, create, 10 inserts, select, close), ${ROUNDS} rounds of ${SECONDS} s, median loops/s:`);
  for (const m of modes) {
    const med = median(m.loopsPerSec);
    console.log(`  ${m.name.padEnd(40)} ${med.toFixed(0).padStart(7)} loops/s  ratio ${(med / base).toFixed(3)}  `
      + `(cost ${((1 - med / base) * 100).toFixed(1)}%)  rounds: ${m.loopsPerSec.map((x) => x.toFixed(0)).join(', ')}`
      + (m.probes ? `  [${m.probes} uprobes]` : ''));
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
