'use strict';
// lib/memory-budget.js: one budget of memory for a run, charged by the
// readers that keep large buffers of others' data and released as they
// drop them; shared with worker threads (the same process).
const assert = require('assert');
const { Worker } = require('worker_threads');
const fs = require('fs');
const { MemoryBudget, runBudget } = require('../lib/memory-budget');
const { LIMITS, setLimitSink } = require('../lib/limits');
const { Symbolizer, parseMaps, findElfSymbols } = require('../lib/symbolize');

// An address of uv_fs_close in this process's node binary, and the mapping that holds it.
function nodeAddress() {
  const exe = fs.realpathSync(process.execPath);
  const found = findElfSymbols(exe, ['uv_fs_close']);
  const sym = found && found.found.get('uv_fs_close');
  if (!sym) return null;
  const seg = found.loads.find((l) => sym.value >= l.vaddr && sym.value < l.vaddr + l.filesz);
  const fileOff = sym.value - seg.vaddr + seg.offset + 4;
  const map = parseMaps(fs.readFileSync('/proc/self/maps', 'utf8'))
    .find((m) => m.path === exe && fileOff >= m.offset && fileOff < m.offset + (m.end - m.start));
  return map ? { exe, address: '0x' + (map.start + fileOff - map.offset).toString(16) } : null;
}

describe('memory budget of a run', function () {
  it('takes what fits, refuses what would pass the total (taking nothing), and gets back what is released', function () {
    const b = new MemoryBudget(100);
    assert.strictEqual(b.charge(60), true);
    assert.strictEqual(b.charge(41), false);
    assert.strictEqual(b.held(), 60, 'a refused charge takes nothing');
    assert.strictEqual(b.charge(40), true);
    assert.strictEqual(b.held(), 100);
    b.release(60);
    assert.strictEqual(b.charge(50), true);
    assert.strictEqual(b.held(), 90);
    assert.strictEqual(b.charge(0), true);
  });

  it('the run\'s is one, of RUN_MEMORY_BYTES', function () {
    assert.strictEqual(runBudget(), runBudget());
    assert.strictEqual(runBudget().total, BigInt(LIMITS.RUN_MEMORY_BYTES));
    assert.ok(LIMITS.RUN_MEMORY_BYTES < LIMITS.SYMBOL_CACHE_BYTES + LIMITS.MAX_CORE_NOTES_BYTES,
      'less than two readers\' own limits together: one budget binds them');
  });

  it('a worker thread given its count charges the same budget', async function () {
    const b = new MemoryBudget(100);
    b.charge(30);
    const code = `
      const { workerData, parentPort } = require('worker_threads');
      const { joinRunBudget } = require(${JSON.stringify(require.resolve('../lib/memory-budget'))});
      const run = joinRunBudget(workerData.shared);
      run.total = 100n;
      parentPort.postMessage([run.charge(60), run.charge(20), run.held()]);`;
    const w = new Worker(code, { eval: true, workerData: { shared: b.shared } });
    const got = await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
    await w.terminate();
    assert.deepStrictEqual(got, [true, false, 90]);
    assert.strictEqual(b.held(), 90);
  });

  it('a worker terminated while holding a charge: what its ledger kept is given back', async function () {
    const b = new MemoryBudget(100);
    b.charge(10);
    const ledger = new SharedArrayBuffer(8);
    const code = `
      const { workerData, parentPort } = require('worker_threads');
      const { joinRunBudget } = require(${JSON.stringify(require.resolve('../lib/memory-budget'))});
      const run = joinRunBudget(workerData.shared, workerData.ledger);
      run.charge(50);
      run.charge(20);
      run.release(20);
      parentPort.postMessage('holding');
      setInterval(() => {}, 1000);`;
    const w = new Worker(code, { eval: true, workerData: { shared: b.shared, ledger } });
    await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
    assert.strictEqual(b.held(), 60);
    await w.terminate();
    b.releaseLedger(ledger);
    assert.strictEqual(b.held(), 10, 'the worker\'s 50 given back, the main thread\'s 10 kept');
    b.releaseLedger(ledger);
    assert.strictEqual(b.held(), 10, 'once');
  });
});

describe('memory budget: the symbolizer\'s tables', function () {
  let said;
  let restore;
  beforeEach(function () {
    said = [];
    restore = setLimitSink((line) => said.push(line));
  });
  afterEach(function () { setLimitSink(restore); });

  it('charges a table its real bytes when read, and gives them back when dropped from its cache and at close()', function () {
    const at = nodeAddress();
    if (!at) this.skip();
    const budget = new MemoryBudget(LIMITS.RUN_MEMORY_BYTES);
    const s = new Symbolizer({ budget });
    const r = s.symbolize(s.snapshot(process.pid, { perfMap: false }), [at.address], { allPcs: true });
    assert.strictEqual(r.frames[0].symbol, 'uv_fs_close');
    const [table] = [...s.elfCache.values()].filter(Boolean);
    const bytes = table.values.byteLength + table.sizes.byteLength + table.values.length * 5;
    assert.ok(table.bytes > bytes, 'its string tables and its arrays');
    assert.strictEqual(budget.held(), table.bytes + (table.debug ? table.debug.bytes : 0));
    // Dropped from the cache past its own bound: given back.
    s.cacheBudget = 1;
    s.keep('other', null);
    assert.strictEqual(budget.held(), 0);
    s.symbolize(s.snapshot(process.pid, { perfMap: false }), [at.address], { allPcs: true });
    assert.ok(budget.held() > 0);
    s.close();
    assert.strictEqual(budget.held(), 0);
    assert.deepStrictEqual(said, []);
  });

  it('past the run\'s budget: one line naming the file and the bound, its frames as addresses, the others named', function () {
    const at = nodeAddress();
    if (!at) this.skip();
    const budget = new MemoryBudget(LIMITS.RUN_MEMORY_BYTES);
    assert.ok(budget.charge(LIMITS.RUN_MEMORY_BYTES - (1 << 20)), 'others hold all but 1 MB');
    const s = new Symbolizer({ budget });
    const r = s.symbolize(s.snapshot(process.pid, { perfMap: false }), [at.address, 'already`named+1'], { allPcs: true });
    s.close();
    assert.deepStrictEqual([r.frames[0].kind, r.frames[0].text], ['unknown', at.address]);
    assert.strictEqual(r.frames[1].text, 'already`named+1');
    assert.strictEqual(budget.held(), LIMITS.RUN_MEMORY_BYTES - (1 << 20), 'nothing kept charged');
    assert.strictEqual(said.length, 1, said.join('\n'));
    assert.match(said[0], new RegExp(`^nodetrace: ${at.exe.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(/proc/\\d+/map_files/[0-9a-f-]+\\): its symbols were not read \\(\\d+ MB\\): nodetrace's memory for this run is bounded to 256 MB, and 255 MB of it is held already$`));
  });
});
