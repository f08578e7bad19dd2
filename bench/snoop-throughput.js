#!/usr/bin/env node
'use strict';
// What bunyan's probes cost the process that has them, and what snooping
// costs it (test/targets/bunyan-throughput.js: a bunyan logger at level info
// doing units of CPU work and calling log.debug()):
//
//   1. untraced, a tight loop of log.debug() calls: the stock dtrace-provider
//      stub (what bunyan loads on Linux) vs nodetrace's provider
//      (-r register.js) with no tracer attached. Debug calls/s; the ratio
//      should be within 5%.
//   2. 10,000 debug records a second spread over the work: units of work/s
//      with nodetrace's provider untraced vs snooped by `nodetrace snoop PID`
//      (--json, and bunyan's default long output), so the drop is what
//      snooping at that rate costs the target; plus the stub for reference.
//   3. the tight loop again, snooped: the most records/s a snoop takes from
//      one thread, and what it loses.
//
// Rounds alternate between the variants so that a busy machine hurts them
// alike; the median round counts. Part 1 needs nothing; parts 2-3 need root
// and bpftrace (skipped otherwise). With --pin, the target runs on CPU 0 and
// everything else (tracer, nodetrace, bunyan) on the other CPUs, which
// separates what the target itself pays from competition for its CPU.
//
//   sudo node bench/snoop-throughput.js [--seconds 3] [--rounds 3] [--rate 10000] [--pin] [--steady]
//       [--parts 1,2,3] [--only count,script,json,long,stub]
// --parts runs only those parts; --only keeps only those variants of parts 2
// and 3 (beside the untraced one every ratio is to).
const path = require('path');
const { spawn } = require('child_process');

const ROOT = path.join(__dirname, '..');
const TARGET = path.join(ROOT, 'test', 'targets', 'bunyan-throughput.js');
const REGISTER = path.join(ROOT, 'register.js');
const NODETRACE = path.join(ROOT, 'bin', 'nodetrace');

const options = require('./options');
const opt = options.number;
const SECONDS = opt('seconds', 3);
const ROUNDS = opt('rounds', 3);
const RATE = opt('rate', 10000);
// Time for the snoop to attach before measuring starts.
const ATTACH_SECONDS = opt('attach-seconds', 6);
const CPUS = require('os').cpus().length;
const PIN = options.flag('pin') && CPUS > 1;
// Arithmetic units of work (no allocation), steady enough to see 10%.
const STEADY = options.flag('steady');
const PARTS = options.string('parts', '1,2,3').split(',').map(Number);
const ONLY = options.string('only', '');
// Variant keys --only may name; the first variant of a part always runs.
function chosen(variants) {
  if (!ONLY) return variants;
  const keys = ONLY.split(',');
  return variants.filter((v, i) => i === 0 || keys.includes(v.key));
}

// [file, args] for a command, pinned to `cpus` with --pin.
function cmd(cpus, file, args) {
  return PIN ? ['taskset', ['-c', cpus, file, ...args]] : [file, args];
}
const TARGET_CPUS = '0';
const OTHER_CPUS = `1-${CPUS - 1}`;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function lines(stream, onLine) {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (c) => {
    buf += c;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) { onLine(buf.slice(0, nl)); buf = buf.slice(nl + 1); }
  });
}

// One run of the target; with `snoop`, `nodetrace snoop PID <snoop args>`
// attaches during the warm-up. -> { units, calls, seconds, snooped }
function runOnce({ register, rate, snoop }) {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, RATE: String(rate), DURATION: String(SECONDS), WARMUP: String(snoop ? ATTACH_SECONDS : 1), STEADY: STEADY ? '1' : '0' };
    const target = spawn(...cmd(TARGET_CPUS, process.execPath, [...(register ? ['-r', REGISTER] : []), TARGET]), { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let tracer = null;
    let ready = false;
    let received = 0;
    let stderr = '';
    let result = null;
    lines(target.stdout, (line) => {
      const m = /^ready (\d+)/.exec(line);
      if (m && (snoop === 'count' || snoop === 'script')) {
        // count: probes enabled, records only counted in the kernel, i.e.
        // what enabling bunyan's probes costs, without any output path.
        // script: d-scripts/log-snoop.bt alone, its output discarded.
        const lib = require('../lib/probe-libraries').librariesOf(Number(m[1]), require('../lib/snoop/targets').BUNYAN);
        // The bpftrace under test (NODETRACE_BPFTRACE: a tier) and, for the
        // script, exactly the program and settings nodetrace snoop plans for it.
        const bt = require('../lib/tracer/detect').detectBpftrace();
        const planned = require('../lib/snoop/plan').planSnoop(bt, { kind: 'pids', pids: [Number(m[1])], libraries: lib, describe: '' }, 10);
        const args = snoop === 'count'
          ? ['-p', m[1], '-e', `BEGIN { printf("Hit Ctrl-C to end.\\n"); } usdt:${require('../lib/tracer/capabilities').usdtPathForPid(bt, m[1], lib[0])}:bunyan:log-* { @records = count(); }`]
          : planned.argv.filter((a) => a !== '-f' && a !== 'json');   // text output: the lines below are read as text
        tracer = spawn(...cmd(OTHER_CPUS, bt.path, args), { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...planned.env } });
        lines(tracer.stdout, (l) => {
          if (/Hit Ctrl-C to end|Snooping bunyan records/.test(l)) ready = true;
          const c = /^@records: (\d+)/.exec(l);
          if (c) stderr = `${c[1]} records ${snoop === 'count' ? 'counted, none printed' : 'printed'}`;
        });
      } else if (m && snoop) {
        tracer = spawn(...cmd(OTHER_CPUS, process.execPath, [NODETRACE, 'snoop', m[1], ...snoop]), { stdio: ['ignore', 'pipe', 'pipe'] });
        lines(tracer.stdout, () => { received++; });
        tracer.stderr.setEncoding('utf8');
        tracer.stderr.on('data', (c) => {
          stderr += c;
          if (/nodetrace: snooping/.test(stderr)) ready = true;
        });
      }
      const r = /^result (\d+) (\d+) ([\d.]+)/.exec(line);
      if (r) result = { units: Number(r[1]), calls: Number(r[2]), seconds: Number(r[3]) };
    });
    target.on('exit', () => {
      if (!result) return reject(new Error('the target printed no result'));
      if (!tracer) return resolve({ ...result, snooped: null });
      if (!ready) {
        tracer.kill('SIGKILL');
        return reject(new Error(`the snoop was not attached before measuring began (raise --attach-seconds): ${stderr}`));
      }
      tracer.on('close', () => {
        resolve({ ...result, snooped: { received, summary: stderr.trim().split('\n').pop() } });
      });
      tracer.kill('SIGINT');
    });
  });
}

