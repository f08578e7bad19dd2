'use strict';
// A run's private directory says whose it is; a later run removes those of
// killed runs, and nothing else in a shared /tmp (lib/tracer/run-dirs.js).

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { makeRunDir, sweepAbandonedRunDirs, RUN_DIR } = require('../lib/tracer/run-dirs');

describe('run directories: a killed run\'s is removed by the next, nothing else is', function () {
  let tmp;
  beforeEach(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'run-dirs-test-')); });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('names the directory with the PID of the run that made it, mode 0700', function () {
    const dir = makeRunDir('addon-latency', { tmp, pid: 4242 });
    const name = path.basename(dir);
    assert.match(name, /^nodetrace-addon-latency-p4242-[A-Za-z0-9]{6}$/);
    assert.strictEqual(RUN_DIR.exec(name)[1], '4242');
    assert.strictEqual(fs.statSync(dir).mode & 0o777, 0o700);
  });

  it('removes a dead run\'s directory with what it held; keeps a live run\'s', function () {
    const dead = makeRunDir('profile-js', { tmp, pid: 111 });
    fs.writeFileSync(path.join(dead, 'profile-js.bt'), 'BEGIN {}');
    fs.symlinkSync('/etc/hostname', path.join(dead, 'exe'));
    const live = makeRunDir('profile-js', { tmp, pid: 222 });
    const removed = sweepAbandonedRunDirs({ tmp, running: (pid) => pid === 222 });
    assert.deepStrictEqual(removed, [path.basename(dead)]);
    assert(!fs.existsSync(dead));
    assert(fs.existsSync(live));
    assert(fs.existsSync('/etc/hostname'), 'a link in it was removed as a link');
  });

  it('leaves what only looks like one: a link, a file, another user\'s, another name', function () {
    const target = fs.mkdtempSync(path.join(tmp, 'kept-'));
    fs.symlinkSync(target, path.join(tmp, 'nodetrace-x-p111-abcdef'));
    fs.writeFileSync(path.join(tmp, 'nodetrace-y-p111-abcdef'), '');
    fs.mkdirSync(path.join(tmp, 'nodetrace-z-111-abcdef'));
    fs.mkdirSync(path.join(tmp, 'nodetrace-w-p111-abcdef'));
    const removed = sweepAbandonedRunDirs({ tmp, running: () => false, uid: process.geteuid() + 1 });
    assert.deepStrictEqual(removed, []);
    assert.deepStrictEqual(fs.readdirSync(tmp).sort(),
      [path.basename(target), 'nodetrace-w-p111-abcdef', 'nodetrace-x-p111-abcdef', 'nodetrace-y-p111-abcdef', 'nodetrace-z-111-abcdef']);
    assert.deepStrictEqual(sweepAbandonedRunDirs({ tmp, running: () => false }), ['nodetrace-w-p111-abcdef']);
    assert(fs.existsSync(target));
  });

  it('a missing temporary directory is no error', function () {
    assert.deepStrictEqual(sweepAbandonedRunDirs({ tmp: path.join(tmp, 'none') }), []);
  });
});
