#!/usr/bin/env node
'use strict';
// Runs the prototype bench/v8-frame-sample.bt against test/targets/v8-frames.js
// (no flag on the target) and names what it captured through lib/v8: each
// sampled frame's SharedFunctionInfo, named while the target still runs
// (SFIs live in old space and move only when it is compacted; the namer
// checks each one's map). Reports how deep the walk went, the probe's own
// run time per sample (nsecs inside the probe), and which functions the
// samples name: a sample counts as naming the hot function when its first
// named frame is hotLoop and the chain below it is the target's.
//
//   sudo node bench/v8-frame-sample.js [--node PATH] [--bpftrace PATH]
//        [--depth 30] [--loop unroll|while] [--stack N] [--hz 99] [--seconds 5] [--json]
// --stack N: the target calls its chain N frames deeper (V8_FRAMES_DEPTH).
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const options = require('./options');
const { startSpinning } = require('../test/support/v8-capture');
const { openProcess } = require('../lib/v8/process');

const ROOT = path.join(__dirname, '..');
const CHAIN = ['hotLoop', 'outer', 'manyLocals', '計算', 'handlers.onTick', '', 'map', 'arrow', 'run', 'Spinner', 'main'];

function run(bpftrace, file, args, seconds) {
  return new Promise((resolve) => {
    const child = spawn(bpftrace, [file, ...args.map(String)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const killer = setTimeout(() => child.kill('SIGKILL'), (seconds + 60) * 1000);
    child.on('close', (code) => { clearTimeout(killer); resolve({ code, out, err }); });
  });
}

// Pure: the program's output -> { samples: [[{ pc, sfi }]], maps: { name: text } }.
function parseOutput(text) {
  const samples = [];
  const maps = {};
  let current = null;
  let inMaps = false;
  for (const line of text.split('\n')) {
    if (line === 'Tracing ended.') { inMaps = true; continue; }
    if (inMaps) {
      const m = /^@(\w+): (.*)$/.exec(line);
      if (m) maps[m[1]] = m[2];
      continue;
    }
    if (line === 'S') { current = []; samples.push(current); continue; }
    const f = /^F ([0-9a-f]+) ([0-9a-f]+)$/.exec(line);
    if (f && current) current.push({ pc: parseInt(f[1], 16), sfi: BigInt('0x' + f[2]) });
  }
  return { samples, maps };
}

/**
 * Samples the target with the prototype and names what it captured.
 * -> the report (see main), with the target's own truth (where V8 says
 * its functions start).
 */
async function sample({ node = process.execPath, bpftrace = 'bpftrace', depth = 30, loop = 'unroll', hz = 99, seconds = 5, stack = 0 } = {}) {
  // unroll(N) (N <= 100 in bpftrace) or a bounded while loop (kernel 5.3+).
  const walk = loop === 'while' ? `while ($n < ${depth} && $fp != 0)` : `unroll(${depth})`;
  const program = fs.readFileSync(path.join(__dirname, 'v8-frame-sample.bt'), 'utf8').replace(/unroll\(\d+\)/, walk);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-v8-sample-'));
  const file = path.join(dir, 'sample.bt');
  fs.writeFileSync(file, program);
  const { child, truth } = await startSpinning(node, path.join(ROOT, 'test', 'targets', 'v8-frames.js'), { env: { V8_FRAMES_DEPTH: String(stack) } });
  try {
    const p = openProcess(child.pid);
    try {
      if (!p.namer) throw new Error(p.note);
      const r = await run(bpftrace, file, [hz, child.pid, p.layout.jsFunction.shared, seconds], seconds);
      if (r.code !== 0) throw new Error(`bpftrace failed (${r.code}): ${r.err.split('\n').filter((l) => !/RLIMIT_MEMLOCK|WARNING/.test(l)).slice(0, 6).join(' | ')}`);
      const { samples, maps } = parseOutput(r.out);
      const names = new Map();
      const t0 = process.hrtime.bigint();
      let named = 0;
      for (const s of samples) {
        for (const f of s) {
          if (f.sfi === 0n) continue;
          if (!names.has(f.sfi)) names.set(f.sfi, p.namer.nameSfi(f.sfi));
          f.js = names.get(f.sfi);
          if (f.js) named++;
        }
      }
      const namingMs = Number(process.hrtime.bigint() - t0) / 1e6;
      let hot = 0;
      let wholeChain = 0;
      for (const s of samples) {
        const js = s.filter((f) => f.js).map((f) => f.js.name);
        if (js[0] === 'hotLoop') hot++;
        if (CHAIN.every((n, i) => js[i] === n)) wholeChain++;
      }
      const depths = samples.map((s) => s.length);
      return {
        bpftrace, node, v8: p.layout.versionText, loop, depth, stack, hz, seconds,
        samples: samples.length, samplesCounted: Number(maps.samples), maxFrames: Math.max(0, ...depths),
        frames: depths.reduce((a, b) => a + b, 0),
        probeNsAvg: Number(maps.ns_avg), probeNsMax: Number(maps.ns_max),
        sfisCaptured: samples.reduce((a, s) => a + s.filter((f) => f.sfi !== 0n).length, 0), sfisNamed: named,
        distinctSfis: names.size,
        namingMs: Math.round(namingMs), hotLoopOnTop: hot, wholeChain,
        named: [...new Set([...names.values()].filter(Boolean))],
        truth,
      };
    } finally {
      p.close();
    }
  } finally {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const report = await sample({
    node: options.string('node', process.execPath), bpftrace: options.string('bpftrace', 'bpftrace'),
    depth: options.number('depth', 30), loop: options.string('loop', 'unroll'), hz: options.number('hz', 99),
    seconds: options.number('seconds', 5), stack: options.number('stack', 0),
  });
  const texts = report.named.map((x) => x.text).slice(0, 20);
  if (options.flag('json')) {
    console.log(JSON.stringify({ ...report, named: texts }));
    return;
  }
  console.log(`${report.bpftrace} on V8 ${report.v8}, ${report.loop}(${report.depth}), target ${report.stack} frames deeper, ${report.hz} Hz for ${report.seconds} s: ${report.samples} samples printed (${report.samplesCounted} counted), up to ${report.maxFrames} frames`);
  console.log(`probe run time per sample: ${report.probeNsAvg} ns on average, ${report.probeNsMax} ns at most`);
  console.log(`SFIs captured ${report.sfisCaptured}, named ${report.sfisNamed} (${report.distinctSfis} distinct, named in ${report.namingMs} ms)`);
  console.log(`samples with hotLoop as the first named frame: ${report.hotLoopOnTop}; with the whole chain below it: ${report.wholeChain}`);
  for (const n of texts) console.log('  ' + n);
}

if (require.main === module) main().catch((err) => { console.error(`v8-frame-sample: ${err.message}`); process.exit(1); });

module.exports = { parseOutput, sample };
