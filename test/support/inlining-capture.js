#!/usr/bin/env node
'use strict';
// Makes a fixture for the inlining reader's unit tests (lib/v8/inlining.js):
// starts test/targets/profile-inline.js with the given node, lets V8
// optimize its arrow function `step` (scale, mix and clampTo inlined into
// it), stops it once its main thread is in step's code, reads what step's
// code inlined where it ran, over a RecordingMemory, kills it, and prints
// one JSON object:
//   made      what ran, and what was read: the frame's pc (sampled, not a
//             return address), the functions inlined there, innermost first
//             (and as the walk gave them)
//   symbols   V8's metadata values
//   function  the frame's function slot (a JSFunction, tagged, hex)
//   sfi       the frame's SharedFunctionInfo (tagged, hex)
//   fsBase    the thread's pointer (hex: where V8 14 finds its isolate)
//   dispatch  V8 13+: where its dispatch table is, as read from the binary
//             (lib/v8/dispatch-table.js), or null
//   ranges    only the bytes of memory read ([hex address, base64])
// Usage (as root, or as the owner of the target):
//   node test/support/inlining-capture.js --node PATH [--label NAME] > FIXTURE.json
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const { openProcess } = require('../../lib/v8/process');
const { RecordingMemory } = require('../../lib/v8/memory');
const { registersOf } = require('../../lib/v8/registers');
const { Heap } = require('../../lib/v8/heap');
const { inlinedAt } = require('../../lib/v8/inlining');
const { findOnPath } = require('../../lib/tracer/detect');
const { stop } = require('./v8-capture');

const ROOT = path.join(__dirname, '..', '..');
const TARGET = path.join(ROOT, 'test', 'targets', 'profile-inline.js');

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
}

function started(node) {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [TARGET], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.once('data', () => resolve(child));
    child.on('error', reject);
  });
}

// One try: stopped in step's optimized code with a function inlined at the pc -> the fixture, or null.
async function tryOnce(child, gdb, label, node) {
  await stop(child.pid);
  try {
    const threads = await registersOf(child.pid, { gdb });
    if (threads.error) throw new Error(threads.error);
    let recording = null;
    const p = openProcess(child.pid, { wrapMemory: (m) => { recording = new RecordingMemory(m); return recording; } });
    try {
      if (!p.namer) throw new Error(`cannot name frames: ${p.note}`);
      const top = p.walk(threads.get(child.pid)).frames[0];
      if (!top || top.kind !== 'js' || top.name !== 'step') return null;
      const heap = new Heap(p.memory, p.layout);
      const reader = p.inlining;
      if (reader.limitation()) throw new Error(reader.limitation());
      const { fsBase } = threads.get(child.pid);
      const fn = heap.word(top.fp + p.layout.frame.function);
      const record = reader.describe(reader.codeOf(fn, { fsBase }));
      const inlined = inlinedAt(record, top.pc);
      if (!inlined || !inlined.length) return null;
      return {
        made: {
          label, node: path.relative(ROOT, node).startsWith('..') ? node : path.relative(ROOT, node),
          v8: p.layout.versionText, target: path.relative(ROOT, TARGET), date: new Date().toISOString().slice(0, 10),
          pc: top.pc.toString(16), inlined: inlined.map((r) => r && r.text),
          // What the walk itself put above the frame (lib/v8/walk.js).
          walked: (top.inlined || []).map((r) => r && r.text),
        },
        symbols: p.symbols,
        function: fn.toString(16),
        sfi: top.sfi.toString(16),
        fsBase: fsBase === undefined ? null : fsBase.toString(16),
        dispatch: reader.layout.dispatch,
        ranges: recording.ranges(),
      };
    } finally {
      p.close();
    }
  } finally {
    process.kill(child.pid, 'SIGCONT');
  }
}

async function capture({ node, label }) {
  const gdb = findOnPath('gdb');
  if (!gdb) throw new Error('gdb is needed (make deps installs it)');
  const child = await started(node);
  try {
    await new Promise((r) => setTimeout(r, 2500));
    for (let i = 0; i < 20; i++) {
      const fixture = await tryOnce(child, gdb, label, node);
      if (fixture) return fixture;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('never stopped in step with a function inlined at its pc');
  } finally {
    child.kill('SIGKILL');
  }
}

if (require.main === module) {
  const node = arg('--node', process.execPath);
  capture({ node, label: arg('--label', path.basename(node)) })
    .then((fixture) => fs.writeSync(1, JSON.stringify(fixture, null, 1) + '\n'))
    .catch((err) => { console.error(`inlining-capture: ${err.message}`); process.exit(1); });
}

module.exports = { capture };
