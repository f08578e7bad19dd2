'use strict';
// nodetrace doctor -p: the report from what was found (pure).
const assert = require('assert');
const { describe: describeProcess, render } = require('../lib/process-checks');

const LIBNODE = '/usr/lib/x86_64-linux-gnu/libnode.so.108';
const LIBUV = '/usr/lib/x86_64-linux-gnu/libuv.so.1.0.0';
const sym = (object, name) => ({ object, file: `/proc/7/map_files/x`, location: name, how: 'symbol' });
const addr = (location) => ({ object: LIBUV, file: '/proc/7/map_files/y', location, how: 'address: no symbol (stripped); stored into work_req by uv_queue_work' });

describe('doctor -p report', function () {
  it('a shared, stripped build in another mount namespace: where each point is, and what will not work', function () {
    const report = describeProcess({
      pid: 7, exePath: '/usr/bin/node', version: '18.20.4', otherMountNamespace: true,
      who: { pid: 7, pidInside: 1, container: { id: 'ab'.repeat(32), runtime: 'podman', name: 'web' }, otherMounts: true },
      byHand: 'BPFTRACE_CACHE_USER_SYMBOLS=1 /usr/bin/bpftrace --unsafe /x/d-scripts/addon-latency.bt /proc/7/map_files/7f00-7f80 7',
      commands: [{ command: 'latency', can: 'yes', why: 'bpftrace is given the mapped files themselves, without -p' }, { command: 'snoop', can: 'no', why: 'no bunyan probe library' }],
      found: {
        missing: [],
        points: {
          napi_create_async_work: sym(LIBNODE, 'napi_create_async_work'), napi_queue_async_work: sym(LIBNODE, 'napi_queue_async_work'),
          uv_queue_work: sym(LIBUV, 'uv_queue_work'), uv_async_send: sym(LIBUV, 'uv_async_send'),
          uv__queue_work: addr('0xad00'), uv__queue_done: addr('0xb1c0'),
        },
      },
    });
    assert.strictEqual(report.node, 'shared libnode.so.108');
    assert.strictEqual(report.libuv, 'shared libuv.so.1.0.0 (stripped)');
    // The command latency would run (gather() asks its plan), passed through.
    assert.match(report.latencyByHand, /^BPFTRACE_CACHE_USER_SYMBOLS=1 /);
    assert.deepStrictEqual(report.process, { pid: 7, pid_inside: 1, container: { id: 'ab'.repeat(32), runtime: 'podman', name: 'web' } });
    assert.strictEqual(report.wontWork.length, 3);
    const text = render(report);
    assert.match(text, /^PID 7 \(PID 1 in podman container web \(abababababab\)\): \/usr\/bin\/node \(its path in its own mounts\)$/m);
    assert.match(text, /^ {4}latency {2}yes: bpftrace is given the mapped files themselves, without -p$/m);
    assert.match(text, /^ {4}snoop {4}no: no bunyan probe library$/m);
    assert.match(text, /bpftrace is given map_files without -p/);
    assert.match(text, /^ {4}uv__queue_work {10}0xad00 in \/usr\/lib\/x86_64-linux-gnu\/libuv\.so\.1\.0\.0 \(no symbol \(stripped\); stored into work_req by uv_queue_work\)$/m);
    assert.match(text, /^ {4}napi_create_async_work {2}symbol in \/usr\/lib\/x86_64-linux-gnu\/libnode\.so\.108$/m);
    assert.match(text, /another mount namespace/);
  });

  it('what is missing is said, and latency is said not to work', function () {
    const report = describeProcess({
      pid: 9, exePath: '/usr/bin/python3', version: null, otherMountNamespace: false,
      found: { points: {}, missing: ['napi_create_async_work', 'napi_queue_async_work', 'uv_queue_work', 'uv_async_send', 'uv__queue_work', 'uv__queue_done'].map((name) => ({ name, why: 'defined by none of the 4 objects mapped with code' })) },
    });
    assert.strictEqual(report.latencyByHand, null);
    assert(report.probes.every((p) => !p.found));
    assert.match(report.wontWork[0], /^latency: 6 of its 6 probe points not found/);
    assert.match(render(report), /NOT FOUND: defined by none of the 4 objects mapped with code/);
  });
});

