#!/usr/bin/env node
'use strict';
// What tracing one process costs another on the same host: a neighbour on
// the same node binary (fs.stat and crypto.pbkdf2 back to back on libuv's
// pool, a few chains at once) is counted over WINDOW seconds untraced and
// WINDOW seconds while nodetrace traces bench/command-target.js, in paired
// rounds (the order alternating, so that a drift in the machine's load
// falls on both); each round's ratio traced/untraced, their median, and
// whether it holds the floor (>= 0.97: the neighbour pays nothing
// measurable). One command:
//
//   sudo node bench/neighbour.js [--tiers host,trixie,sid] [--commands latency,gc,async,loop,profile,http] [--rounds 3] [--window 3]
//
// host: the PATH's bpftrace; trixie, sid: scripts/bpftrace-tier.sh.
const path = require('path');
const { spawn, execFileSync } = require('child_process');
const options = require('./options');

const ROOT = path.join(__dirname, '..');
const ROUNDS = options.number('rounds', 3);
const WINDOW_S = options.number('window', 3);
const TIERS = options.string('tiers', 'host,trixie,sid').split(',');
const COMMANDS = options.string('commands', 'latency,gc,async,loop,profile,http').split(',');
const FLOOR = 0.97;

const ARGS = {
  latency: ['--json'], gc: ['--json'], async: ['--json'], loop: ['--json'], profile: ['--json'], http: ['--latency', '--json'],
};

// The neighbour: prints its cumulative count of operations every 100 ms.
const NEIGHBOUR = `
const fs = require('fs'); const crypto = require('crypto');
let ops = 0;
function chain() { fs.stat(__filename, () => crypto.pbkdf2('secret', 'salt', 1, 16, 'sha256', () => { ops += 2; chain(); })); }
for (let i = 0; i < 4; i++) chain();
setInterval(() => process.stdout.write(process.hrtime.bigint() + ' ' + ops + '\\n'), 100);
`;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function tierEnv(tier) {
  if (tier === 'host') return {};
  return { NODETRACE_BPFTRACE: execFileSync(path.join(ROOT, 'scripts', 'bpftrace-tier.sh'), [tier], { encoding: 'utf8' }).trim() };
}

function startNode(args, { onLine }) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.setEncoding('utf8');
    let buf = '';
    let ready = false;
    child.stdout.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (!ready) { ready = true; resolve(child); }
        if (onLine) onLine(line);
      }
    });
    child.on('exit', (code) => { if (!ready) reject(new Error(`${args.join(' ')} exited (${code})`)); });
  });
}

// The neighbour's samples, [time ns, ops]; its rate over the next `s` seconds.
function rateOver(samples, s) {
  const from = samples.length;
  return sleep(s * 1000).then(() => {
    const a = samples[from - 1];
    const b = samples[samples.length - 1];
    return Number(b[1] - a[1]) / (Number(b[0] - a[0]) / 1e9);
  });
}

// One traced window: nodetrace started, the neighbour counted once it says
// it is tracing, then ended (SIGINT) and waited for.
function tracedRate(command, pid, env, samples) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'nodetrace'), command, '-p', String(pid), ...ARGS[command]],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
    let err = '';
    let rate = null;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => {
      const first = !/^nodetrace: tracing /m.test(err);
      err += d;
      if (first && /^nodetrace: tracing /m.test(err)) {
        rateOver(samples, WINDOW_S).then((r) => { rate = r; child.kill('SIGINT'); });
      }
    });
    child.on('close', (code) => (rate === null ? reject(new Error(`${command}: ended before tracing (${code}): ${err.trim().split('\n').pop()}`)) : resolve(rate)));
  });
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const h = Math.floor(s.length / 2);
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

(async () => {
  const load = require('fs').readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`${new Date().toISOString()}, load average ${load}, ${ROUNDS} paired rounds of ${WINDOW_S} s, floor ${FLOOR}`);
  const samples = [];
  const target = await startNode([path.join(__dirname, 'command-target.js')], {});
  const neighbour = await startNode(['-e', NEIGHBOUR], {
    onLine: (l) => { const [t, n] = l.split(' '); samples.push([BigInt(t), BigInt(n)]); },
  });
  try {
    await sleep(1000);
    console.log('| command | tier | neighbour traced / untraced (median) | holds >= 0.97 | rounds (untraced ops/s -> ratio) |');
    console.log('| --- | --- | --- | --- | --- |');
    for (const tier of TIERS) {
      const env = tierEnv(tier);
      for (const command of COMMANDS) {
        const rounds = [];
        try {
          for (let i = 0; i < ROUNDS; i++) {
            let untraced;
            let traced;
            if (i % 2 === 0) {
              untraced = await rateOver(samples, WINDOW_S);
              traced = await tracedRate(command, target.pid, env, samples);
            } else {
              traced = await tracedRate(command, target.pid, env, samples);
              await sleep(500);
              untraced = await rateOver(samples, WINDOW_S);
            }
            rounds.push({ untraced, ratio: traced / untraced });
            await sleep(500);
          }
        } catch (err) {
          console.log(`| ${command} | ${tier} | failed: ${err.message} | | |`);
          continue;
        }
        const m = median(rounds.map((r) => r.ratio));
        console.log(`| ${command} | ${tier} | ${m.toFixed(3)} | ${m >= FLOOR ? 'yes' : 'no'} | ${rounds.map((r) => `${Math.round(r.untraced)} -> ${r.ratio.toFixed(3)}`).join(', ')} |`);
      }
    }
  } finally {
    target.kill('SIGKILL');
    neighbour.kill('SIGKILL');
  }
})().catch((err) => { console.error(err.message); process.exitCode = 1; });
