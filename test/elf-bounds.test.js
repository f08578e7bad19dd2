'use strict';
// The ELF readers of lib/symbolize.js on files a hostile user crafts
// (issue 35, points 1 and 2): counts and sizes absurd for their files are
// refused from the headers, in one line naming the file and the limit,
// and what can be read still is. The files are small (or sparse) and made
// here: a real tiny shared object (lib/usdt/elf.js) with its section
// header table replaced (test/support/crafted-elf.js).
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { buildElf, SITES_SYMBOL, SEMAPHORES_SYMBOL } = require('../lib/usdt/elf');
const { normalizeDefinition } = require('../lib/usdt/definition');
const { findElfSymbols, findElfData, loadElfSymbols, scanPerfMap, Symbolizer, startsWithAny } = require('../lib/symbolize');
const { LIMITS, setLimitSink, elfReadBudgetMs } = require('../lib/limits');
const { RenewingBudget } = require('../lib/read-budget');
const { MemoryBudget } = require('../lib/memory-budget');
const { withSections } = require('./support/crafted-elf');

const SHT_PROGBITS = 1;

describe('ELF readers bounded by the file and lib/limits.js (issue 35)', function () {
  let dir;
  let base;
  let said;
  let restore;
  before(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-elf-bounds-'));
    base = path.join(dir, 'base.so');
    fs.writeFileSync(base, buildElf(normalizeDefinition('p', [['fire', 'int']])).bytes);
  });
  after(function () { fs.rmSync(dir, { recursive: true, force: true }); });
  beforeEach(function () {
    said = [];
    restore = setLimitSink((line) => said.push(line));
  });
  afterEach(function () { setLimitSink(restore); });

  const timed = (fn) => {
    const t = process.hrtime.bigint();
    const result = fn();
    return { result, ms: Number(process.hrtime.bigint() - t) / 1e6 };
  };

  it('reads the untouched file: its function and its variable', function () {
    const found = findElfSymbols(base, [SITES_SYMBOL]);
    assert.ok(found.found.has(SITES_SYMBOL));
    assert.ok(findElfData(base, ['nodetrace_']).found.has(SEMAPHORES_SYMBOL));
    assert.deepStrictEqual(said, []);
  });

  it('refuses 65,000 symbol tables of 256 MiB at offset 0 from the headers, said once naming the file (it took minutes)', function () {
    const file = withSections(base, path.join(dir, 'many.so'), { count: 65000 });
    for (const read of [() => findElfSymbols(file, [SITES_SYMBOL]), () => loadElfSymbols(file), () => findElfData(file, ['v8dbg_'])]) {
      const { result, ms } = timed(read);
      assert.strictEqual(result, null);
      assert.ok(ms < 2000, `${ms} ms`);
    }
    assert.deepStrictEqual(said, [`nodetrace: ${file}: its symbols were not read: it has 65012 sections, more than the 4096 nodetrace reads`]);
  });

  it('refuses a file of more than one .symtab, as few as there may be', function () {
    const file = withSections(base, path.join(dir, 'three.so'), { count: 3 });
    assert.strictEqual(findElfSymbols(file, [SITES_SYMBOL]), null);
    assert.deepStrictEqual(said, [`nodetrace: ${file}: its symbols were not read: it has 3 .symtab symbol tables, where an ELF file has one at most`]);
  });

  it('leaves out a table that lies past the file\'s end, and reads the others', function () {
    const file = withSections(base, path.join(dir, 'past.so'), { count: 1 });
    const found = findElfSymbols(file, [SITES_SYMBOL]);
    assert.ok(found.found.has(SITES_SYMBOL), 'the .dynsym is still read');
    assert.deepStrictEqual(said, [`nodetrace: ${file}: its .symtab symbols were not read: the table lies past the file's end`]);
  });

  it('leaves out a table larger than the limit, though inside a (sparse) file', function () {
    const size = LIMITS.MAX_SYMBOL_TABLE_BYTES + 24 * 1024;
    const file = withSections(base, path.join(dir, 'large.so'), { count: 1, size, fileBytes: size + 4096 });
    const { result, ms } = timed(() => loadElfSymbols(file));
    assert.ok(ms < 2000, `${ms} ms`);
    assert.strictEqual(result.nameAt(0), SITES_SYMBOL);
    assert.deepStrictEqual(said, [`nodetrace: ${file}: its .symtab symbols were not read: 64 MB, more than the 64 MB nodetrace reads of one table`]);
  });

  it('refuses a file of more sections than the limit', function () {
    const file = withSections(base, path.join(dir, 'sections.so'), { count: LIMITS.MAX_SECTIONS, type: SHT_PROGBITS, size: 16 });
    assert.strictEqual(findElfSymbols(file, [SITES_SYMBOL]), null);
    assert.match(said.join('\n'), /its symbols were not read: it has 4108 sections, more than the 4096 nodetrace reads$/);
  });

  it('says one file once, whichever path it was reached by', function () {
    const file = withSections(base, path.join(dir, 'twice.so'), { count: 2 });
    const link = path.join(dir, 'twice-link.so');
    fs.symlinkSync(file, link);
    findElfSymbols(file, [SITES_SYMBOL]);
    findElfSymbols(link, [SITES_SYMBOL], { followLinks: true });
    assert.strictEqual(said.length, 1, said.join('\n'));
  });

  it('looks exported names up through .dynsym\'s hash table, as a full read finds them, and static ones in .symtab', function () {
    const names = ['uv_queue_work', 'napi_create_async_work', 'SSL_read', 'uv__work_submit', 'no_such_function_here'];
    const found = findElfSymbols(process.execPath, names).found;
    const table = loadElfSymbols(process.execPath, { budget: new MemoryBudget(LIMITS.RUN_MEMORY_BYTES) });
    const truth = new Map();
    for (let i = 0; i < table.values.length; i++) {
      const n = table.nameAt(i);
      if (names.includes(n) && !truth.has(n)) truth.set(n, table.values[i]);
    }
    assert.deepStrictEqual(new Map([...found].map(([n, s]) => [n, s.value])), truth);
    assert.ok(truth.has('uv__work_submit') && !truth.has('no_such_function_here'));
  });

  it('follows a System V hash chain that loops at most as many steps as there are symbols', function () {
    const bytes = fs.readFileSync(base);
    const shoff = Number(bytes.readBigUInt64LE(40));
    const shnum = bytes.readUInt16LE(60);
    let hashAt = -1;
    for (let i = 0; i < shnum; i++) {
      if (bytes.readUInt32LE(shoff + i * 64 + 4) === 5) hashAt = Number(bytes.readBigUInt64LE(shoff + i * 64 + 24));
    }
    const nbucket = bytes.readUInt32LE(hashAt);
    // chain[1] = 2: 2 -> 1 -> 2 -> ...
    bytes.writeUInt32LE(2, hashAt + 8 + nbucket * 4 + 4);
    const file = path.join(dir, 'loop.so');
    fs.writeFileSync(file, bytes);
    const { result, ms } = timed(() => findElfSymbols(file, ['no_such_function_here', SITES_SYMBOL]));
    assert.ok(ms < 1000, `${ms} ms`);
    assert.deepStrictEqual([...result.found.keys()], [SITES_SYMBOL]);
  });

  it('names by prefix: the places of a prefix a table repeats past the bound are not kept, and every offset is still told right', function () {
    const prefixes = [Buffer.from('v8dbg_'), Buffer.from('_ZN2v8')];
    const plain = (strtab, at) => prefixes.some((p) => strtab.compare(p, 0, p.length, at,
      Math.min(strtab.length, at + p.length)) === 0);
    // A few places (a node binary's), the prefix inside a name too; then the prefix repeated 20,000 times.
    for (const text of ['\0v8dbg_a\0xv8dbg_b\0_ZN2v8c\0other\0v8dbg', `\0${'v8dbg_x\0'.repeat(20000)}_ZN2v8y\0z\0`]) {
      const strtab = Buffer.from(text, 'latin1');
      const starts = startsWithAny(strtab, prefixes);
      for (let at = 0; at < strtab.length; at++) assert.strictEqual(starts(at), plain(strtab, at), `offset ${at}`);
    }
    assert.strictEqual(startsWithAny(Buffer.from('\0main\0'), prefixes), null, 'no place: the table need not be read');
  });

  it('keeps the symbolizer\'s tables within its budget, dropping the least recently used', function () {
    const s = new Symbolizer();
    const big = LIMITS.SYMBOL_CACHE_BYTES / 2 + 1;
    s.keep('a', { bytes: big });
    s.keep('b', { bytes: big });
    assert.deepStrictEqual([...s.elfCache.keys()], ['b']);
    assert.ok(s.cacheBytes <= LIMITS.SYMBOL_CACHE_BYTES);
    s.keep('c', { bytes: 10 });
    assert.deepStrictEqual([...s.elfCache.keys()], ['b', 'c']);
  });

  it('reading time is bounded per window, and renews: a burst gets the budget, a later window reads again', function () {
    let now = 1000;
    const budget = new RenewingBudget({ budgetMs: 30, windowMs: 300, now: () => now });
    assert.strictEqual(budget.refusal(), null);
    budget.spend(() => { now += 20; });
    assert.strictEqual(budget.refusal(), null, '20 of 30 ms spent');
    assert.strictEqual(budget.spend(() => { now += 15; return 'read'; }), 'read');
    // Spent (35 ms) at 1035: refused until the window that began at 1000 ends.
    assert.deepStrictEqual(budget.refusal(), { window: 1000, renewsInMs: 265 });
    now = 1299;
    assert.deepStrictEqual(budget.refusal(), { window: 1000, renewsInMs: 1 });
    now = 1300;
    assert.strictEqual(budget.refusal(), null, 'a new window');
    budget.spend(() => { now += 40; });
    assert.deepStrictEqual(budget.refusal(), { window: 1300, renewsInMs: 260 });
    // A read that throws is counted too.
    now = 5000;
    assert.throws(() => budget.spend(() => { now += 31; throw new Error('bad file'); }), /bad file/);
    assert.deepStrictEqual(budget.refusal(), { window: 5000, renewsInMs: 269 });
  });

  it('a test may lower the budget of reading through NODETRACE_TEST_ELF_READ_BUDGET_MS, never raise it', function () {
    assert.strictEqual(elfReadBudgetMs({}), LIMITS.ELF_READ_BUDGET_MS);
    assert.strictEqual(elfReadBudgetMs({ NODETRACE_TEST_ELF_READ_BUDGET_MS: '2000' }), 2000);
    assert.strictEqual(elfReadBudgetMs({ NODETRACE_TEST_ELF_READ_BUDGET_MS: '0' }), 0);
    for (const text of ['60000', '30000', '-1', '1e3', '2000ms', ''])
      assert.strictEqual(elfReadBudgetMs({ NODETRACE_TEST_ELF_READ_BUDGET_MS: text }), LIMITS.ELF_READ_BUDGET_MS, text);
  });

  it('skips a perf map line longer than the limit, and reads the lines after it', function () {
    const file = path.join(dir, 'perf.map');
    const long = 'x'.repeat(LIMITS.MAX_PERF_MAP_LINE_BYTES + (3 << 20));
    fs.writeFileSync(file, `1000 10 first\n2000 10 ${long}\n3000 10 third\n`);
    const fd = fs.openSync(file, 'r');
    try {
      const found = scanPerfMap({ fd, size: fs.fstatSync(fd).size, path: file }, [0x1001, 0x2001, 0x3001]);
      assert.deepStrictEqual([...found].map(([a, f]) => [a, f.name]), [[0x1001, 'first'], [0x3001, 'third']]);
    } finally {
      fs.closeSync(fd);
    }
    assert.deepStrictEqual(said, [`nodetrace: ${file}: 1 line(s) longer than 1 MB were skipped`]);
  });
});
