'use strict';
// lib/target-snapshots.js readSymbols(): the symbols of the files a process
// runs code from, read ahead (while the tracer attaches), so that naming
// its frames after the end reads none.
const assert = require('assert');
const fs = require('fs');
const { TargetSnapshots } = require('../lib/target-snapshots');
const { parseMaps } = require('../lib/symbolize');

describe('TargetSnapshots: symbols read ahead', function () {
  this.timeout(30000);

  it('reads each executable file once, and naming a frame later reads no file', function () {
    const snaps = new TargetSnapshots(() => process.pid);
    snaps.readSymbols();
    const files = new Set(parseMaps(fs.readFileSync('/proc/self/maps', 'utf8'))
      .filter((m) => m.perms[2] === 'x' && m.path.startsWith('/')).map((m) => `${m.dev}:${m.inode}`));
    assert.strictEqual(snaps.symbolizer.filesRead, files.size, 'one read per file, however many mappings it has');
    snaps.refresh();
    // A function of node's own, by its address: native code of the executable.
    const exe = fs.readlinkSync('/proc/self/exe');
    const text = snaps.latest.maps.find((m) => m.perms[2] === 'x' && m.path === exe);
    const [frame] = snaps.symbolizer.symbolize(snaps.latest, ['0x' + (text.start + 0x1000).toString(16)], { allPcs: true }).frames;
    assert.strictEqual(frame.kind, 'native', `named from the table read ahead: ${JSON.stringify(frame)}`);
    assert.strictEqual(snaps.symbolizer.filesRead, files.size, 'no file read again');
    snaps.release();
  });

  it('reads nothing before the process is known (-c, before the command runs)', function () {
    const snaps = new TargetSnapshots(() => null);
    snaps.readSymbols();
    assert.strictEqual(snaps.symbolizer.filesRead, 0);
  });
});
