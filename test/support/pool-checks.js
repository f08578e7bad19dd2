'use strict';
// What `nodetrace latency` must show about the thread pool whichever tracer
// ran it (test/latency-pool.test.js for bpftrace, test/dtrace-linux.test.js
// for DTrace): on test/targets/pool-mix.js, every kind of the mix by the name
// its users know, counted within 10% of what the target counted itself; on
// test/targets/pool-saturate.js, a saturated pool and what saturated it.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { nodetrace, startTarget, stopTarget, ROOT } = require('./harness');

const names = (kinds) => kinds.map((k) => `${k.name} (${k.count})`).join(', ');

/**
 * Runs the mix under `nodetrace latency -c ... --json` (-c: the probes are in
 * place before the command runs, so every operation is seen and counts can be
 * compared). The target's own count comes through a file: with dtrace -c its
 * stdout is dtrace's.
 * @returns {Promise<{report: object, own: object}>}
 */
async function tracePoolMix({ rounds = 150, args = [], env = {}, timeoutMs = 170000 } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-pool-mix-'));
  try {
    const doneFile = path.join(dir, 'done');
    const r = await nodetrace(['latency', ...args, '-c', `${process.execPath} ${path.join(ROOT, 'test', 'targets', 'pool-mix.js')}`, '--json'],
      { env: { ...env, ROUNDS: String(rounds), DONE_FILE: doneFile }, timeoutMs });
    assert.strictEqual(r.code, 0, r.stderr);
    assert(fs.existsSync(doneFile), `the target did not finish: ${r.stderr}`);
    const own = JSON.parse(/done (\{.*\})/.exec(fs.readFileSync(doneFile, 'utf8'))[1]);
    return { report: JSON.parse(r.stdout), own };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Asserts what a report of the mix must show, against the target's own count. */
function checkPoolMix(report, own) {
  const kinds = report.kinds;
  const kind = (name) => kinds.find((k) => k.name === name);
  const near = (name, expected) => {
    const k = kind(name);
    assert(k, `no ${name} kind in ${names(kinds)}`);
    assert(Math.abs(k.count - expected) <= expected * 0.1, `${name}: ${k.count} operations seen, the target did ${expected}`);
    return k;
  };
  near('fs.stat', own['fs.stat']);
  // fs.readFile: open, fstat, read, close on the pool.
  for (const step of ['fs.open', 'fs.fstat', 'fs.close']) near(step, own['fs.readFile']);
  assert(kind('fs.read').count >= own['fs.readFile'], `fs.read: ${kind('fs.read').count}`);
  near('dns.lookup', own['dns.lookup']);
  near('crypto.pbkdf2', own['crypto.pbkdf2']);
  // One gzip of 16 KB is a write and a flush on the pool.
  assert(kind('zlib') && kind('zlib').count >= own['zlib.gzip'], `zlib in ${names(kinds)}`);
  const exec = kinds.find((k) => k.name.includes('Work_BeginExec'));
  assert(exec && Math.abs(exec.count - own['sqlite3.exec']) <= own['sqlite3.exec'] * 0.1, `sqlite3 exec in ${names(kinds)}`);
  // The C++ or libuv functions behind the names given for users.
  assert.deepStrictEqual(kind('fs.stat').symbols, ['uv__fs_work UV_FS_STAT']);
  assert.deepStrictEqual(kind('dns.lookup').symbols, ['uv__getaddrinfo_work']);
  assert(kind('zlib').symbols.every((s) => /CompressionStream<.*ZlibContext>/.test(s)), kind('zlib').symbols.join());
  assert.strictEqual(exec.symbols, null, 'an add-on\'s function is its own name');
  for (const k of kinds.filter((x) => /^(fs|dns)\./.test(x.name))) {
    assert(k.breakdown && k.breakdown.run && k.breakdown.queue_wait, `${k.name}: no breakdown`);
    assert(k.p50 > 0 && k.p50 < 5e6, `${k.name}: p50 ${k.p50} µs`);
  }
  assert(report.pool && report.pool.threads >= 1 && report.pool.threads <= 4, JSON.stringify(report.pool));
  assert(report.pool.busy_share > 0 && report.pool.busy_share <= 1);
  // Every operation's start is in the queue figures, uv_queue_work's too
  // (zlib, crypto, sqlite3: node 20 inlines uv__work_submit into it).
  const started = kinds.reduce((s, k) => s + k.count, 0);
  assert(report.pool.queued_at_start.starts >= started * 0.9, `queue length measured at ${report.pool.queued_at_start.starts} starts of ${started} operations`);
}

/**
 * Traces pool-saturate.js (2 pool threads kept busy by crypto.pbkdf2 while
 * fs.stat waits) twice, for 4 s each: -> { json, text } reports.
 * `skipUnless(pid)`: called once the target runs, may skip the caller.
 */
async function traceSaturatedPool({ args = [], env = {}, timeoutMs = 170000, skipUnless = () => {} } = {}) {
  const target = await startTarget('pool-saturate.js', { env: { UV_THREADPOOL_SIZE: '2', ITERATIONS: '20000' } });
  try {
    skipUnless(target.pid);
    const run = async (more) => {
      const r = await nodetrace(['latency', ...args, '-p', String(target.pid), '-d', '4', ...more], { env, timeoutMs });
      assert.strictEqual(r.code, 0, r.stderr);
      return r.stdout;
    };
    return { json: JSON.parse(await run(['--json'])), text: await run([]) };
  } finally {
    stopTarget(target);
  }
}

/** The saturated pool's JSON report: saturated, 2 threads, a queue, crypto.pbkdf2 to blame. */
function checkSaturatedJson(json) {
  const pool = json.pool;
  assert.strictEqual(pool.saturated, true, JSON.stringify(pool));
  assert.strictEqual(pool.threads, 2, JSON.stringify(pool));
  assert(pool.waiting_share >= 0.5, `waiting ${pool.waiting_share}`);
  assert.strictEqual(pool.run_share_by_kind[0].name, 'crypto.pbkdf2', JSON.stringify(pool.run_share_by_kind));
  assert(pool.queued_at_start.p50 >= 1, JSON.stringify(pool.queued_at_start));
  const stat = json.kinds.find((k) => k.name === 'fs.stat');
  assert(stat && stat.breakdown.queue_wait.p50 > stat.breakdown.run.p50 * 10, 'fs.stat waits behind the pbkdf2 work');
}

/** ... and its text report says so in one line. */
function checkSaturatedText(text) {
  assert.match(text, /^ {2}the thread pool was saturated \d+% of the time: 2 threads, mostly crypto\.pbkdf2; consider UV_THREADPOOL_SIZE/m);
}

module.exports = { tracePoolMix, checkPoolMix, traceSaturatedPool, checkSaturatedJson, checkSaturatedText };
