#!/usr/bin/env node
'use strict';
// How long a nodetrace command keeps its user waiting, at both ends: from
// spawning it to its "tracing ..." line on stderr (planning, the tracer's
// start, every probe attached: "attached"), and from the end asked for (a
// SIGINT, as Ctrl-C sends, HOLD seconds after that line) to the first byte
// of its report on stdout ("report") and to its exit ("exit"). RUNS times
// each, one after another; medians printed. Beside each, the CPU the
// tracer (the `bpftrace` process under nodetrace) had used when every probe
// was attached ("tracer CPU"): its own work to attach, which the host's
// load does not stretch as it stretches the wall clock.
//
//   sudo node bench/attach-time.js [--runs 3] [--hold 2] -- async -p PID
//   sudo node bench/attach-time.js --all [--tiers host,trixie,sid] [--runs 3]
//
// --all starts bench/command-target.js (work every command reports on) and
// runs latency, gc, loop, async, profile and http (--latency: one report at
// the end) against it under each tier's bpftrace (scripts/bpftrace-tier.sh;
// host: the PATH's), printing one table. A command's report is JSON so that
// nothing reaches stdout before the end. NODETRACE_BPFTRACE picks the
// bpftrace otherwise, as for nodetrace.
const path = require('path');
const { spawn, execFileSync } = require('child_process');
const options = require('./options');

const ROOT = path.join(__dirname, '..');
const RUNS = options.number('runs', 3);
const HOLD_S = options.number('hold', 2);
const ALL = options.flag('all');
const TIERS = options.string('tiers', 'host,trixie,sid').split(',');
const dash = process.argv.indexOf('--');
const command = dash >= 0 ? process.argv.slice(dash + 1) : [];
if (!command.length && !ALL) {
  console.error('usage: node bench/attach-time.js [--runs N] [--hold S] -- COMMAND ARGS (e.g. -- async -p PID)\n'
    + '       node bench/attach-time.js --all [--tiers host,trixie,sid] [--runs N]');
  process.exit(2);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const seconds = (ns) => Number(ns) / 1e9;
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

// The CPU seconds (user + system) of the tracer under nodetrace's process
// `pid`: its descendants named bpftrace (a tier's loader is named so too).
function tracerCpu(pid) {
  const fs = require('fs');
  const procs = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let stat;
    try { stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8'); } catch { continue; }
    const close = stat.lastIndexOf(')');
    const f = stat.slice(close + 2).split(' ');
    procs.push({ pid: Number(d), comm: stat.slice(stat.indexOf('(') + 1, close), ppid: Number(f[1]),
      cpu: (Number(f[11]) + Number(f[12])) / TICKS });
  }
  const under = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs) if (!under.has(p.pid) && under.has(p.ppid)) { under.add(p.pid); grew = true; }
  }
  const tracers = procs.filter((p) => under.has(p.pid) && p.comm === 'bpftrace');
  return tracers.length ? tracers.reduce((n, p) => n + p.cpu, 0) : null;
}

// One run: { attached, report, exit } in seconds (report: null when nothing came on stdout).
function once(args, env) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'nodetrace'), ...args],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let err = '';
    let attachedAt = null;
    let cpu = null;
    let endAt = null;
    let reportAt = null;
    child.stdout.on('data', () => { if (endAt !== null && reportAt === null) reportAt = process.hrtime.bigint(); });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => {
      err += d;
      if (attachedAt === null && /^nodetrace: tracing /m.test(err)) {
        attachedAt = process.hrtime.bigint();
        cpu = tracerCpu(child.pid);
        setTimeout(() => { endAt = process.hrtime.bigint(); child.kill('SIGINT'); }, HOLD_S * 1000);
      }
    });
    // The next run starts once this one has ended (its probes detached).
    child.on('close', (code) => {
      const exitAt = process.hrtime.bigint();
      if (attachedAt === null || endAt === null) { reject(new Error(`${args.join(' ')}: no "tracing" line or ended early (${code}): ${err.trim()}`)); return; }
      resolve({ attached: seconds(attachedAt - t0), report: reportAt === null ? null : seconds(reportAt - endAt),
        exit: seconds(exitAt - endAt), cpu, code });
    });
  });
}

function median(xs) {
  const s = xs.filter((x) => x !== null).sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : null;
}

async function measure(args, env = {}) {
  const runs = [];
  for (let i = 0; i < RUNS; i++) {
    runs.push(await once(args, env));
    await sleep(500);
  }
  const m = (k) => median(runs.map((r) => r[k]));
  return { attached: m('attached'), report: m('report'), exit: m('exit'), cpu: m('cpu'), runs };
}

const fmt = (s) => (s === null ? '-' : s.toFixed(2));

// Why a run failed, on one line: nodetrace's last line of its own (its
// first may be a note, such as http's "no nodetrace hook: reading ...").
function why(message) {
  const own = message.split('\n').map((l) => l.replace(/^.*?(?=nodetrace: )/, '')).filter((l) => l.startsWith('nodetrace: '));
  return own.length ? own[own.length - 1] : message.split('\n')[0];
}

function tierEnv(tier) {
  if (tier === 'host') return {};
  const wrapper = execFileSync(path.join(ROOT, 'scripts', 'bpftrace-tier.sh'), [tier], { encoding: 'utf8' }).trim();
  return { NODETRACE_BPFTRACE: wrapper };
}

function startTarget() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'command-target.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.setEncoding('utf8');
    child.stdout.once('data', (d) => (/^ready /.test(d) ? resolve(child) : reject(new Error(d))));
    child.on('exit', (code) => reject(new Error(`bench/command-target.js exited (${code})`)));
  });
}

const COMMANDS = (pid) => [
  ['latency', '-p', pid, '--json'],
  ['gc', '-p', pid, '--json'],
  ['loop', '-p', pid, '--json'],
  ['async', '-p', pid, '--json'],
  ['profile', '-p', pid, '--json'],
  ['http', '-p', pid, '--latency', '--json'],
];

(async () => {
  const load = require('fs').readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`${new Date().toISOString()}, load average ${load}, ${RUNS} runs each, end ${HOLD_S} s after attached (medians, seconds)`);
  if (!ALL) {
    const r = await measure(command);
    console.log(`nodetrace ${command.join(' ')}: attached ${fmt(r.attached)} (tracer CPU ${fmt(r.cpu)}), end -> report ${fmt(r.report)}, end -> exit ${fmt(r.exit)}`);
    console.log(`  runs: ${r.runs.map((x) => `${fmt(x.attached)}/${fmt(x.report)}/${fmt(x.exit)} (${fmt(x.cpu)})`).join(', ')}`);
    return;
  }
  const target = await startTarget();
  try {
    console.log('| command | tier | start -> attached | tracer CPU | end -> report | end -> exit | runs (attached/report/exit) |');
    console.log('| --- | --- | --- | --- | --- | --- | --- |');
    for (const tier of TIERS) {
      const env = tierEnv(tier);
      for (const args of COMMANDS(String(target.pid))) {
        let r;
        try { r = await measure(args, env); } catch (err) { console.log(`| ${args[0]} | ${tier} | failed: ${why(err.message)} | | | | |`); continue; }
        console.log(`| ${args[0]} | ${tier} | ${fmt(r.attached)} | ${fmt(r.cpu)} | ${fmt(r.report)} | ${fmt(r.exit)} | ${r.runs.map((x) => `${fmt(x.attached)}/${fmt(x.report)}/${fmt(x.exit)}`).join(', ')} |`);
      }
    }
  } finally {
    target.kill('SIGKILL');
  }
})().catch((err) => { console.error(err.message); process.exitCode = 1; });
