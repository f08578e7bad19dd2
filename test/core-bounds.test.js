'use strict';
// Cores a hostile user crafts (issue 35, points 4 and 5), made here,
// sparse: `stack CORE` died of an out-of-memory crash on a 4 KB core whose
// eight PT_NOTE headers cover one 64 MiB hole (5.4 GB, 48 s: a zero note
// every 12 bytes, each made an object), and took some 30 minutes on a core
// of 65,534 executable segments and an NT_FILE note of 2.8 M entries (each
// segment tested against every file). Each now opens within its bounds,
// says the limit in one line, and reads what is honest in it.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const { openCore, parseFileNote, overlapTest } = require('../lib/v8/core-file');
const { Symbolizer } = require('../lib/symbolize');
const { LIMITS, setLimitSink } = require('../lib/limits');
const { MemoryBudget } = require('../lib/memory-budget');
const { writeCore, threadNotes, fileNote } = require('./support/crafted-elf');

const NODETRACE = path.join(__dirname, '..', 'bin', 'nodetrace');
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };

describe('cores a hostile user crafts (issue 35, points 4 and 5)', function () {
  this.timeout(120000);
  let dir;
  let said;
  let restore;
  before(function () { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-core-bounds-')); });
  after(function () { fs.rmSync(dir, { recursive: true, force: true }); });
  beforeEach(function () {
    said = [];
    restore = setLimitSink((line) => said.push(line));
  });
  afterEach(function () { setLimitSink(restore); });

  // Eight PT_NOTE headers over one hole of `mb` MiB each, after the real notes.
  const zeroNotes = (name, mb) => writeCore(path.join(dir, name), { extraNotes: 8, extraNoteBytes: mb << 20 });
  // 65,530 executable segments (vm.max_map_count's worth) and an NT_FILE note of `files` entries.
  function manyMappings(name, count) {
    const files = [];
    for (let i = 0; i < count; i++) files.push({ start: 0x100000000 + i * 0x2000, end: 0x100000000 + i * 0x2000 + 0x1000, path: `/nonexistent/f${i}` });
    // The first segment lies inside the first file: backed, so no map of its own.
    const loads = [{ vaddr: 0x100000000, size: 4096, exec: true }];
    for (let i = 1; i < 65530; i++) loads.push({ vaddr: 0x700000000000 + i * 0x2000, size: 4096, exec: true });
    return writeCore(path.join(dir, name), { notes: Buffer.concat([threadNotes(), fileNote(files)]), loads });
  }

  it('reads at most 64 MB of notes in all, and no object per ignored note: the thread is still there', function () {
    const file = zeroNotes('zero-notes.core', 64);
    const rss = process.memoryUsage().rss;
    const t = cpuMs();
    const core = openCore(file);
    try {
      assert.ok(cpuMs() - t < 5000, `${cpuMs() - t} ms of CPU`);
      assert.ok(process.memoryUsage().rss - rss < 256 * 1024 * 1024, 'under 256 MB more');
      assert.deepStrictEqual(core.threads.map((th) => th.tid), [4242]);
      assert.strictEqual(core.command, 'node');
    } finally {
      core.close();
    }
    assert.deepStrictEqual(said, [
      `nodetrace: ${file}: its notes are ${(8 * (64 << 20) + threadNotes().length).toLocaleString('en-US')} bytes, more than the 64 MB nodetrace reads: the rest were not read`,
      `nodetrace: ${file}: it holds more than 262144 notes; the first 262144 were read (8 for each of 32768 threads)`,
    ]);
  });

  it('reads no note segment the run\'s memory has no room for, says so in one line, and the rest as usual', function () {
    const file = zeroNotes('budget.core', 4);
    // Other readers hold all but 2 MiB of the run's budget: each 4 MiB
    // segment of zero notes is refused, the thread's own notes are read.
    const others = new MemoryBudget(LIMITS.RUN_MEMORY_BYTES);
    assert.ok(others.charge(LIMITS.RUN_MEMORY_BYTES - 2 * 1024 * 1024));
    const core = openCore(file, { budget: others });
    try {
      assert.deepStrictEqual(core.threads.map((th) => th.tid), [4242]);
      assert.strictEqual(core.command, 'node');
      assert.strictEqual(core.notesUnread, 8 * (4 << 20), 'every refused segment counted as unread');
      assert.strictEqual(core.truncated, 0, 'no memory missing from the file');
    } finally {
      core.close();
    }
    assert.strictEqual(others.held(), LIMITS.RUN_MEMORY_BYTES - 2 * 1024 * 1024, 'what was charged, released');
    assert.deepStrictEqual(said, [
      `nodetrace: ${file}: a note segment of ${(4 << 20).toLocaleString('en-US')} bytes was not read: nodetrace's memory for this run is bounded to 256 MB, and 254 MB of it is held already`,
    ]);
  });

  it('counts a segment the run\'s memory refuses among the notes not read, beside those past the notes\' bound', function () {
    // Eight 24 MiB segments after the thread's notes: the budget takes the
    // first three charges (the thread's notes, two segments: 48 MiB read),
    // then refuses each of the others, cut to what is left of the 64 MiB
    // bound (16 MiB less the thread's notes) and the rest past it.
    const file = zeroNotes('budget-and-bound.core', 24);
    const budget = new MemoryBudget(LIMITS.RUN_MEMORY_BYTES);
    let charges = 0;
    const charge = budget.charge.bind(budget);
    budget.charge = (bytes) => ++charges <= 3 && charge(bytes);
    const core = openCore(file, { budget });
    core.close();
    const total = 8 * (24 << 20) + threadNotes().length;
    const read = threadNotes().length + 2 * (24 << 20);
    assert.strictEqual(core.notesUnread, total - read);
    assert.strictEqual(core.truncated, 0, 'no memory missing from the file');
    assert.strictEqual(budget.held(), 0, 'each segment released once read');
    assert.deepStrictEqual(said, [
      `nodetrace: ${file}: a note segment of ${((64 << 20) - read).toLocaleString('en-US')} bytes was not read: nodetrace's memory for this run is bounded to 256 MB, and 0 bytes of it is held already`,
      `nodetrace: ${file}: its notes are ${total.toLocaleString('en-US')} bytes, more than the 64 MB nodetrace reads: the rest were not read`,
      `nodetrace: ${file}: it holds more than 262144 notes; the first 262144 were read (8 for each of 32768 threads)`,
    ]);
  });

  it('reads the first 65,536 files of NT_FILE, and finds the unbacked code of 65,530 segments without testing each against each', function () {
    const file = manyMappings('mappings.core', 100000);
    const t = cpuMs();
    const core = openCore(file);
    try {
      assert.ok(cpuMs() - t < 5000, `${cpuMs() - t} ms of CPU`);
      assert.strictEqual(core.files.length, LIMITS.MAX_CORE_FILES);
      assert.strictEqual(core.files[65535].path, '/nonexistent/f65535');
      // Every file, and every segment but the one inside a file.
      assert.strictEqual(core.maps.length, LIMITS.MAX_CORE_FILES + 65530 - 1);
      assert.ok(!core.maps.some((m) => m.path === '' && m.start === 0x100000000));
      // Every pc of a walk looked up by binary search: 10,000 in milliseconds.
      const s = new Symbolizer();
      const snap = { pid: 1, maps: core.maps, perfMap: null, elfFiles: () => [] };
      const t2 = cpuMs();
      const pcs = [];
      for (let i = 0; i < 10000; i++) pcs.push('0x' + (0x700000000000 + (i % 65530) * 0x2000 + 16).toString(16));
      const frames = s.symbolize(snap, pcs, { allPcs: true }).frames;
      assert.ok(cpuMs() - t2 < 2000, `${cpuMs() - t2} ms of CPU`);
      assert.ok(frames.slice(1).every((f) => f.kind === 'jit'), 'anonymous code, each found in its mapping');
    } finally {
      core.close();
    }
    assert.deepStrictEqual(said, [`nodetrace: ${file}: its NT_FILE note lists 100000 mappings; the first 65536 were read (a process has at most vm.max_map_count, 65,530 by default)`]);
  });

  it('overlapTest: a range meets one of ranges, overlapping or nested, in any order', function () {
    const meets = overlapTest([{ start: 50, end: 60 }, { start: 10, end: 40 }, { start: 15, end: 20 }]);
    assert.deepStrictEqual([[0, 10], [0, 11], [39, 50], [40, 50], [25, 26], [59, 70], [60, 70]]
      .map(([a, b]) => meets(a, b)),
      [false, true, true, false, true, true, false]);
    assert.strictEqual(overlapTest([])(0, 100), false);
  });

  it('parseFileNote: at most `max` entries, each path bounded', function () {
    const head = Buffer.alloc(16 + 24 * 3);
    head.writeBigUInt64LE(3n, 0);
    head.writeBigUInt64LE(4096n, 8);
    const desc = Buffer.concat([head, Buffer.from(`/a\0${'x'.repeat(10000)}\0/c\0`)]);
    const files = parseFileNote(desc, { max: 2 });
    assert.deepStrictEqual(files.map((f) => f.path.length), [2, LIMITS.MAX_CORE_PATH_BYTES]);
    assert.strictEqual(files.more, 1);
  });

  // `nodetrace stack FILE`, its peak RSS sampled: -> { code, stderr, ms, peakKb }.
  async function stackOf(file) {
    const child = spawn(process.execPath, [NODETRACE, 'stack', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    let peakKb = 0;
    const sample = setInterval(() => {
      try { peakKb = Math.max(peakKb, Number(/^VmHWM:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1])); } catch { /* gone */ }
    }, 50);
    const t0 = Date.now();
    const code = await new Promise((resolve) => child.on('close', resolve));
    clearInterval(sample);
    return { code, stderr, ms: Date.now() - t0, peakKb };
  }

  it('stack on a core of eight note headers over one 64 MiB hole ends in seconds, under 512 MB, saying the limit and what the core is', async function () {
    const file = zeroNotes('stack.core', 64);
    assert.ok(fs.statSync(file).blocks * 512 < 1 << 20, 'sparse');
    const { code, stderr, ms, peakKb } = await stackOf(file);
    assert.ok(ms < 60000, `${ms} ms`);
    assert.ok(peakKb < 512 * 1024, `${peakKb} kB`);
    assert.strictEqual(code, 1);
    assert.deepStrictEqual(stderr.trim().split('\n'), [
      `nodetrace: ${file}: its notes are ${(8 * (64 << 20) + threadNotes().length).toLocaleString('en-US')} bytes, more than the 64 MB nodetrace reads: the rest were not read`,
      `nodetrace: ${file}: it holds more than 262144 notes; the first 262144 were read (8 for each of 32768 threads)`,
      `nodetrace: ${file} is the core of node (PID 4242), in which no mapped file on this host carries V8's metadata: not a Node process's core, or one from a container (give its root with --root).`,
    ]);
  });

  // Point 5 end to end (it took some 30 minutes): 0.3 s measured, quiet.
  it('stack on a core of 65,530 executable segments and 100,000 files ends in seconds, under 512 MB, saying the limit and what the core is', async function () {
    const file = manyMappings('stack-mappings.core', 100000);
    const { code, stderr, ms, peakKb } = await stackOf(file);
    assert.ok(ms < 60000, `${ms} ms`);
    assert.ok(peakKb < 512 * 1024, `${peakKb} kB`);
    assert.strictEqual(code, 1);
    assert.deepStrictEqual(stderr.trim().split('\n'), [
      `nodetrace: ${file}: its NT_FILE note lists 100000 mappings; the first 65536 were read (a process has at most vm.max_map_count, 65,530 by default)`,
      `nodetrace: ${file} is the core of node (PID 4242), in which no mapped file on this host carries V8's metadata: not a Node process's core, or one from a container (give its root with --root).`,
    ]);
  });
});
