#!/usr/bin/env node
'use strict';
// What the long-running mode (`--prometheus [HOST:]PORT`, docs/prometheus.md)
// costs, in two parts. Needs root and bpftrace.
//
//   sudo node bench/live-metrics.js --part cost [--command latency] [--seconds 5] [--rounds 3]
//   sudo node bench/live-metrics.js --part memory [--command latency] [--minutes 60] [--scrape 1]
//
// cost: three copies of bench/fs-dns-loop.js (libuv pool work, counting
//   its own operations): untraced, traced by `nodetrace COMMAND -p PID`
//   (the report at the end) and traced by `COMMAND -p PID --prometheus`
//   with a scrape every second. All three run at once, attached, but only
//   one is ever running (the others SIGSTOPped), round after round, so
//   each is measured on the same machine at the same time (each round in
//   another order); the ratios are each traced copy's rate over the
//   untraced one's in the same round.
// memory: bench/command-target.js (work for every command) traced by
//   `COMMAND --prometheus` for --minutes, scraped every --scrape seconds as
//   Prometheus would; each minute nodetrace's and its tracer's resident
//   memory, the size of a scrape and its series. Memory must level off:
//   the growth over the second half of the run is printed per hour.
const path = require('path');
const fs = require('fs');
const http = require('http');
const { spawn } = require('child_process');
const options = require('./options');
const { sleep, collectLines, askForCounters } = require('./workload-lines');

const ROOT = path.join(__dirname, '..');
const NODETRACE = path.join(ROOT, 'bin', 'nodetrace');
const PART = options.string('part', 'cost');
const COMMAND = options.string('command', 'latency');
const SECONDS = options.number('seconds', 5);
const ROUNDS = options.number('rounds', 3);
const MINUTES = options.number('minutes', 60);
const SCRAPE_S = options.number('scrape', 1);

function startWorkload(file) {
  const child = spawn(process.execPath, [path.join(ROOT, file)], { stdio: ['ignore', 'pipe', 'inherit'] });
  collectLines(child);
  return child;
}

async function ready(child) {
  for (let i = 0; i < 500 && !child.lines.some((l) => l.startsWith('ready ')); i++) await sleep(20);
}

// nodetrace COMMAND -p PID [--prometheus 127.0.0.1:0]; resolves once it
// traces (and, live, with the URL it serves).
async function startNodetrace(pid, live) {
  const args = [COMMAND, '-p', String(pid), ...(live ? ['--prometheus', '127.0.0.1:0'] : [])];
  const t = spawn(NODETRACE, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  t.stderr.setEncoding('utf8');
  t.stderr.on('data', (c) => { err += c; });
  t.stdout.resume();
  t.stderrText = () => err;
  for (let i = 0; i < 1200; i++) {
    const url = /serving metrics at (http:\S+)/.exec(err);
    if (/Window opened|tracing .* with|Hit Ctrl-C/.test(err) && (!live || url)) return { t, url: url && url[1] };
    if (t.exitCode !== null) break;
    await sleep(100);
  }
  throw new Error(`nodetrace ${args.join(' ')} did not start: ${err.slice(-800)}`);
}

function scrape(url) {
  return new Promise((resolve) => {
    http.get(url, (res) => {
      let bytes = 0;
      let series = 0;
      res.setEncoding('utf8');
      res.on('data', (c) => { bytes += c.length; series += c.split('\n').filter((l) => l && !l.startsWith('#')).length; });
      res.on('end', () => resolve({ status: res.statusCode, bytes, series }));
    }).on('error', (e) => resolve({ status: 0, error: e.message, bytes: 0, series: 0 }));
  });
}

function rssKb(pid) {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch { return 0; }
}

function childrenOf(pid) {
  try {
    return fs.readdirSync(`/proc/${pid}/task`).flatMap((tid) => fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8')
      .trim().split(/\s+/).filter(Boolean).map(Number));
  } catch { return []; }
}

// The tracer under nodetrace (setpriv exec's into it): the child whose
// command line names bpftrace or dtrace.
function tracerOf(pid) {
  for (const c of childrenOf(pid)) {
    try {
      if (/bpftrace|dtrace/.test(fs.readFileSync(`/proc/${c}/cmdline`, 'utf8'))) return c;
    } catch { /* gone */ }
  }
  return null;
}

async function stop(t) {
  if (t.exitCode !== null) return t.exitCode;
  t.kill('SIGINT');
  // The report comes at once; the exit waits for the tracer's detach, which
  // on a loaded host took over 30 s (bpftrace in D state, synchronize_rcu).
  for (let i = 0; i < 1200 && t.exitCode === null; i++) await sleep(100);
  if (t.exitCode === null) {
    const states = require('child_process').spawnSync('ps', ['-o', 'pid,stat,wchan:24,args', '-p', String(t.pid), '--ppid', String(t.pid)],
      { encoding: 'utf8' }).stdout;
    console.error(`nodetrace still ran 120 s after SIGINT; killed. It and its tracer:\n${states}`
      + `Its stderr's end: ${t.stderrText().slice(-600)}`);
    t.kill('SIGKILL');
  }
  return t.exitCode;
}

async function cost() {
  const names = ['untraced', `${COMMAND}`, `${COMMAND} --prometheus`];
  const loops = names.map(() => startWorkload('bench/fs-dns-loop.js'));
  await Promise.all(loops.map(ready));
  for (const l of loops) l.kill('SIGSTOP');
  const tracers = [null];
  const scrapes = [];
  let scraper = null;
  try {
    tracers.push(await startNodetrace(loops[1].pid, false));
    const live = await startNodetrace(loops[2].pid, true);
    tracers.push(live);
    scraper = setInterval(() => scrape(live.url).then((s) => scrapes.push(s)), 1000);
    const rates = names.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      // Each round in another order, so that no copy always runs first.
      for (let k = 0; k < loops.length; k++) {
        const i = (k + round) % loops.length;
        loops[i].kill('SIGCONT');
        await sleep(500);
        const [, ops0, ns0] = await askForCounters(loops[i], 2000);
        await sleep(SECONDS * 1000);
        const [, ops1, ns1] = await askForCounters(loops[i], 2000);
        loops[i].kill('SIGSTOP');
        rates[i].push((Number(ops1) - Number(ops0)) / (Number(BigInt(ns1) - BigInt(ns0)) / 1e9));
      }
      const r = rates.map((x) => x[round]);
      console.log(`round ${round + 1}: ${names.map((n, i) => `${n} ${Math.round(r[i])}/s`).join(', ')}; `
        + `ratios ${(r[1] / r[0]).toFixed(3)} and ${(r[2] / r[0]).toFixed(3)}, live over plain ${(r[2] / r[1]).toFixed(3)}`);
    }
    const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const ratio = (i, j) => median(rates[i].map((x, k) => x / rates[j][k])).toFixed(3);
    console.log(`median ratios over ${ROUNDS} rounds of ${SECONDS} s: ${names[1]} ${ratio(1, 0)}, ${names[2]} ${ratio(2, 0)}, `
      + `live over plain ${ratio(2, 1)}; scrapes ${scrapes.length} (${scrapes.filter((s) => s.status === 200).length} answered 200)`);
  } finally {
    if (scraper) clearInterval(scraper);
    for (const l of loops) { l.kill('SIGCONT'); }
    for (const t of tracers.filter(Boolean)) console.log(`${t === tracers[2] ? 'live' : 'plain'} nodetrace exit ${await stop(t.t)}`);
    for (const l of loops) l.kill('SIGKILL');
  }
}

