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
