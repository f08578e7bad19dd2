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
//     [--workload sqlite|fs-dns] [--names]
// --workload fs-dns: bench/fs-dns-loop.js (fs.stat and dns.lookup, libuv's
// own requests) instead of the sqlite3 loop; the article's way is for the
// add-on only, so it is skipped. --names: a third process, traced by
// `nodetrace latency --paths --hosts`, side by side with the other two.
const { sleep, collectLines, askForCounters } = require('./workload-lines');
const path = require('path');
// The bpftrace under test: NODETRACE_BPFTRACE's (a tier), else the PATH's.
const TRACER = require('../lib/tracer/detect').detectBpftrace();
const BPFTRACE = TRACER.path || 'bpftrace';
const { plan: latencyPlan } = require('../lib/commands/latency');
const { usesTemp } = require('../lib/tracer/plan');
const { attachNotice } = require('../lib/tracer/capabilities');
const { spawn, execFileSync } = require('child_process');

const ROOT = path.join(__dirname, '..');
const options = require('./options');
const SECONDS = options.number('seconds', 5);
const ROUNDS = options.number('rounds', 3);
const WORKLOAD = options.string('workload', 'sqlite');
const NAMES = options.flag('names');
const ARTICLE = !options.flag('no-article') && WORKLOAD === 'sqlite';
const WORKLOADS = { sqlite: 'test/targets/sqlite-loop.js', 'fs-dns': 'bench/fs-dns-loop.js' };
if (!WORKLOADS[WORKLOAD]) throw new Error(`--workload: one of ${Object.keys(WORKLOADS).join(', ')}`);
const ADDON = require.resolve('sqlite3/build/Release/node_sqlite3.node', { paths: [ROOT] });


function startLoop() {
  const child = spawn(process.execPath, [path.join(ROOT, WORKLOADS[WORKLOAD])], { stdio: ['ignore', 'pipe', 'inherit'] });
  return collectLines(child);
}

async function sample(child) {
  const [, loops, ns] = await askForCounters(child, 2000);
  return { loops: Number(loops), ns: BigInt(ns) };
}

