'use strict';
// Finding the latency program's probe points in whichever object defines
// them: pure parts, on real objdump output and real memory-map shapes.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { queueFunctionsFromDisassembly } = require('../lib/latency/stripped-libuv');
const { execFileSync } = require('child_process');
const { locate, describeBuild, unseenPoolWork, nodeVersionOf, POOL } = require('../lib/latency/probe-points');
const { parseMaps } = require('../lib/symbolize');
const { nodeBuilds, requireBuild, nodeObject } = require('./support/node-builds');

const fixture = (name) => fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');

// What lib/symbolize.js findElfSymbols() returns for one file holding `symbols`.
function table(symbols, loads = [{ offset: 0, vaddr: 0, filesz: 0x40000 }]) {
  return (file, names) => ({ loads,
    found: new Map(Object.entries(symbols).filter(([n]) => names.includes(n))
      .map(([n, [value, size]]) => [n, { value, size }])) });
}

describe('stripped libuv: uv__queue_work and uv__queue_done from uv_queue_work\'s code', function () {
  it('follows the pointers Debian 12\'s libuv stores into work_req (inlined uv__work_submit)', function () {
    const found = queueFunctionsFromDisassembly(fixture('objdump-debian12-libuv-uv_queue_work.txt'));
    assert.deepStrictEqual({ work: found.work, done: found.done }, { work: 0xad00, done: 0xb1c0 });
    assert.match(found.how, /work_req/);
  });

  it('takes only addresses in code', function () {
    const found = queueFunctionsFromDisassembly(fixture('objdump-debian12-libuv-uv_queue_work.txt'), (a) => a !== 0xad00);
    assert.strictEqual(found, null);
  });

  it('says nothing rather than something wrong where the code loads a pointer from memory (official Node 22)', function () {
    // Its symbols give the answer (0x1d26250, 0x1d26700); the code alone does not.
    assert.strictEqual(queueFunctionsFromDisassembly(fixture('objdump-node22-uv_queue_work.txt')), null);
  });

  it('reads the arguments of a call to uv__work_submit (libuv that does not inline it)', function () {
    const text = [
      '  10:\tlea    0x100(%rip),%rcx        # 200 <x>',
      '  17:\tlea    0x180(%rip),%r8        # 280 <y>',
      '  1e:\tlea    0x58(%rsi),%rsi',
      '  22:\tcall   400 <uv__work_submit>',
    ].join('\n');
    assert.deepStrictEqual(queueFunctionsFromDisassembly(text), { work: 0x200, done: 0x280, how: 'passed to uv__work_submit by uv_queue_work' });
  });
});

