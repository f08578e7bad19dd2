'use strict';
// Pure parts of the Linux USDT provider: the generated ELF bytes, canonical
// definitions, names and paths. No tracer, no root needed (readelf if any).
const assert = require('assert');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { buildElf, argFormat, SITE_STRIDE } = require('../lib/usdt/elf');
const { normalizeDefinition, kindOf } = require('../lib/usdt/definition');
const paths = require('../lib/usdt/paths');
const usdt = require('../lib/usdt');

function haveReadelf() {
  try { execFileSync('readelf', ['--version'], { stdio: 'ignore' }); return true; } catch { return false; }
}

describe('usdt: probe library bytes', function () {
  this.timeout(20000);
  const probes = [['b-probe', 'int', 'char *'], ['a-probe', 'json', 'int32_t']];

  it('maps dtrace-provider type names to argument kinds', function () {
    assert.deepStrictEqual(['int', 'char *', 'json', 'int32_t', 'uint8_t', 'whatever', 'int64_t'].map(kindOf),
      ['int', 'string', 'json', 'int32', 'string', 'string', 'int']);
  });

  it('formats arguments as sdt.h does (registers, then the stack)', function () {
    assert.strictEqual(argFormat(['int', 'string', 'int32']), '-8@%rdi 8@%rsi -4@%edx');
    assert.strictEqual(argFormat(Array(8).fill('int')),
      '-8@%rdi -8@%rsi -8@%rdx -8@%rcx -8@%r8 -8@%r9 -8@8(%rsp) -8@16(%rsp)');
    assert.strictEqual(argFormat([]), '');
  });

  it('is deterministic and independent of the order of addProbe calls', function () {
    const a = paths.libraryFor('nt', probes);
    const b = paths.libraryFor('nt', probes.slice().reverse());
    assert.ok(a.bytes.equals(b.bytes));
    assert.strictEqual(a.fileName, b.fileName);
    assert.match(a.fileName, /^nodetrace-usdt-[0-9a-f]{20}\.so$/);
    // Anything in the definition changes the name.
    for (const other of [
      paths.libraryFor('nt2', probes),
      paths.libraryFor('nt', probes, 'mod'),
      paths.libraryFor('nt', [['b-probe', 'int', 'int'], ['a-probe', 'json', 'int32_t']]),
      paths.libraryFor('nt', [['b-probe', 'int', 'char *']]),
    ]) assert.notStrictEqual(other.fileName, a.fileName);
  });

  it('keeps the first of two probes with one name, sorts, and caps arguments at 12', function () {
    const def = normalizeDefinition('p', [['z'], ['y', 'int'], ['z', 'int'], ['x', ...Array(14).fill('int')]]);
    assert.deepStrictEqual(def.probes.map((p) => [p.name, p.kinds.length]), [['x', 12], ['y', 1], ['z', 0]]);
    assert.deepStrictEqual(def.truncated, ['x']);
    assert.throws(() => normalizeDefinition('', []), TypeError);
    assert.throws(() => normalizeDefinition('a\0b', []), TypeError);
  });

  it('has the sections, segments and notes tracers and glibc need (readelf)', function () {
    if (!haveReadelf()) this.skip();
    const { bytes, layout } = paths.libraryFor('nt', probes);
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-elf-')), 'x.so');
    fs.writeFileSync(file, bytes);
    try {
      const out = execFileSync('readelf', ['-W', '-n', '-S', '-l', '--dyn-syms', file], { encoding: 'utf8' });
      assert.doesNotMatch(out, /Warning|Error/i);
      for (const s of ['.hash', '.dynsym', '.dynstr', '.stapsdt.base', '.text', '.dynamic', '.probes', '.note.stapsdt']) {
        assert.match(out, new RegExp(`\\] \\${s}\\s`), s);
      }
      assert.match(out, /GNU_STACK\s+0x0+ 0x0+ 0x0+ 0x0+ 0x0+ RW /);
      assert.match(out, /DYNAMIC/);
      // Every segment at vaddr == file offset; text R E; semaphores file-backed RW.
      const loads = [...out.matchAll(/LOAD\s+(0x[0-9a-f]+) (0x[0-9a-f]+) \S+ (0x[0-9a-f]+) (0x[0-9a-f]+) (R E|RW |R {2})/g)];
      assert.deepStrictEqual(loads.map((m) => m[5].trim()), ['R', 'R E', 'RW']);
      for (const m of loads) {
        assert.strictEqual(Number(m[1]), Number(m[2]), m[0]);
        assert.strictEqual(Number(m[3]), Number(m[4]), 'filesz == memsz: ' + m[0]);
      }
      // Notes come after the first executable section (bcc looks only there).
      assert.ok(out.indexOf('] .note.stapsdt') > out.indexOf('] .text'));
      const pc = (layout.sites + SITE_STRIDE).toString(16).padStart(16, '0');
      const sem = (layout.semaphores + 2).toString(16).padStart(16, '0');
      assert.match(out, new RegExp(`Provider: nt\\s+Name: b-probe\\s+Location: 0x${pc}, Base: 0x[0-9a-f]+, Semaphore: 0x${sem}\\s+Arguments: -8@%rdi 8@%rsi`));
      assert.match(out, /Name: a-probe\s+Location: .*\s+Arguments: 8@%rdi -4@%esi/);
      assert.match(out, /nodetrace_probe_sites/);
      assert.match(out, /nodetrace_semaphores/);
    } finally {
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });

  it('puts probe sites (nop5; ret) and zeroed semaphores where the layout says', function () {
    const { bytes, layout } = buildElf(normalizeDefinition('nt', probes));
    for (let i = 0; i < 2; i++) {
      assert.deepStrictEqual([...bytes.subarray(layout.sites + i * SITE_STRIDE, layout.sites + i * SITE_STRIDE + 6)],
        [0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3]);
    }
    assert.deepStrictEqual([...bytes.subarray(layout.semaphores, layout.semaphores + 4)], [0, 0, 0, 0]);
  });
});

describe('usdt: paths', function () {
  this.timeout(20000);
  it('lists per-user candidate directories, NODETRACE_USDT_DIR first and alone', function () {
    const c = paths.candidateDirs({ uid: 1234, env: { XDG_RUNTIME_DIR: '/run/user/1234' } }).map((x) => x.dir);
    assert.ok(c.includes('/run/user/1234/nodetrace'));
    assert.strictEqual(c[c.length - 1], path.join(os.tmpdir(), 'nodetrace-1234'));
    assert.deepStrictEqual(paths.candidateDirs({ env: { NODETRACE_USDT_DIR: '/a/b:relative:/c' } }),
      [{ dir: '/a/b', root: '/a' }, { dir: '/c', root: '/' }]);
  });

  it('computes the library path without creating anything', function () {
    const dir = path.join(os.tmpdir(), `nodetrace-nothing-${process.pid}`, 'lib');
    const opts = { env: { NODETRACE_USDT_DIR: dir } };
    const p = usdt.probeLibraryPath(usdt.BUNYAN_PROVIDER.name, usdt.BUNYAN_PROVIDER.probes, opts);
    assert.strictEqual(path.dirname(p), dir);
    assert.strictEqual(path.basename(p), paths.libraryFor('bunyan', usdt.BUNYAN_PROVIDER.probes).fileName);
    assert.ok(!fs.existsSync(path.dirname(dir)));
  });

  it("describes bunyan's provider as bunyan declares it", function () {
    assert.strictEqual(usdt.BUNYAN_PROVIDER.name, 'bunyan');
    assert.deepStrictEqual(usdt.BUNYAN_PROVIDER.probes.map((p) => p.join(',')),
      ['log-trace,char *', 'log-debug,char *', 'log-info,char *', 'log-warn,char *', 'log-error,char *', 'log-fatal,char *']);
  });
});