describe('doctor -p: what tracing this process costs the others', function () {
  const { othersCostOf } = require('../lib/process-checks');
  const found = { points: { napi_create_async_work: sym('/usr/bin/node', 'napi_create_async_work'), uv_queue_work: sym('/usr/bin/node', 'uv_queue_work') }, missing: [] };

  it('bpftrace 0.17: the processes that map the probed files now, by PID, and how to avoid it', function () {
    let asked = null;
    const neighbours = (plan) => {
      asked = plan;
      return Array.from({ length: 12 }, (_, i) => ({ pid: 100 - i, name: i === 0 ? 'evil\x1b[2J\nnodetrace: ok' : 'node' }));
    };
    const cost = othersCostOf(7, { name: 'bpftrace', version: '0.17.0' }, found, { neighbours });
    // The files its probe points were found in, once each; the process itself is the target, not a neighbour.
    assert.deepStrictEqual(asked.uprobeFiles, ['/proc/7/map_files/x']);
    assert.strictEqual(asked.target.pid, 7);
    assert.strictEqual(cost.othersPay, true);
    assert.strictEqual(cost.paying, 12);
    assert.deepStrictEqual(cost.payingShown.map((o) => o.pid), [89, 90, 91, 92, 93, 94, 95, 96, 97, 98]);
    const text = render(describeProcess({ pid: 7, exePath: '/usr/bin/node', version: '20.20.2', otherMountNamespace: false, found, othersCost: cost }));
    const line = text.split('\n').find((l) => l.startsWith('  others   '));
    assert.match(line, /^ {2}others {3}now 12 other processes map the files its probes would be set in \(PID 89 node, .*98 node and 2 more\); bpftrace 0\.17\.0 sets uprobes in every process/);
    assert.match(line, /bpftrace 0\.20 or later/);
    // A name is its process's to choose: shown escaped, never obeyed.
    const shown = othersCostOf(7, { name: 'bpftrace', version: '0.17.0' }, found, { neighbours: () => [{ pid: 5, name: 'evil\x1b[2J\nnodetrace: ok' }] });
    const text2 = render(describeProcess({ pid: 7, exePath: '/usr/bin/node', version: '20.20.2', otherMountNamespace: false, found, othersCost: shown }));
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(text2, /[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    assert(!text2.split('\n').some((l) => l.startsWith('nodetrace: ok')));
    assert.match(text2, /now 1 other process maps the files/);
  });

  it('bpftrace 0.20 and later: nobody else pays, and no process is looked for', function () {
    const cost = othersCostOf(7, { name: 'bpftrace', version: '0.27.1' }, found, { neighbours: () => assert.fail('not asked') });
    assert.deepStrictEqual({ ...cost, detail: undefined }, { tracer: 'bpftrace 0.27.1', othersPay: false, detail: undefined, paying: 0, payingShown: [] });
    const text = render(describeProcess({ pid: 7, exePath: '/usr/bin/node', version: '20.20.2', otherMountNamespace: false, found, othersCost: cost }));
    assert.match(text, /^ {2}others {3}bpftrace 0\.27\.1 sets uprobes in the traced process only \(-p, in the kernel\): other Node processes do not pay$/m);
    assert.strictEqual(othersCostOf(7, null, found), null);
  });
});

describe('27.10: doctor -p with paths a hostile user chose', function () {
  it('shows escapes and line breaks, never obeys them; JSON escapes C1 controls too', function () {
    const { renderJson } = require('../lib/process-checks');
    const evil = '/home/m/d\x1b[2J\x1b]0;t\x07\nnodetrace: all clear\r\x9b31m/node';
    const report = describeProcess({
      pid: 9, exePath: evil, version: null, otherMountNamespace: true,
      found: { points: {}, missing: [{ name: 'uv_queue_work', why: `not in ${evil}` }] },
    });
    const text = render(report);
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(text, /[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    assert(!text.split('\n').some((l) => l.startsWith('nodetrace: all clear')));
    assert.match(text, /^PID 9: \/home\/m\/d\\x1b\[2J\\x1b\]0;t\\x07\\x0anodetrace: all clear\\x0d\\u009b31m\/node/);
    const json = renderJson(report);
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(json, /[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    assert.strictEqual(JSON.parse(json).executable, evil);
  });

  it('/proc/PID/maps: a mapping whose path holds \\r or U+2028 is still seen', function () {
    const { parseMaps } = require('../lib/symbolize');
    const maps = parseMaps('00400000-00b6f000 r-xp 00000000 fe:00 99 /home/m/a\rb\u2028c\\012d/node\n');
    assert.strictEqual(maps.length, 1);
    assert.strictEqual(maps[0].path, '/home/m/a\rb\u2028c\\012d/node');
  });
});

describe('doctor -p: whether JavaScript frames can be named, and how (pure)', function () {
  const base = { pid: 7, exePath: '/usr/bin/node', version: '20.20.2', otherMountNamespace: false, found: { points: {}, missing: [] } };

  it('a V8 nodetrace knows: named with no flag, where (worker threads too), and what else names them', function () {
    const known = render(describeProcess({ ...base, javascript: { v8: '11.3.244.8', object: '/usr/bin/node', note: null, perfMap: null } }));
    assert.match(known, /^ {2}JS {7}named with no flag, from V8 11\.3\.244\.8's metadata in \/usr\/bin\/node \(profile's threads, worker threads too; ebadf's hit; nodetrace stack on its cores\)$/m);
    const withMap = describeProcess({ ...base, javascript: { v8: '12.4.254.21', object: '/usr/local/bin/node', note: null, perfMap: '/tmp/perf-7.map' } });
    assert.match(withMap.javascript, /; \/tmp\/perf-7\.map names them too \(and profile -c's\)$/);
    // Functions V8 inlined: shown above their caller where its code can be read, else why not.
    const inlined = describeProcess({ ...base, javascript: { v8: '12.4.254.21', object: '/usr/local/bin/node', note: null, perfMap: null, inlined: 'shown' } });
    assert.match(inlined.javascript,
      /nodetrace stack on its cores\); functions V8 inlined are shown above their caller$/);
    const why = 'V8 13.6.233.10 (its functions hold a handle into its dispatch table, not their code): a function its optimizing compiler inlined is counted as its caller';
    const notShown = describeProcess({ ...base, javascript: { v8: '13.6.233.10', object: '/usr/local/bin/node', note: null, perfMap: null, inlined: why } });
    assert.match(notShown.javascript,
      /\); not shown apart: V8 13\.6\.233\.10 \(its functions hold a handle into its dispatch table, not their code\): a function its optimizing compiler inlined is counted as its caller$/);
    // Whether the main script has a source map nodetrace reads (lib/source-maps.js check).
    const js = (sourceMaps) => describeProcess({ ...base, javascript: { v8: '14.6.202.34', object: '/usr/local/bin/node', note: null, perfMap: null, inlined: 'shown', sourceMaps } }).javascript;
    assert.match(js({ script: '/app/dist/main.js', found: true, map: '/app/dist/main.js.map' }), /above their caller; \/app\/dist\/main\.js has a source map \(\/app\/dist\/main\.js\.map\): its frames are shown where it puts them$/);
    assert.match(js({ script: '/app/dist/main.js', found: false, why: 'its map\'s path leads out of the process\'s root: not followed' }), /; the source map of \/app\/dist\/main\.js is not read: its map's path leads out of the process's root: not followed$/);
    assert.match(js({ script: '/app/main.js', found: false, why: null }), /; \/app\/main\.js has no source map$/);
    assert.match(js(null), /above their caller$/, 'no main script found');
  });

  it('a V8 it does not know, or no metadata: said in one line, and what names them instead', function () {
    const unknown = describeProcess({ ...base, javascript: { v8: null, note: 'V8 15.1.2.3 is not a version nodetrace knows: JavaScript is named from the perf map only', perfMap: null } });
    assert.strictEqual(unknown.javascript, 'not from V8\'s metadata: V8 15.1.2.3 is not a version nodetrace knows; named only if node runs with --perf-basic-prof (then from its perf map)');
    const none = describeProcess({ ...base, javascript: { v8: null, note: 'no mapped object of the process carries V8\'s postmortem metadata: JavaScript is named from the perf map only', perfMap: '/tmp/perf-7.map' } });
    assert.match(none.javascript, /^not from V8's metadata: no mapped object .*; named from \/tmp\/perf-7\.map$/);
    assert.strictEqual(describeProcess(base).javascript, null, 'not asked: no line');
  });
});

describe('doctor -p: the by-hand command runs as printed @tracer', function () {
  this.timeout(180000);
  const { spawn } = require('child_process');
  const { requireTracing, startTarget, stopTarget, nodetrace, killStragglers } = require('./support/harness');
  let target;
  before(function () { requireTracing(this); });
  afterEach(function () { stopTarget(target); killStragglers(); });

  it('on the sqlite3 loop: the printed line, run by sh as it is, attaches and prints the five kinds', async function () {
    target = await startTarget('sqlite-loop.js');
    const r = await nodetrace(['doctor', '-p', String(target.pid)]);
    assert.strictEqual(r.code, 0, r.stderr);
    // HTTP's sources off the wire: an official node links OpenSSL into itself.
    assert.match(r.stdout, /^ {4}http {5}yes: with -p PID, off the wire: plain HTTP from its socket calls, HTTPS from the OpenSSL linked into its executable \(\S+\);/m);
    const line = /^ {2}by hand: (.*)$/m.exec(r.stdout);
    assert.ok(line, r.stdout);
    assert.match(line[1], /^(\w+=\S+ )*\S*bpftrace (--?[a-z-]+ )*-p \d+ \S+\/d-scripts\/addon-latency\.bt /, 'the bpftrace command, not the dry run (this node has every probe point)');
    // The printed text, as a shell reads it: no quoting, no interpolation of ours.
    const sh = spawn('sh', ['-c', line[1]], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    sh.stdout.setEncoding('utf8');
    sh.stderr.setEncoding('utf8');
    sh.stderr.on('data', (c) => { err += c; });
    const ended = new Promise((resolve) => sh.on('close', (code, signal) => resolve({ code, signal })));
    // Attached once it says so and then runs on; then ended as nodetrace ends
    // bpftrace: SIGTERM, again every second (0.17 can miss one).
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`never ready: ${err}`)), 120000);
      sh.stdout.on('data', (c) => { out += c; if (/Hit Ctrl-C to end\./.test(out)) { clearTimeout(timer); resolve(); } });
      sh.on('close', () => { clearTimeout(timer); reject(new Error(`ended before it was ready: ${err}`)); });
    });
    await new Promise((resolve) => setTimeout(resolve, 8000));
    const nudge = setInterval(() => { try { process.kill(-sh.pid, 'SIGTERM'); } catch { /* gone */ } }, 1000);
    process.kill(-sh.pid, 'SIGTERM');
    const how = await ended;
    clearInterval(nudge);
    assert.match(out, /^Tracing ended\.$/m, `${JSON.stringify(how)} ${err}`);
    for (const kind of ['Work_BeginOpen', 'Work_BeginExec', 'Work_BeginClose', 'Work_BeginPrepare', 'Work_BeginRun']) {
      assert.match(out, new RegExp(`^@total_us\\[node_sqlite3::\\w+::${kind}\\(`, 'm'), `${kind}:\n${out.slice(0, 3000)}`);
    }
  });
});