describe('where each probe point is, from the process\'s own memory map', function () {
  const PID = 4242;
  const staticMaps = parseMaps([
    '00400000-00e0c000 r--p 00000000 fe:00 100 /opt/node/bin/node',
    '00e10000-0301c000 r-xp 00a10000 fe:00 100 /opt/node/bin/node',
    '7f0000000000-7f0000100000 r-xp 00000000 fe:00 200 /usr/lib/x86_64-linux-gnu/libc.so.6',
  ].join('\n'));
  const sharedMaps = parseMaps([
    '55d000000000-55d000001000 r-xp 00001000 fe:00 300 /usr/bin/node',
    '7f1000000000-7f1000800000 r-xp 00400000 fe:00 301 /usr/lib/x86_64-linux-gnu/libnode.so.108',
    '7f2000000000-7f2000008000 r-xp 00008000 fe:00 302 /usr/lib/x86_64-linux-gnu/libuv.so.1.0.0',
    '7f2000010000-7f2000012000 rw-p 0002e000 fe:00 302 /usr/lib/x86_64-linux-gnu/libuv.so.1.0.0',
  ].join('\n'));
  const ALL = { napi_create_async_work: [0x1000, 10], napi_queue_async_work: [0x1100, 10], uv_queue_work: [0x2000, 10],
    uv_async_send: [0x2100, 10], uv__queue_work: [0x2200, 10], uv__queue_done: [0x2300, 10] };

  it('finds all six by name in a static node (official builds)', function () {
    const found = locate({
      pid: PID, maps: staticMaps, exePath: '/opt/node/bin/node',
      findSymbols: (file, names) => (file.includes('400000-e0c000') ? table(ALL) : table({}))(file, names),
      disassemble: () => assert.fail('a static build needs no disassembly'),
    });
    assert.deepStrictEqual(found.missing, []);
    for (const p of Object.values(found.points)) {
      assert.strictEqual(p.file, `/proc/${PID}/map_files/400000-e0c000`);   // map_files names have no zero padding
      assert.strictEqual(p.how, 'symbol');
    }
    assert.deepStrictEqual(describeBuild(found, '/opt/node/bin/node'), {
      napiIn: '/opt/node/bin/node', libuvIn: '/opt/node/bin/node', node: 'static (in the executable)', libuv: 'static (in the executable)', libuvStripped: false,
    });
  });

  it('finds the rest of the pool (uv__work_submit, fs, dns, random) with uv__fs_work\'s and uv__queue_work\'s places, or none of it', function () {
    const POOLED = { ...ALL, uv__work_submit: [0x3000, 10], uv__fs_work: [0x3100, 10],
      uv__getaddrinfo_work: [0x3200, 10], uv__getnameinfo_work: [0x3300, 10],
      uv__random_work: [0x3400, 10], uv__fs_done: [0x3500, 10], uv__getaddrinfo_done: [0x3600, 10],
      uv__getnameinfo_done: [0x3700, 10], uv__random_done: [0x3800, 10] };
    const run = (symbols) => locate({
      pid: PID, maps: staticMaps, exePath: '/opt/node/bin/node',
      findSymbols: (file, names) => (file.includes('400000-e0c000') ? table(symbols, [{ offset: 0, vaddr: 0x400000, filesz: 0x4000000 }]) : table({}))(file, names),
      disassemble: () => assert.fail('no disassembly'),
    });
    const found = run(POOLED);
    for (const n of POOL) assert.strictEqual(found.points[n].value, POOLED[n][0], n);
    // An executable linked at 0x400000 and mapped there: no load bias.
    assert.deepStrictEqual(found.points.uv__fs_work.range, { start: 0x3100, end: 0x310a });
    assert.deepStrictEqual(found.points.uv__queue_work.range, { start: 0x2200, end: 0x220a });
    assert.strictEqual(unseenPoolWork(found.points), null);
    const partial = { ...POOLED };
    delete partial.uv__getnameinfo_done;
    const without = run(partial);
    assert(POOL.every((n) => !without.points[n]), 'a partial pool is no pool');
    assert.deepStrictEqual(without.missing, [], 'the pool is optional');
    assert.match(unseenPoolWork(without.points),
      /^fs, dns\.lookup and dns\.lookupService work is not seen: node has no symbols/);
  });

  it('finds N-API in libnode and libuv\'s stripped statics by address (Debian\'s nodejs)', function () {
    const tables = {
      [`/proc/${PID}/map_files/7f1000000000-7f1000800000`]: table({ napi_create_async_work: [0x5000, 9], napi_queue_async_work: [0x5100, 9] }),
      [`/proc/${PID}/map_files/7f2000000000-7f2000008000`]: table({ uv_queue_work: [0xb4e0, 0xd1], uv_async_send: [0xf250, 9] },
        [{ offset: 0x8000, vaddr: 0x8000, filesz: 0x1b345 }]),
    };
    let disassembled = null;
    const found = locate({
      pid: PID, maps: sharedMaps, exePath: '/usr/bin/node',
      findSymbols: (file, names) => (tables[file] || table({}))(file, names),
      disassemble: (file, start, size) => { disassembled = { file, start, size }; return { text: fixture('objdump-debian12-libuv-uv_queue_work.txt') }; },
    });
    assert.deepStrictEqual(found.missing, []);
    assert.deepStrictEqual(disassembled, { file: `/proc/${PID}/map_files/7f2000000000-7f2000008000`, start: 0xb4e0, size: 0xd1 });
    assert.strictEqual(found.points.napi_create_async_work.object, '/usr/lib/x86_64-linux-gnu/libnode.so.108');
    assert.strictEqual(found.points.uv_queue_work.object, '/usr/lib/x86_64-linux-gnu/libuv.so.1.0.0');
    assert.strictEqual(found.points.uv__queue_work.location, '0xad00');
    assert.strictEqual(found.points.uv__queue_done.location, '0xb1c0');
    const build = describeBuild(found, '/usr/bin/node');
    assert.strictEqual(build.node, 'shared libnode.so.108');
    assert.strictEqual(build.libuvStripped, true);
  });

  it('gives bpftrace every function by its address in the file it names, none by name (static and shared builds)', function () {
    const { latencyProgram } = require('../lib/latency/program');
    const named = (text) => text.split('\n').filter((l) => /^uprobe:/.test(l)).join('\n');
    const debian = {
      [`/proc/${PID}/map_files/7f1000000000-7f1000800000`]: table({ napi_create_async_work: [0x5000, 9], napi_queue_async_work: [0x5100, 9] }),
      [`/proc/${PID}/map_files/7f2000000000-7f2000008000`]: table({ uv_queue_work: [0xb4e0, 0xd1], uv_async_send: [0xf250, 9] },
        [{ offset: 0x8000, vaddr: 0x8000, filesz: 0x1b345 }]),
    };
    const builds = {
      static: locate({ pid: PID, maps: staticMaps, exePath: '/opt/node/bin/node',
        findSymbols: (file, names) => (file.includes('400000-e0c000') ? table(ALL) : table({}))(file, names) }),
      'Debian\'s (libnode, stripped libuv)': locate({ pid: PID, maps: sharedMaps, exePath: '/usr/bin/node',
        findSymbols: (file, names) => (debian[file] || table({}))(file, names),
        disassemble: () => ({ text: fixture('objdump-debian12-libuv-uv_queue_work.txt') }) }),
    };
    for (const [build, found] of Object.entries(builds)) {
      const program = latencyProgram(found.points, { pid: PID });
      const probes = named(program.programText);
      // Every uprobe on a file the program names is at an address (the rest take theirs as arguments).
      assert.doesNotMatch(probes, /^uprobe:\$[13]:[A-Za-z_]/m, build);
      for (const [file, fn] of [['$1', 'napi_create_async_work'], ['$1', 'napi_queue_async_work'],
        ['$3', 'uv_queue_work'], ['$3', 'uv_async_send']]) {
        const at = `0x${found.points[fn].value.toString(16)}`;
        assert.match(probes, new RegExp(`^uprobe:\\${file}:${at}$`, 'm'), `${build}: ${fn} at its symbol's value in ${file}`);
        assert(program.programText.includes(`/* ${at} is ${fn} */`), `${build}: the program says which function ${at} is`);
      }
      assert.match(`${program.args.QUEUE_WORK} ${program.args.QUEUE_DONE}`, /^0x[0-9a-f]+ 0x[0-9a-f]+$/, build);
    }
    // Where a symbol has no value the probe goes by name, as before.
    const send = builds.static.points.uv_async_send;
    const unknown = { ...builds.static.points, uv_async_send: { ...send, value: undefined } };
    assert.match(named(latencyProgram(unknown, { pid: PID }).programText), /^uprobe:\$3:uv_async_send$/m);
  });

  it('names exactly what is missing, and why, when libuv\'s code does not show the statics', function () {
    const found = locate({
      pid: PID, maps: sharedMaps, exePath: '/usr/bin/node',
      findSymbols: (file, names) => (file.includes('7f2000000000') ? table({ uv_queue_work: [0x9000, 0x40], uv_async_send: [0x9100, 9] }) : table({}))(file, names),
      disassemble: () => ({ text: fixture('objdump-node22-uv_queue_work.txt') }),
    });
    assert.deepStrictEqual(found.missing.map((m) => m.name).sort(),
      ['napi_create_async_work', 'napi_queue_async_work', 'uv__queue_done', 'uv__queue_work']);
    assert.match(found.missing.find((m) => m.name === 'uv__queue_work').why, /libuv\.so\.1\.0\.0 has no symbol for it/);
    assert.match(found.missing.find((m) => m.name === 'napi_create_async_work').why, /none of the 3 objects/);
  });
});

