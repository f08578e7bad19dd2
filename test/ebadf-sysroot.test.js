'use strict';
// What gdb needs beside the core of a process in a container
// (lib/ebadf/sysroot.js): the mapped objects, opened through map_files,
// copied at their paths, with the loader's names for them (its link map,
// lib/proc/link-map.js) as links. Here on this test's own process; the
// containers' case is in test/containers.test.js.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { parseMaps } = require('../lib/symbolize');
const { loaderNames } = require('../lib/proc/link-map');
const { openMappedObjects, closeObjects, saveSysroot, safeInsidePath } = require('../lib/ebadf/sysroot');

describe('ebadf: the files beside a core (sysroot)', function () {
  it('takes only plain absolute paths as names inside a root', function () {
    assert(safeInsidePath('/usr/lib/x86_64-linux-gnu/libc.so.6'));
    for (const bad of ['lib/x', '/a/../b', '/a/./b', '/a//b', '/a/', '', '/a\0b', null]) assert(!safeInsidePath(bad), String(bad));
  });

  it('reads the loader\'s names for this process\'s libraries from its link map', function () {
    if (process.getuid() !== 0) this.skip();   // map_files: root's
    const maps = parseMaps(fs.readFileSync('/proc/self/maps', 'utf8'));
    const exe = fs.readlinkSync('/proc/self/exe');
    const captured = openMappedObjects(process.pid, maps, exe);
    try {
      assert(captured.objects.some((o) => o.path === exe), 'the executable opened');
      const libc = maps.find((m) => /\/libc\.so\.6$|\/libc-[\d.]+\.so$/.test(m.path));
      const all = loaderNames(process.pid, maps, captured.objects.find((o) => o.path === exe));
      assert(all.some((n) => n.path === libc.path && /libc/.test(n.name)), JSON.stringify(all));
    } finally {
      closeObjects(captured);
    }
  });

  it('copies the objects at their paths and links the loader\'s names to them, relative, inside', function () {
    if (process.getuid() !== 0) this.skip();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-sysroot-'));
    try {
      const maps = parseMaps(fs.readFileSync('/proc/self/maps', 'utf8'));
      const exe = fs.readlinkSync('/proc/self/exe');
      const captured = openMappedObjects(process.pid, maps, exe);
      // A made-up loader name, as a container's /lib -> usr/lib gives them.
      captured.names.push({ name: '/lib-of-the-loader/node', path: exe }, { name: '/elsewhere/x', path: '/not/saved' });
      const core = path.join(dir, 'core.node.1.x');
      fs.writeFileSync(core, 'core');
      const r = saveSysroot(captured, core);
      closeObjects(captured);
      assert.strictEqual(r.root, `${core}.root`, r.error);
      assert.strictEqual(fs.statSync(r.root).mode & 0o777, 0o700);
      assert.strictEqual(fs.statSync(path.join(r.root, exe)).size, fs.statSync(exe).size);
      const link = path.join(r.root, 'lib-of-the-loader', 'node');
      assert(!path.isAbsolute(fs.readlinkSync(link)), 'relative');
      assert.strictEqual(fs.realpathSync(link), fs.realpathSync(path.join(r.root, exe)));
      assert(!fs.existsSync(path.join(r.root, 'elsewhere')), 'no link to a file not saved');
      assert.deepStrictEqual(fs.readdirSync(dir).filter((f) => f.startsWith('.')), [], 'nothing temporary left');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
