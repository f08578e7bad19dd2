'use strict';
// The pure parts of the whole-pool latency report: names users know for
// Node's own work, the pool's figures from the program's maps (a real
// capture: test/fixtures/bpftrace-addon-latency-pool.out), and the program
// without its @pool part for a libuv without symbols.
const assert = require('assert');
const { splitAtEndMarker } = require('../lib/tracer/output-formats');
const fs = require('fs');
const path = require('path');
const { userFacingName, symbolOf, isLibuvRequest } = require('../lib/latency/report/kind-names');
const { summarizePool, poolLines } = require('../lib/latency/report/pool');
const { buildModel } = require('../lib/latency/report/build-model');
const { summarize, hasData } = require('../lib/latency/report/summary');
const { renderJson } = require('../lib/latency/report/json');
const { withoutOptional } = require('../lib/tracer/template');
const { readScript } = require('../lib/tracer/plan');

const fixture = (name) => fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');

describe('latency: names users know for Node\'s own thread-pool work', function () {
  it('fs by libuv request type, dns by libuv work function', function () {
    assert.strictEqual(userFacingName('0x103'), 'fs.read');
    assert.strictEqual(userFacingName('0x101'), 'fs.open');
    assert.strictEqual(userFacingName('0x116'), 'fs.readdir');   // UV_FS_SCANDIR
    assert.strictEqual(symbolOf('0x116'), 'uv__fs_work UV_FS_SCANDIR');
    assert.strictEqual(userFacingName('uv__getaddrinfo_work'), 'dns.lookup');
    assert.strictEqual(userFacingName('node`uv__getnameinfo_work'), 'dns.lookupService');
    assert.strictEqual(userFacingName('node::fs::ReadFileJob::DoThreadPoolWork()'), 'fs.readFile');   // Node 26
    assert(isLibuvRequest('0x106') && isLibuvRequest('uv__random_work') && !isLibuvRequest('0x7f00aa001234'));
  });

  it('crypto by job traits (Node 18-24: the job\'s Run; Node 26: its DoThreadPoolWork), zlib by context', function () {
    assert.strictEqual(userFacingName('node::crypto::CryptoJob<node::crypto::PBKDF2Traits>::Run(v8::FunctionCallbackInfo<v8::Value> const&)'), 'crypto.pbkdf2');
    assert.strictEqual(userFacingName('node::crypto::DeriveBitsJob<node::crypto::PBKDF2Traits>::DoThreadPoolWork()'), 'crypto.pbkdf2');
    assert.strictEqual(userFacingName('node::crypto::CryptoJob<node::crypto::RandomBytesTraits>::Run(v8::FunctionCallbackInfo<v8::Value> const&)'), 'crypto.randomBytes');
    assert.strictEqual(userFacingName('node::crypto::DeriveBitsJob<node::crypto::NewTraits>::DoThreadPoolWork()'), 'crypto (New)');
    assert.strictEqual(userFacingName('node::(anonymous namespace)::CompressionStream<node::(anonymous namespace)::ZlibContext>::DoThreadPoolWork()'), 'zlib');
    assert.strictEqual(userFacingName('node::(anonymous namespace)::CompressionStream<node::(anonymous namespace)::BrotliEncoderContext>::DoThreadPoolWork()'), 'zlib.brotliCompress');
  });

  it('leaves an add-on\'s function and unknown addresses as they are', function () {
    assert.strictEqual(userFacingName('node_sqlite3::Database::Work_BeginExec(node_sqlite3::Database::Baton*)'), null);
    assert.strictEqual(userFacingName('0x7f6cb0230523'), null);
  });
});

