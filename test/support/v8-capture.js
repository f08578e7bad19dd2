#!/usr/bin/env node
'use strict';
// Makes a fixture for the V8 frame namer's unit tests: starts a target
// (test/targets/v8-frames.js or .mjs) with the given node, waits until it
// spins, stops it, reads its main thread's registers (gdb), walks its stack
// with lib/v8 over a RecordingMemory, kills it, and prints one JSON object:
//   made      what ran (node, V8 version, target, date)
//   truth     what the target said of its own functions ("at NAME LINE
//             COLUMN" lines: V8's own [[FunctionLocation]])
//   symbols   V8's metadata values, as read from the binary or libnode
//   registers the main thread's rip, rsp, rbp
//   natives   what the symbolizer said of each pc the walk asked about
//   ranges    only the bytes of memory the walk read ([hex address, base64]),
//             and those naming its functions again from their source text read
// Usage (as root, or as the owner of the target):
//   node test/support/v8-capture.js --node PATH [--target test/targets/v8-frames.js] [--label NAME] > FIXTURE.json
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const { openProcess } = require('../../lib/v8/process');
const { RecordingMemory } = require('../../lib/v8/memory');
const { registersOf } = require('../../lib/v8/registers');
const { walkStack } = require('../../lib/v8/walk');
const { V8Namer } = require('../../lib/v8/namer');
const { findOnPath } = require('../../lib/tracer/detect');
const { readProcFile } = require('../../lib/proc');

const ROOT = path.join(__dirname, '..', '..');

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
}

// Starts the target; resolves { child, truth } once it prints "spinning".
function startSpinning(node, target, { timeoutMs = 20000, env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [target], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${target} did not spin: ${err}`)); }, timeoutMs);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => { err += d; });
    child.stdout.on('data', (d) => {
      out += d;
      if (/^spinning \d+$/m.test(out)) {
        clearTimeout(timer);
        const truth = out.split('\n').filter((l) => l.startsWith('at ')).map((l) => {
          const m = /^at (.+) (\d+) (\d+)$/.exec(l);
          return { name: m[1], line: Number(m[2]), column: Number(m[3]) };
        });
        resolve({ child, truth });
      }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${target} exited (${code}): ${err}`)); });
  });
}

// SIGSTOP, then wait until the kernel says the process is stopped.
async function stop(pid) {
  process.kill(pid, 'SIGSTOP');
  for (let i = 0; i < 200; i++) {
    const stat = readProcFile(pid, 'stat') || '';
    if (/\) T /.test(stat)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${pid} did not stop`);
}

/**
 * Captures one target: -> the fixture object. The target is killed in the
 * end, whatever happens.
 */
async function capture({ node, target, label, settleMs = 300 }) {
  const gdb = findOnPath('gdb');
  if (!gdb) throw new Error('gdb is needed (make deps installs it)');
  const { child, truth } = await startSpinning(node, target);
  try {
    // Let V8 compile the loop (on-stack replacement) as a real process would be.
    await new Promise((r) => setTimeout(r, settleMs));
    await stop(child.pid);
    const threads = await registersOf(child.pid, { gdb });
    if (threads.error) throw new Error(threads.error);
    const registers = threads.get(child.pid);
    let recording = null;
    const p = openProcess(child.pid, { wrapMemory: (m) => { recording = new RecordingMemory(m); return recording; } });
    try {
      if (!p.namer) throw new Error(`cannot name frames: ${p.note}`);
      const natives = [];
      const classify = p.classify;
      const walked = walkStack({
        memory: p.memory, registers, namer: p.namer, layout: p.layout,
        classify: (pcs) => {
          const out = classify(pcs);
          pcs.forEach((pc, i) => natives.push({ pc: pc.toString(16), ...pick(out[i]) }));
          return out;
        },
      });
      // The same functions named as on a V8 whose ScopeInfo layout is not
      // in the table (names from the source text), so that the fixture
      // holds what that fallback reads too.
      const fallback = new V8Namer({ memory: recording, layout: { ...p.layout, scopeInfo: null } });
      for (const f of walked.frames) if (f.kind === 'js') fallback.nameSfi(BigInt(f.sfi));
      return {
        made: {
          label, node: path.relative(ROOT, node).startsWith('..') ? node : path.relative(ROOT, node),
          v8: p.layout.versionText, object: p.object, target: path.relative(ROOT, target), date: new Date()
            .toISOString().slice(0, 10),
          walked: walked.frames.map((f) => f.text),
        },
        truth,
        registers,
        symbols: p.symbols,
        natives,
        ranges: recording.ranges(),
      };
    } finally {
      p.close();
    }
  } finally {
    child.kill('SIGKILL');
  }
}

function pick(f) {
  const out = { kind: f.kind };
  if (f.symbol) out.symbol = f.symbol;
  if (f.module) out.module = f.module;
  if (typeof f.offset === 'number') out.offset = f.offset;
  return out;
}

if (require.main === module) {
  const node = arg('--node', process.execPath);
  const target = path.resolve(arg('--target', path.join(ROOT, 'test', 'targets', 'v8-frames.js')));
  capture({ node, target, label: arg('--label', path.basename(node)) })
    .then((fixture) => fs.writeSync(1, JSON.stringify(fixture, null, 1) + '\n'))
    .catch((err) => { console.error(`v8-capture: ${err.message}`); process.exit(1); });
}

module.exports = { capture, startSpinning, stop };
