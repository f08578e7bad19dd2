'use strict';
// File safety of the Linux USDT provider: nothing someone else could have
// planted or changed is ever dlopen'ed; bad places fall back to the next
// candidate directory, or probes become no-ops with one warning.
const assert = require('assert');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const store = require('../lib/usdt/store');
const paths = require('../lib/usdt/paths');
const { Target, tempRoot } = require('./targets/usdt-harness');

const ADDON = path.join(__dirname, '..', 'build', 'Release', 'nodetrace_usdt.node');
const isRoot = process.platform === 'linux' && process.getuid() === 0;
const NOBODY = 65534;
const PROBES = [['p', 'int', 'char *']];

describe('usdt: store (file safety rules)', function () {
  this.timeout(20000);
  let root;
  beforeEach(function () {
    if (process.platform !== 'linux') this.skip();
    root = tempRoot('usdt-store');
  });
  afterEach(function () {
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  const lib = () => paths.libraryFor('nt_store', PROBES);

  it('creates the directory 0700 and the file r-x with exactly the bytes, once', function () {
    const dir = store.prepareDir({ dir: path.join(root, 'd'), root });
    assert.strictEqual(fs.statSync(dir).mode & 0o777, 0o700);
    const { bytes, fileName } = lib();
    const file = store.install(dir, fileName, bytes);
    const st = fs.statSync(file);
    assert.strictEqual(st.mode & 0o777, 0o555);
    assert.ok(fs.readFileSync(file).equals(bytes));
    assert.strictEqual(store.install(dir, fileName, bytes), file);
    assert.strictEqual(fs.statSync(file).ino, st.ino, 'an existing good file is reused, never rewritten');
    assert.deepStrictEqual(fs.readdirSync(dir), [fileName], 'no temp files left');
  });

  it('refuses a group-writable, symlinked or foreign directory', function () {
    const gw = path.join(root, 'gw');
    fs.mkdirSync(gw, { mode: 0o700 });
    fs.chmodSync(gw, 0o770);
    assert.throws(() => store.prepareDir({ dir: gw, root }), (e) => e.refused
      && /writable by group or others/.test(e.message));
    const real = path.join(root, 'real');
    fs.mkdirSync(real, { mode: 0o700 });
    fs.symlinkSync(real, path.join(root, 'link'));
    assert.throws(() => store.prepareDir({ dir: path.join(root, 'link'), root }), (e) => e.refused && /symbolic link/.test(e.message));
    if (isRoot) {
      const foreign = path.join(root, 'foreign');
      fs.mkdirSync(foreign, { mode: 0o700 });
      fs.chownSync(foreign, NOBODY, NOBODY);
      assert.throws(() => store.prepareDir({ dir: foreign, root }), (e) => e.refused
        && /owned by uid 65534/.test(e.message));
    }
  });

  it('refuses a directory whose parent others may write to (not sticky)', function () {
    const open = path.join(root, 'open');
    fs.mkdirSync(open);
    fs.chmodSync(open, 0o777);
    assert.throws(() => store.prepareDir({ dir: path.join(open, 'd'), root: open }),
      (e) => e.refused && /ancestor directory .*open is writable by others and not sticky/.test(e.message));
    fs.chmodSync(open, 0o1777);   // like /tmp: fine
    assert.ok(store.prepareDir({ dir: path.join(open, 'd'), root: open }));
  });

  it('refuses planted files and leaves them alone: wrong bytes, group-writable, symlink, foreign owner', function () {
    const dir = store.prepareDir({ dir: path.join(root, 'd'), root });
    const { bytes, fileName } = lib();
    const file = path.join(dir, fileName);
    const plant = (content, mode) => {
      fs.rmSync(file, { force: true });
      fs.writeFileSync(file, content, { mode });
      fs.chmodSync(file, mode);
    };
    const wrong = Buffer.from(bytes);
    wrong[wrong.length - 1] ^= 1;
    plant(wrong, 0o555);
    assert.throws(() => store.install(dir, fileName, bytes), (e) => e.refused && /content differs/.test(e.message));
    assert.ok(fs.readFileSync(file).equals(wrong), 'never rewritten');
    plant(bytes.subarray(0, 100), 0o555);
    assert.throws(() => store.install(dir, fileName, bytes), (e) => e.refused && /size 100/.test(e.message));
    plant(bytes, 0o575);
    assert.throws(() => store.install(dir, fileName, bytes), (e) => e.refused
      && /writable by group or others/.test(e.message));
    fs.rmSync(file);
    const elsewhere = path.join(root, 'elsewhere.so');
    fs.writeFileSync(elsewhere, bytes, { mode: 0o555 });
    fs.symlinkSync(elsewhere, file);
    assert.throws(() => store.install(dir, fileName, bytes), (e) => e.refused && /symbolic link/.test(e.message));
    if (isRoot) {
      plant(bytes, 0o555);
      fs.chownSync(file, NOBODY, NOBODY);
      assert.throws(() => store.install(dir, fileName, bytes), (e) => e.refused
        && /owned by uid 65534/.test(e.message));
    }
  });
});

describe('usdt: a process never loads a refused file', function () {
  this.timeout(30000);
  let root;
  const targets = [];

  before(function () {
    if (process.platform !== 'linux' || process.arch !== 'x64' || !fs.existsSync(ADDON)) this.skip();
  });
  beforeEach(function () {
    root = tempRoot('usdt-plant');
  });
  afterEach(async function () {
    while (targets.length) await targets.pop().stop();
    if (root) {
      try { execFileSync('umount', [path.join(root, 'noexec')], { stdio: 'ignore' }); } catch { /* not mounted */ }
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  async function run(dirs) {
    const t = await Target.start({ env: { NODETRACE_USDT_DIR: dirs.join(':'), NODETRACE_USDT: '' } });
    targets.push(t);
    await t.request('create', { key: 'k', provider: 'nt_store', probes: PROBES });
    await t.request('enable', { key: 'k' });
    const fired = await t.request('fire', { key: 'k', probe: 'p', values: [1, 'x'] });
    const st = await t.request('status');
    return { ...st, fired, stderr: () => t.stderr };
  }

  function plantIn(dir, mutate) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const { bytes, fileName } = paths.libraryFor('nt_store', PROBES);
    const file = path.join(dir, fileName);
    fs.writeFileSync(file, mutate(Buffer.from(bytes)), { mode: 0o555 });
    return file;
  }

  it('falls back to the next directory when the file in the first is wrong, and says so once', async function () {
    const first = path.join(root, 'first');
    const second = path.join(root, 'second');
    const planted = plantIn(first, (b) => { b[200] ^= 0xff; return b; });
    const before = fs.readFileSync(planted);
    const r = await run([first, second]);
    assert.strictEqual(r.status.native, true);
    assert.strictEqual(path.dirname(r.status.libraries[0]), second);
    assert.deepStrictEqual(r.maps, [r.status.libraries[0]], 'only the good file is mapped');
    assert.strictEqual(r.warnings.length, 1, r.warnings.join('\n'));
    assert.match(r.warnings[0], /refused .*content differs.*; using .*second/);
    assert.ok(fs.readFileSync(planted).equals(before), 'planted file untouched');
  });

  it('falls back when the right bytes are group-writable or owned by someone else', async function () {
    const first = path.join(root, 'first');
    const second = path.join(root, 'second');
    const planted = plantIn(first, (b) => b);
    fs.chmodSync(planted, 0o575);
    let r = await run([first, second]);
    assert.strictEqual(path.dirname(r.status.libraries[0]), second);
    assert.match(r.warnings[0], /writable by group or others/);
    if (isRoot) {
      fs.chmodSync(planted, 0o555);
      fs.chownSync(planted, NOBODY, NOBODY);
      r = await run([first, path.join(root, 'third')]);
      assert.strictEqual(path.dirname(r.status.libraries[0]), path.join(root, 'third'));
      assert.match(r.warnings[0], /owned by uid 65534/);
      assert.ok(!r.maps.includes(planted));
    }
  });

  it('turns probes into no-ops with one warning when no directory is safe', async function () {
    const gw = path.join(root, 'gw');
    fs.mkdirSync(gw, { mode: 0o700 });
    fs.chmodSync(gw, 0o777);
    fs.symlinkSync(gw, path.join(root, 'link'));
    const r = await run([gw, path.join(root, 'link')]);
    assert.strictEqual(r.status.native, true);
    assert.deepStrictEqual(r.status.libraries, []);
    assert.deepStrictEqual(r.maps, []);
    assert.deepStrictEqual([r.fired.calls, r.fired.fired], [0, 0]);
    assert.strictEqual(r.warnings.length, 1, r.warnings.join('\n'));
    assert.match(r.warnings[0],
      /NODETRACE_USDT: USDT probes for provider "nt_store" are disabled \(no-ops\).*writable by group or others.*symbolic link/);
    assert.match(r.status.reason, /symbolic link/);
    assert.match(r.stderr(), /USDT probes for provider "nt_store" are disabled/);
  });

  it('falls back from a noexec mount', async function () {
    if (!isRoot) this.skip();
    const noexec = path.join(root, 'noexec');
    fs.mkdirSync(noexec, { mode: 0o700 });
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'noexec,mode=0700', 'tmpfs', noexec], { stdio: 'ignore' });
    } catch {
      this.skip();
    }
    const second = path.join(root, 'second');
    const r = await run([path.join(noexec, 'lib'), second]);
    assert.strictEqual(path.dirname(r.status.libraries[0]), second);
    assert.strictEqual(r.warnings.length, 0, r.warnings.join('\n'));
  });

  it('NODETRACE_USDT=off: no-ops, no warning, status says why', async function () {
    const t = await Target.start({ env: { NODETRACE_USDT: 'off', NODETRACE_USDT_DIR: path.join(root, 'lib') } });
    targets.push(t);
    await t.request('create', { key: 'k', provider: 'nt_store', probes: PROBES });
    await t.request('enable', { key: 'k' });
    const st = await t.request('status');
    assert.deepStrictEqual([st.status.native, st.warnings.length], [false, 0]);
    assert.match(st.status.reason, /NODETRACE_USDT=off/);
    assert.ok(!fs.existsSync(path.join(root, 'lib')));
  });
});

describe('usdt: status() for nodetrace doctor', function () {
  this.timeout(20000);
  it('reports native, reason and dir', function () {
    const s = require('../lib/usdt').status();
    assert.strictEqual(typeof s.native, 'boolean');
    assert.ok('reason' in s && 'dir' in s);
    if (process.platform === 'linux' && process.arch === 'x64') assert.strictEqual(s.native, fs.existsSync(ADDON));
  });

  it('keeps os.tmpdir() candidates per user', function () {
    const c = paths.candidateDirs({ env: {} });
    assert.ok(c.some((x) => x.dir === path.join(os.tmpdir(), `nodetrace-${process.getuid()}`)));
  });
});
