'use strict';
// lib/memory-budget.js: one budget of memory for a run, charged by the
// readers that keep large buffers of others' data and released as they
// drop them; shared with worker threads (the same process).
const assert = require('assert');
const { Worker } = require('worker_threads');
const { MemoryBudget, runBudget } = require('../lib/memory-budget');
const { LIMITS } = require('../lib/limits');

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
});
