'use strict';
// Report files written as root where others may have been first
// (lib/output-file.js): refused before the trace when the path holds a link
// or someone else's file, and written as a new file renamed over the path.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { checkOutputFile, writeOutputFile } = require('../lib/output-file');

describe('output files (--svg, --pprof, --folded)', function () {
  let dir;
  beforeEach(function () { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-output-')); });
  afterEach(function () { fs.rmSync(dir, { recursive: true, force: true }); });

  it('writes a new file, and replaces the operator\'s own file whole', function () {
    const file = path.join(dir, 'cpu.svg');
    checkOutputFile(file);
    assert.deepStrictEqual(fs.readdirSync(dir), [], 'the check leaves nothing behind');
    writeOutputFile(file, '<svg/>');
    assert.strictEqual(fs.readFileSync(file, 'utf8'), '<svg/>');
    writeOutputFile(file, Buffer.from('again'));
    assert.strictEqual(fs.readFileSync(file, 'utf8'), 'again');
    assert.deepStrictEqual(fs.readdirSync(dir), ['cpu.svg'], 'no temporary file left');
  });

  it('refuses, before and after the trace, a symbolic link someone planted, and never writes through it', function () {
    const victim = path.join(dir, 'victim');
    fs.writeFileSync(victim, 'precious');
    fs.symlinkSync(victim, path.join(dir, 'cpu.svg'));
    assert.throws(() => checkOutputFile(path.join(dir, 'cpu.svg')), /refusing to write .*cpu\.svg: it is a symbolic link/);
    assert.throws(() => writeOutputFile(path.join(dir, 'cpu.svg'), 'x'), /it is a symbolic link/);
    assert.strictEqual(fs.readFileSync(victim, 'utf8'), 'precious');
  });

  it('refuses a hard link to another file, and a file of another user', function () {
    const victim = path.join(dir, 'victim');
    fs.writeFileSync(victim, 'precious');
    fs.linkSync(victim, path.join(dir, 'fold.txt'));
    assert.throws(() => checkOutputFile(path.join(dir, 'fold.txt')), /it has 2 hard links/);
    if (process.getuid() !== 0) this.skip();   // chown needs root: the suite runs as root in CI
    const theirs = path.join(dir, 'p.pb.gz');
    fs.writeFileSync(theirs, '', { mode: 0o666 });
    fs.chownSync(theirs, 65534, 65534);
    assert.throws(() => checkOutputFile(theirs), /it belongs to another user \(uid 65534\)/);
    assert.throws(() => writeOutputFile(theirs, 'root\'s profile'), /another user/);
    assert.strictEqual(fs.readFileSync(theirs, 'utf8'), '', 'nothing written into it');
  });

  it('refuses at once a directory that does not exist, or a path that is a directory', function () {
    assert.throws(() => checkOutputFile(path.join(dir, 'no', 'such', 'cpu.svg')), /cannot write .*: no such directory/);
    fs.mkdirSync(path.join(dir, 'd'));
    assert.throws(() => checkOutputFile(path.join(dir, 'd')), /it is not a regular file/);
  });
});