describe('latency where the probe points are not to be found @tracer', function () {
  this.timeout(60000);
  const { requireTracing, nodetrace, killStragglers } = require('./support/harness');
  const { spawn } = require('child_process');
  before(function () { requireTracing(this); });
  afterEach(killStragglers);

  it('names what is missing and exits 1, never "no work" (a process with no Node in it, --force)', async function () {
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const r = await nodetrace(['latency', '-p', String(sleeper.pid), '--force', '-d', '1']);
      assert.strictEqual(r.code, 1, r.stderr);
      assert.match(r.stderr, /^nodetrace: cannot trace thread-pool work in PID \d+: not found: napi_create_async_work, napi_queue_async_work, uv_queue_work, uv_async_send \(defined by none of the \d+ objects mapped with code\); uv__queue_work, uv__queue_done \(uv_queue_work was not found, so neither was its libuv\)\.$/m);
      assert.doesNotMatch(r.stderr, /no thread-pool work/);
      assert.strictEqual(r.stdout, '');
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('with -c, says the binary must define them itself, and how to trace it instead', async function () {
    const r = await nodetrace(['latency', '-c', '/bin/sleep 5', '-d', '1']);
    assert.strictEqual(r.code, 1, r.stderr);
    assert.match(r.stderr, /not found: napi_create_async_work, .*uv__queue_done \(\/\S*sleep does not define it/);
    assert.match(r.stderr, /trace it by PID: nodetrace latency -p PID/);
  });
});

// async picks its layout by this version, doctor and ps print it.
describe('the Node version read from the object that defines N-API, as that node says it', function () {
  this.timeout(60000);
  for (const build of nodeBuilds('all')) {
    it(build.label, function () {
      requireBuild(this, build);
      const said = execFileSync(build.node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
      assert.strictEqual(nodeVersionOf(nodeObject(build)), said);
    });
  }

  it('none in a file that names no release; one read across the 8 MiB it reads at a time', function () {
    assert.strictEqual(nodeVersionOf('/bin/sh'), null);
    const dir = fs.mkdtempSync(path.join(require('os').tmpdir(), 'nodetrace-release-'));
    try {
      const file = path.join(dir, 'node');
      const fd = fs.openSync(file, 'w');
      // (sparse: 9 MiB of zeros but for the name, 8 bytes before the first chunk's end)
      fs.writeSync(fd, Buffer.from('node-v1.22.333.tar.gz'), 0, 21, 8 * 1024 * 1024 - 8);
      fs.ftruncateSync(fd, 9 * 1024 * 1024);
      fs.closeSync(fd);
      assert.strictEqual(nodeVersionOf(file), '1.22.333');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