async function memory() {
  const target = startWorkload('bench/command-target.js');
  await ready(target);
  let live = null;
  let timer = null;
  try {
    live = await startNodetrace(target.pid, true);
    const tracer = tracerOf(live.t.pid);
    let last = { bytes: 0, series: 0, status: 0 };
    let failed = 0;
    let lastError = null;
    const scrapeOnce = () => scrape(live.url).then((s) => {
      if (s.status === 200) last = s;
      else { failed++; lastError = s.error || `HTTP ${s.status}`; }
    });
    timer = setInterval(scrapeOnce, SCRAPE_S * 1000);
    const rows = [];
    console.log('minute  nodetrace RSS MB  tracer RSS MB  scrape bytes  series  failed scrapes');
    for (let minute = 1; minute <= MINUTES; minute++) {
      await sleep(60000);
      if (live.t.exitCode !== null) throw new Error(`nodetrace exited ${live.t.exitCode} at minute ${minute}`);
      const row = { minute, nt: rssKb(live.t.pid) / 1024, tr: tracer ? rssKb(tracer) / 1024 : 0, ...last, failed };
      rows.push(row);
      console.log(`${String(minute).padStart(6)}  ${row.nt.toFixed(1).padStart(16)}  ${row.tr.toFixed(1).padStart(13)}  `
        + `${String(row.bytes).padStart(12)}  ${String(row.series).padStart(6)}  ${String(failed).padStart(14)}`);
    }
    // Growth over the second half, per hour: a least-squares slope.
    const half = rows.slice(Math.floor(rows.length / 2));
    const slope = (key) => {
      const n = half.length;
      if (n < 2) return 0;
      const mx = half.reduce((s, r) => s + r.minute, 0) / n;
      const my = half.reduce((s, r) => s + r[key], 0) / n;
      const num = half.reduce((s, r) => s + (r.minute - mx) * (r[key] - my), 0);
      const den = half.reduce((s, r) => s + (r.minute - mx) ** 2, 0);
      return (num / den) * 60;
    };
    console.log(`over minutes ${half[0].minute}-${half[half.length - 1].minute}: nodetrace ${slope('nt').toFixed(2)} MB/hour, `
      + `tracer ${slope('tr').toFixed(2)} MB/hour; ${failed} scrapes failed${lastError ? ` (the last: ${lastError})` : ''}`);
  } finally {
    if (timer) clearInterval(timer);
    if (live) console.log(`nodetrace exit ${await stop(live.t)}`);
    target.kill('SIGKILL');
  }
}

(PART === 'memory' ? memory() : cost()).catch((err) => {
  console.error(`bench/live-metrics.js: ${err.message}`);
  process.exitCode = 1;
});