describe('latency: the pool as a resource, from a real capture', function () {
  const text = fixture('bpftrace-addon-latency-pool.out');

  it('names the fs kinds, counts them as the target did (100 rounds), and keeps the pool\'s maps out of the kinds', function () {
    const model = buildModel(splitAtEndMarker(text.split('\n')), { tracer: 'bpftrace', traceNs: 5e9 });
    const out = JSON.parse(renderJson(summarize(model)));
    const count = (name) => (out.kinds.find((k) => k.name === name) || { count: 0 }).count;
    for (const name of ['fs.stat', 'fs.open', 'fs.fstat', 'fs.close']) assert.strictEqual(count(name), 100, name);
    assert(!out.kinds.some((k) => /pool_|queue_len/.test(k.name))
      && !out.other.some((a) => /pool_|queue_len/.test(a.name)));
    assert.deepStrictEqual(out.kinds.find((k) => k.name === 'fs.stat').symbols, ['uv__fs_work UV_FS_STAT']);
    assert.strictEqual(out.pool.threads, 4);
    // @pool_busy_us in the capture: 11,618 + 27,964 + 14,990 + 32,828 µs over 4 threads and 5 s.
    assert.strictEqual(out.pool.busy_share, Math.round((87400 / 20e6) * 1000) / 1000);
    assert.strictEqual(out.pool.saturated, false);
    assert(hasData(summarize(model)));
  });

  it('with --symbols, the codes and functions the tracer keyed them by', function () {
    const model = buildModel(splitAtEndMarker(text.split('\n')), { tracer: 'bpftrace', traceNs: 5e9, symbols: true });
    const keys = JSON.parse(renderJson(summarize(model))).kinds.map((k) => k.name);
    assert(keys.includes('0x106') && !keys.includes('fs.stat'), keys.join());
  });

  it('calls a pool saturated when some operation waited for a thread a fifth of the time or more, naming the work that held it', function () {
    const pool = (waitingUs) => ({
      pool_busy_us: { entries: [{ key: ['1'], value: 900000n }, { key: ['2'], value: 950000n }] },
      pool_waiting_us: { entries: [{ key: [], value: BigInt(waitingUs) }] },
      queue_len: null,
    });
    const kinds = [{ name: 'dns.lookup', runUs: 1.6e6 }, { name: 'fs.read', runUs: 0.2e6 }];
    const busy = summarizePool(pool(600000), kinds, 1e6);
    assert.strictEqual(busy.saturated, true);
    assert.strictEqual(busy.byKind[0].name, 'dns.lookup');
    assert.match(poolLines(busy).join('\n'), /the thread pool was saturated 60% of the time: 2 threads, mostly dns\.lookup/);
    const idle = summarizePool(pool(30000), kinds, 1e6);
    assert.strictEqual(idle.saturated, false);
    assert(!poolLines(idle).join('\n').includes('saturated'));
    // A pool that did little: its share is not rounded to nothing.
    const little = { pool_busy_us: { entries: [{ key: ['1'], value: 4000n }] }, pool_waiting_us: { entries: [{ key: [], value: 0n }] }, queue_len: null };
    assert.match(poolLines(summarizePool(little, kinds, 1e6)).join('\n'), /1 thread ran work, busy at least <1% of the time .*\n {2}operations waited for a free thread 0% of the time/);
  });

  it('does not call a pool saturated whose waits were its idle threads waking up (the sqlite3 demo: waited 34%, busy 4%, nothing queued behind)', function () {
    // Each of thousands of short operations waits ~100 µs for a thread to wake.
    const nothingBehind = { entries: [{ key: [], buckets: [{ lo: 0n, hi: 1n, count: 813n }] }] };
    const idle = { pool_busy_us: { entries: [1, 2, 3, 4].map((t) => ({ key: [String(t)], value: 10000n })) },
      pool_waiting_us: { entries: [{ key: [], value: 340000n }] }, queue_len: nothingBehind };
    const s = summarizePool(idle, [{ name: 'Work_BeginRun', runUs: 40000 }], 1e6);
    assert.strictEqual(s.saturated, false);
    assert.deepStrictEqual([s.queue.p50, s.queue.p99, s.queue.maxAtMost], [0, 0, 0], 'no percentile above the bound');
    const text = poolLines(s).join('\n');
    assert(!text.includes('was saturated'), text);
    assert.match(text, /waited for a free thread 34% of the time \(the threads were mostly idle: that is the time a thread takes to wake up/);
    // The same waits with operations queued behind: saturated, however little the finished work counted.
    const queued = { entries: [{ key: [],
      buckets: [{ lo: 0n, hi: 1n, count: 400n }, { lo: 1n, hi: 2n, count: 0n }, { lo: 2n, hi: 4n, count: 413n }] }] };
    assert.strictEqual(summarizePool({ ...idle, queue_len: queued }, [{ name: 'Work_BeginRun', runUs: 40000 }], 1e6).saturated, true);
  });
});

describe('latency: the same report whichever tracer ran (real captures of pool-mix.js, 100 rounds)', function () {
  // test/fixtures/*-addon-latency-pool.out.cmd: the same target under
  // addon-latency.bt (bpftrace 0.17) and addon-latency.d (DTrace for Linux 2.0).
  const report = (file, tracer) => JSON.parse(renderJson(summarize(buildModel(splitAtEndMarker(fixture(file).split('\n')), { tracer, traceNs: 5e9, poolNs: 5e9 }))));
  const b = report('bpftrace-addon-latency-pool.out', 'bpftrace');
  const d = report('dtrace-addon-latency-pool.out', 'dtrace');

  // Both tracers printed after the command exited, so neither could name
  // code by then: the node binary's (not relocated) addresses are the same
  // in both, and nodetrace names them from the live process's maps.
  //   0xdbe950  CompressionStream<ZlibContext>::DoThreadPoolWork()  (zlib)
  //   0xeb30ed  in CryptoJob<PBKDF2Traits>::Run                     (crypto.pbkdf2)
  //   0x18b3090 uv__getaddrinfo_work                                (dns.lookup)
  // sqlite3's (0x7f...) differ: the add-on was loaded at another address.
  it('names the same kinds, with the same symbols, counted as the target counted', function () {
    const kinds = (r) => r.kinds.filter((k) => !/^0x7f/.test(k.name)).map((k) => `${k.name} ${JSON.stringify(k.symbols)} ${k.count}`).sort();
    assert.deepStrictEqual(kinds(d), kinds(b));
    const count = (r, name) => (r.kinds.find((k) => k.name === name) || { count: 0 }).count;
    for (const name of ['fs.stat', 'fs.open', 'fs.fstat', 'fs.close', 'fs.read', '0x18b3090', '0xeb30ed']) assert.strictEqual(count(d, name), 100, name);
    assert.strictEqual(count(d, '0xdbe950'), 200, 'a write and a flush per gzip');
    assert.deepStrictEqual(d.kinds.filter((k) => /^0x7f/.test(k.name)).map((k) => k.count).sort(), ['1', '1', '100'].map(Number).sort(),
      'sqlite3: Work_BeginExec 100 times, Open and Close once');
    for (const k of d.kinds.filter((x) => x.count > 1)) assert(k.breakdown && k.breakdown.run && k.breakdown.queue_wait,
      k.name);
    assert.strictEqual(d.discarded.out_of_order, 0);
  });

  it('summarizes the pool in the same shape; DTrace\'s empty closing row does not raise the queue\'s bound', function () {
    assert.deepStrictEqual(Object.keys(d.pool).sort(), Object.keys(b.pool).sort());
    assert.deepStrictEqual(Object.keys(d.pool.queued_at_start).sort(), Object.keys(b.pool.queued_at_start).sort());
    // @pool_busy_us in the capture: 8,365 + 9,657 + 10,780 + 13,263 µs over 4 threads and 5 s.
    assert.strictEqual(d.pool.threads, 4);
    assert.strictEqual(d.pool.busy_share, Math.round((42065 / 20e6) * 1000) / 1000);
    // @pool_waiting_us 41,634 of 5 s; @queue_len's last filled row is [8, 16), then an empty [16, 32).
    assert.strictEqual(d.pool.waiting_share, Math.round((41634 / 5e6) * 1000) / 1000);
    assert.strictEqual(d.pool.queued_at_start.at_most, 15);
  });
});

describe('latency: the program without its @pool part (a libuv without symbols)', function () {
  const script = readScript('addon-latency', 'bpftrace');
  const program = withoutOptional(script, 'pool', 'test');

  it('keeps uv_queue_work\'s probes and drops every probe on $8 and up', function () {
    const body = program.split('\n').filter((l) => !/^\s*\*/.test(l) && !/^\s*\/\*/.test(l));
    assert(!body.some((l) => /\$(8|9|1[0-8])\b/.test(l)), body.filter((l) => /\$(8|9|1[0-8])\b/.test(l)).join('\n'));
    for (const probe of ['uprobe:$3:uv_queue_work', 'uprobe:$3:$4', 'uprobe:$3:$5', 'uprobe:$3:uv_async_send']) {
      assert(body.some((l) => l.trim() === probe), `${probe} is gone`);
    }
    // bpftrace refuses to read a map nothing writes: none of the pool's maps is left.
    for (const map of ['@seq', '@submitted', '@waiting_until', '@waiting_ns', '@pool_busy_us', '@pool_waiting_us', '@queue_len']) {
      assert(!body.some((l) => l.includes(map + '[') || l.includes(map + ' ') || l.includes(map + ';') || l.includes(map + ')')), `${map} is still used`);
    }
  });

  it('refuses a script without the part, or with a block left open', function () {
    assert.throws(() => withoutOptional('BEGIN { }\n', 'pool'), /no part marked @pool/);
    assert.throws(() => withoutOptional('/* @pool begin */\nx\n', 'pool'), /never closes/);
  });
});