async function compare(title, variants, metric) {
  const samples = variants.map(() => []);
  const snoops = variants.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < variants.length; i++) {
      const r = await runOnce(variants[i]);
      samples[i].push(metric(r));
      if (r.snooped) snoops[i].push(r);
    }
  }
  console.log(`\n${title}`);
  const base = median(samples[0]);
  variants.forEach((v, i) => {
    const m = median(samples[i]);
    let line = `  ${v.label.padEnd(44)} ${Math.round(m).toLocaleString('en-US').padStart(12)}/s  ${(m / base).toFixed(3)}x`;
    if (snoops[i].length) {
      const last = snoops[i][snoops[i].length - 1];
      const perSec = median(snoops[i].map((r) => r.calls / r.seconds));
      line += `   (${Math.round(perSec).toLocaleString('en-US')} records/s logged; last round: ${last.snooped.summary.replace(/^nodetrace: /, '')})`;
    }
    console.log(line);
    if (v.note) console.log(`      ${v.note}`);
  });
  return samples.map(median);
}

async function main() {
  const bt = require('../lib/tracer/detect').detectBpftrace();
  console.log(`bunyan ${require('bunyan/package.json').version}, node ${process.version}, ${CPUS} CPUs, `
    + (bt.available ? `bpftrace ${bt.version}${bt.chosenBy ? ` (${bt.path})` : ''}, ` : '')
    + `${ROUNDS} rounds of ${SECONDS} s per variant (median shown)`
    + (PIN ? `; target pinned to CPU ${TARGET_CPUS}, tracers to CPUs ${OTHER_CPUS}` : '; nothing pinned'));
  const canTrace = process.getuid && process.getuid() === 0 && require('../lib/tracer/detect').detectBpftrace().available;

  if (PARTS.includes(1)) await compare('1. untraced: log.debug() at level info, as fast as it goes (debug calls/s)', [
    { label: 'stock dtrace-provider stub', register: false, rate: 0 },
    { label: 'nodetrace provider (-r register.js)', register: true, rate: 0 },
  ], (r) => r.calls / r.seconds);

  if (!canTrace) {
    console.log('\n(2. and 3. need root and bpftrace: skipped)');
    return;
  }
  if (PARTS.includes(2)) await compare(`2. ${RATE.toLocaleString('en-US')} debug records/s spread over the work (units of work/s)`, chosen([
    { label: 'nodetrace provider, untraced', register: true, rate: RATE },
    { key: 'count', label: 'probes enabled, records only counted', register: true, rate: RATE, snoop: 'count',
      note: '(bpftrace -e \'usdt:...:bunyan:log-* { @records = count(); }\': bunyan builds every record, the probe fires)' },
    { key: 'script', label: 'bpftrace log-snoop(-whole).bt alone, output discarded', register: true, rate: RATE, snoop: 'script' },
    { key: 'json', label: 'snooped: nodetrace snoop PID --json', register: true, rate: RATE, snoop: ['--json'] },
    { key: 'long', label: 'snooped: nodetrace snoop PID (bunyan long)', register: true, rate: RATE, snoop: ['--no-color'] },
    { key: 'stub', label: 'stock dtrace-provider stub (reference)', register: false, rate: RATE },
  ]), (r) => r.units / r.seconds);

  if (PARTS.includes(3)) await compare('3. log.debug() as fast as it goes, snooped (debug calls/s)', chosen([
    { label: 'nodetrace provider, untraced', register: true, rate: 0 },
    { key: 'count', label: 'probes enabled, records only counted', register: true, rate: 0, snoop: 'count' },
    { key: 'script', label: 'bpftrace log-snoop(-whole).bt alone, output discarded', register: true, rate: 0, snoop: 'script' },
    { key: 'json', label: 'snooped: nodetrace snoop PID --json', register: true, rate: 0, snoop: ['--json'] },
  ]), (r) => r.calls / r.seconds);
}

main().catch((err) => {
  console.error(err.stack || err);
  process.exitCode = 1;
});
