'use strict';
// Opening a file inside another root (lib/safe-open.js openInRoot), as
// openat2(RESOLVE_IN_ROOT) would: on a made-up root in a temporary
// directory, where the host's own files sit at the paths its links name.
// The real containers' case (a container whose /tmp is a link to a host
// directory) is in test/containers.test.js.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { openInRoot, readAt } = require('../lib/safe-open');

describe('opening a file inside another root (safe-open.js openInRoot)', function () {
  let dir;
  let root;
  let host;   // a directory outside the root, named by absolute links inside it
  const read = (r) => {
    assert(!r.refused, r.refused);
    try { return readAt(r.fd, 0, r.size).toString(); } finally { fs.closeSync(r.fd); }
  };
  const put = (file, text) => { fs.mkdirSync(path.dirname(file), { recursive: true }); fs.writeFileSync(file, text); };

  before(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-root-'));
    root = path.join(dir, 'root');
    host = path.join(dir, 'host');
    put(path.join(host, 'perf-1.map'), 'host');
    put(path.join(root, 'var', 'tmp', 'perf-1.map'), 'inside, through a relative link');
    put(path.join(root, host, 'perf-1.map'), 'inside, at the host path');
    put(path.join(root, 'etc', 'hostname'), 'inside');
    fs.symlinkSync(host, path.join(root, 'abs'));                    // absolute: the host's dir, from the host
    fs.symlinkSync('var/tmp', path.join(root, 'scratch'));           // relative, inside
    fs.symlinkSync('../../../../../..' + host, path.join(root, 'up'));   // climbs: clamped at the root
    fs.symlinkSync('loop2', path.join(root, 'loop1'));
    fs.symlinkSync('loop1', path.join(root, 'loop2'));
    fs.symlinkSync('/etc/hostname', path.join(root, 'last'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('an absolute link is followed from the root it is in, never from the host\'s', function () {
    // What a plain path through the root does: the host's file.
    assert.strictEqual(fs.readFileSync(path.join(root, 'abs', 'perf-1.map'), 'utf8'), 'host');
    assert.strictEqual(read(openInRoot(root, '/abs/perf-1.map')), 'inside, at the host path');
  });

  it('relative links are followed inside, and .. never climbs above the root', function () {
    assert.strictEqual(read(openInRoot(root, '/scratch/perf-1.map')), 'inside, through a relative link');
    assert.strictEqual(read(openInRoot(root, '/up/perf-1.map')), 'inside, at the host path');
    assert.strictEqual(read(openInRoot(root, '/../../../etc/hostname')), 'inside');
    assert.strictEqual(read(openInRoot(root, '/var/tmp/../../etc/./hostname')), 'inside');
  });

  it('a link as the last name: refused unless asked for, then followed inside', function () {
    assert.strictEqual(openInRoot(root, '/last').refused, 'it is a symbolic link');
    assert.strictEqual(read(openInRoot(root, '/last', { followLinks: true })), 'inside');
  });

  it('refuses a loop of links, a missing file (saying it is missing), a directory, a FIFO without blocking', function () {
    assert.match(openInRoot(root, '/loop1/x').refused, /too many symbolic links/);
    const gone = openInRoot(root, '/nowhere/perf-1.map');
    assert(gone.refused && gone.missing, JSON.stringify(gone));
    assert.match(openInRoot(root, '/etc').refused, /not a regular file|directory/);
    const fifo = path.join(root, 'fifo');
    assert.strictEqual(spawnSync('mkfifo', [fifo]).status, 0);
    const started = Date.now();
    assert.strictEqual(openInRoot(root, '/fifo').refused, 'it is not a regular file');
    assert(Date.now() - started < 1000);
  });

  it('keeps openRegular\'s checks: the owner, the size', function () {
    const uid = fs.statSync(path.join(root, 'etc', 'hostname')).uid;
    assert.match(openInRoot(root, '/etc/hostname', { owners: [uid + 1] }).refused, /belongs to uid/);
    assert.match(openInRoot(root, '/etc/hostname', { maxBytes: 2 }).refused, /larger than/);
  });

  it('a process\'s own root: this one\'s /proc/self/root reads the host\'s files as they are', function () {
    const mine = path.join(dir, 'mine.txt');
    fs.writeFileSync(mine, 'mine');
    assert.strictEqual(read(openInRoot(`/proc/${process.pid}/root`, mine)), 'mine');
  });
});