function startTracer(args, env = {}) {
  const t = spawn(BPFTRACE, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  t.stdout.setEncoding('utf8');
  t.stderr.setEncoding('utf8');
  let out = '';
  let err = '';
  t.stdout.on('data', (c) => { out += c; });
  t.stderr.on('data', (c) => { err += c; });
  // Once `text` is on its stdout or stderr (the attach notice is on stderr).
  t.said = (text) => new Promise((resolve, reject) => {
    const look = () => (out.includes(text) || err.includes(text) ? resolve() : setTimeout(look, 20));
    look();
    t.on('exit', (code) => reject(new Error(`bpftrace exited ${code} before printing "${text}": ${err.slice(-500)}`)));
  });
  t.ready = t.said('Hit Ctrl-C to end.');
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

// A uprobe lives in the probed file's page cache, so every process mapping
// that file takes the trap, traced or not, until the kernel learns that no
// tracer wants it there. Modes that probe the same files cannot be measured
// at the same time: the article's way gets a phase of its own, between two
// phases of untraced vs nodetrace rounds (the second shows any drift).
async function measureRounds(modes, label) {
  for (const m of modes) m.child.kill('SIGSTOP');
  for (let round = 0; round < ROUNDS; round++) {
    for (const m of modes) {
      m.child.kill('SIGCONT');
      await sleep(300);
      const a = await sample(m.child);
      await sleep(SECONDS * 1000);
      const b = await sample(m.child);
      m.child.kill('SIGSTOP');
      (m.rates[label] = m.rates[label] || []).push((b.loops - a.loops) / (Number(b.ns - a.ns) / 1e9));
    }
  }
}

const everything = [];
const tempDirs = [];
function cleanup() {
  for (const p of everything) p.kill('SIGKILL');
  for (const d of tempDirs) require('fs').rmSync(d, { recursive: true, force: true });
}

// The very command line `nodetrace latency -p` runs (its probe points and
// options for this build and bpftrace), not a copy of it; the program it
// generates (without the @names part, or with it) is written where it can run.
async function traceWith(mode, flags) {
  const plan = latencyPlan({ pid: String(mode.child.pid), ...flags }, TRACER);
  if (plan.links.length || plan.outputFile) throw new Error('this plan needs more than a program file: run the bench on an official node');
  let argv = plan.argv;
  if (usesTemp(plan)) {
    const dir = require('fs').mkdtempSync(path.join(require('os').tmpdir(), 'nodetrace-bench-'));
    tempDirs.push(dir);
    for (const f of plan.files) require('fs').writeFileSync(path.join(dir, f.name), f.text);
    argv = argv.map((a) => (typeof a === 'object' ? path.join(dir, a.temp) : a));
  }
  mode.tracer = startTracer(argv, plan.env);
  everything.push(mode.tracer);
  await mode.tracer.ready;
  // The program counts only inside its window, which nodetrace opens with a
  // signal once every probe is attached (docs/programs.md, "The window"):
  // opened here as nodetrace opens it, or the traced rounds would measure
  // probes that record nothing. (Before 2026-11-30 this bench never opened
  // it: its figures left out every map update.)
  if (plan.window) {
    const notice = attachNotice(TRACER);
    if (notice) await mode.tracer.said(notice.line);
    mode.tracer.kill(plan.window.signal);
    await mode.tracer.said(plan.window.opened);
  }
}

async function main() {
  const untraced = { name: 'untraced', child: startLoop(), rates: {} };
  const ours = { name: 'nodetrace latency', child: startLoop(), rates: {} };
  everything.push(untraced.child, ours.child);
  await sleep(500);
  await traceWith(ours, {});
  const modes = [untraced, ours];
  if (NAMES) {
    const named = { name: 'nodetrace latency --paths --hosts', child: startLoop(), rates: {} };
    everything.push(named.child);
    await sleep(500);
    await traceWith(named, { paths: true, hosts: true });
    modes.push(named);
  }
  await measureRounds(modes, 'before');
  if (ARTICLE) {
    const article = { name: "article's way (every add-on function)", child: startLoop(), rates: {} };
    everything.push(article.child);
    await sleep(500);
    const { script, count } = articleProgram(ADDON);
    article.probes = count;
    // Too long for one argv string (E2BIG): hand it over as a file.
    const file = path.join(require('os').tmpdir(), `nodetrace-bench-article-${process.pid}.bt`);
    require('fs').writeFileSync(file, script);
    const t0 = Date.now();
    process.stderr.write(`attaching ${count} uprobes the article's way...\n`);
    article.tracer = startTracer(['-p', String(article.child.pid), file, `/proc/${article.child.pid}/exe`, ADDON],
      { BPFTRACE_MAX_PROBES: String(count + 100) });
    everything.push(article.tracer);
    await article.tracer.ready;
    article.attachSeconds = (Date.now() - t0) / 1000;
    await measureRounds([article], 'article phase');
    // Let bpftrace detach its probes and exit before measuring again: the
    // kernel takes seconds to remove two thousand uprobes.
    const exited = new Promise((resolve) => article.tracer.on('exit', resolve));
    article.tracer.kill('SIGINT');
    await Promise.race([exited, sleep(60000)]);
    await sleep(5000);
    await measureRounds(modes, 'after');
    modes.push(article);
  }
  cleanup();
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  // Ratios compare phases without the article's probes in the kernel, except
  // the article's own; the 'after' phase shows what its probes leave behind.
  const base = median(untraced.rates.before);
  console.log(WORKLOAD === 'sqlite' ? `sqlite3 loop (open, create, 10 inserts, select, close), ${ROUNDS} rounds of ${SECONDS} s, median loops/s:`
    : `fs.stat + dns.lookup, 8 in flight, ${ROUNDS} rounds of ${SECONDS} s, median pool operations/s ("loops"):`);
  const line = (name, rates, extra = '') => {
    const med = median(rates);
    console.log(`  ${name.padEnd(48)} ${med.toFixed(0).padStart(6)} loops/s  ratio ${(med / base).toFixed(3)}`
      + `  rounds: ${rates.map((x) => x.toFixed(0)).join(', ')}${extra}`);
  };
  line('untraced', untraced.rates.before);
  line('nodetrace latency', ours.rates.before);
  const named = modes.find((m) => m.name.includes('--paths'));
  if (named) line(named.name, named.rates.before);
  if (ARTICLE) {
    const article = modes[modes.length - 1];
    line("article's way (every add-on function)", article.rates['article phase'],
      `  [${article.probes} uprobes, attached in ${article.attachSeconds.toFixed(0)} s]`);
    line('untraced, after the article\'s tracer exited', untraced.rates.after);
    line('nodetrace latency, after the article\'s tracer exited', ours.rates.after);
    if (named) line(`${named.name}, after`, named.rates.after);
  }
}

main().catch((err) => { console.error(err); cleanup(); process.exit(1); });
