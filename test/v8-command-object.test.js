'use strict';
// lib/v8/command-object.js: the object that will carry V8 in a `profile -c`
// command not started yet: its executable, or the libnode it links, found
// where the dynamic loader would look. The search path is pure; the files
// are the real builds of the matrix (Debian 12's node 18 keeps V8 in
// libnode.so.108 and finds it through DT_RUNPATH and the multiarch dir).
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { commandV8Object, librarySearchPath } = require('../lib/v8/command-object');
const { layoutFrom } = require('../lib/v8/metadata');
const { buildNamed, CACHE } = require('./support/node-builds');

describe('profile -c: the V8 of a command not started yet', function () {
  it('searches as the loader does: DT_RPATH only without DT_RUNPATH, LD_LIBRARY_PATH between, $ORIGIN expanded, then the system\'s directories', function () {
    const sys = ['/lib/x86_64-linux-gnu', '/usr/lib/x86_64-linux-gnu', '/lib64', '/usr/lib64', '/lib', '/usr/lib', '/usr/local/lib'];
    assert.deepStrictEqual(librarySearchPath({ rpath: ['/r'], runpath: [], origin: '/o/bin', ldLibraryPath: '/l1:/l2', arch: 'x64' }),
      ['/r', '/l1', '/l2', ...sys]);
    assert.deepStrictEqual(librarySearchPath({ rpath: ['/r'], runpath: ['$ORIGIN/../lib', '${ORIGIN}/', '$LIB/x', 'relative'], origin: '/o/bin', arch: 'x64' }),
      ['/o/bin/../lib', '/o/bin/', ...sys]);
    assert.deepStrictEqual(librarySearchPath({ origin: '/o', arch: 'arm64', systemRoot: '/root' }).slice(0, 2), ['/root/lib/aarch64-linux-gnu', '/root/usr/lib/aarch64-linux-gnu']);
  });

  it('an official build: its executable carries the metadata', function () {
    const found = commandV8Object(process.execPath);
    assert.strictEqual(found.file, process.execPath);
    assert.strictEqual(layoutFrom(found.symbols).versionText.split('.').slice(0, 2).join('.'), process.versions.v8.split('.').slice(0, 2).join('.'));
    assert.strictEqual(commandV8Object('/bin/sh'), null, 'a shell: no V8, no libnode');
  });

  const debian = buildNamed('debian18');
  const root = path.join(CACHE, 'debian18', 'root');
  const exe = path.join(root, 'usr', 'bin', 'node');

  it('Debian 12\'s node 18: its libnode.so.108, in the multiarch directory, with V8 10.2\'s layout (SHARED 24)', function () {
    if (!fs.existsSync(exe)) this.skip(`${debian.label} is not installed (make node-builds)`);
    const found = commandV8Object(exe, { root, env: {} });
    assert.strictEqual(found.file, path.join(root, 'usr', 'lib', 'x86_64-linux-gnu', 'libnode.so.108'));
    const layout = layoutFrom(found.symbols);
    assert.match(layout.versionText, /^10\.2\./);
    assert.strictEqual(layout.jsFunction.shared, 24);
    // Not found where the loader would look (no such root here): nothing, never a guess.
    assert.strictEqual(commandV8Object(exe, { root: path.join(root, 'nowhere'), env: {} }), null);
  });

  it('a FIFO planted as libnode where LD_LIBRARY_PATH points: refused at once, never waited on, and the search stops there as the loader\'s would', function () {
    if (!fs.existsSync(exe)) this.skip(`${debian.label} is not installed (make node-builds)`);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-libnode-'));
    try {
      assert.strictEqual(spawnSync('mkfifo', [path.join(dir, 'libnode.so.108')]).status, 0);
      const started = Date.now();
      assert.strictEqual(commandV8Object(exe, { root, env: { LD_LIBRARY_PATH: dir } }), null);
      // (A blocking open would never return; 5 s is slack for a loaded host.)
      assert(Date.now() - started < 5000, 'it did not wait on the FIFO');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
