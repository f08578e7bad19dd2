'use strict';
// nodetrace probes without a tracer: the globs and what they match (an
// unknown provider or probe says which exist; a name a program cannot carry
// is not traced), the program's clauses and their arguments, its output
// read back (captured runs of d-scripts/usdt-*.bt, test/fixtures/
// bpftrace-probes-*.out) and rendered escaped, objects' notes checked as
// probe libraries are, and DTrace refused plainly. The real tracer:
// test/probes.test.js.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { parseSpec, matchProbes, traceable } = require('../lib/probes/spec');
const { planProbes, argumentsRead, latencyKeyRefusal } = require('../lib/probes/program');
const { programArguments } = require('../lib/tracer/program-arguments');
const { splitterFor } = require('../lib/tracer/output-formats');
const { FiringReader, renderLine, renderJsonLine } = require('../lib/probes/firings');
const report = require('../lib/probes/report');
const list = require('../lib/probes/list');
const { notesOfOpenFile } = require('../lib/probes/object-probes');
const libraries = require('../lib/probe-libraries');
const { providerMatcher, clausesOf } = require('../lib/probes/targets');
const { libraryFor } = require('../lib/usdt/paths');
const { HTTP_PROVIDER } = require('../lib/http/probes');
const crafted = require('./support/crafted-library');
const { nodetrace } = require('./support/harness');

const FIXTURES = path.join(__dirname, 'fixtures');
const BPFTRACE_017 = { name: 'bpftrace', path: '/usr/bin/bpftrace', version: '0.17.0' };
const BPFTRACE_027 = { name: 'bpftrace', path: '/usr/bin/bpftrace', version: '0.27.1' };

// The app's probes as the clauses of the captures were made (test/targets/usdt-app.js).
const DONE = { provider: 'myapp', module: null, name: 'request-done', kinds: ['int', 'string', 'json', 'int'], api: true };
const START = { provider: 'myapp', module: null, name: 'request-start', kinds: ['int', 'string'], api: true };

function items(fixture) {
  const split = splitterFor('json');
  return [...split.push(fs.readFileSync(path.join(FIXTURES, fixture))), ...split.end()];
}

describe('probes: globs name probes, and what a process has is said when they name none', function () {
  const has = [DONE, START, { provider: 'libstdcxx', module: null, name: 'throw', kinds: ['uint', 'uint'] }];

  it('reads PROVIDER, PROVIDER:PROBE and dtrace\'s PROVIDER:MODULE:FUNCTION:NAME, with globs', function () {
    const names = (text) => matchProbes([parseSpec(text)], has, { where: 'PID 1' }).map((p) => `${p.provider}:${p.name}`);
    assert.deepStrictEqual(names('myapp'), ['myapp:request-done', 'myapp:request-start']);
    assert.deepStrictEqual(names('my*:*-start'), ['myapp:request-start']);
    assert.deepStrictEqual(names('myapp*:::request-d?ne'), ['myapp:request-done']);
    assert.deepStrictEqual(names('*:throw'), ['libstdcxx:throw']);
    assert.throws(() => parseSpec('a:b:c'), /is not a probe: give PROVIDER:PROBE/);
    assert.throws(() => parseSpec('myapp::fn:x'), /names a function \(fn\)/);
    assert.throws(() => parseSpec('x'.repeat(300)), /at most 256 characters/);
  });

  it('an unknown provider or probe says which exist, and that one made later is waited for only with --wait', function () {
    assert.throws(() => matchProbes([parseSpec('nope:*')], has, { where: 'PID 1' }),
      { message: 'no provider of PID 1 matches "nope:*"; its providers: myapp (2 probes), libstdcxx (1 probe).',
        hint: /List them with: nodetrace probes -p PID\. For a provider the application has not made yet, give --wait SECONDS/ });
    assert.throws(() => matchProbes([parseSpec('myapp:nope')], has, { where: 'PID 1' }),
      { message: 'no probe of PID 1 matches "myapp:nope"; provider myapp has: request-done, request-start.' });
  });

  it('a glob naming more probe sites than bpftrace attaches in one program says so, and how to narrow it', function () {
    const object = { file: '/nonexistent/libmany.so', path: '/nonexistent/libmany.so', api: false };
    const many = Array.from({ length: 300 }, (_, i) => ({ provider: 'many', module: null, name: `p${i}`, kinds: [], sites: 2, object, pid: 1 }));
    assert.throws(() => clausesOf(many, { tracer: BPFTRACE_017, specs: [parseSpec('many:*')], where: 'PID 1' }),
      { message: '"many:*" names 300 probes of PID 1 at 600 sites, more than the 512 bpftrace 0.17.0 attaches in one program.' });
    assert.strictEqual(clausesOf(many, { tracer: BPFTRACE_027, specs: [parseSpec('many:*')], where: 'PID 1' }).sites, 600, '1,024 from 0.23');
    try { clausesOf(many, { tracer: BPFTRACE_017, specs: [parseSpec('many:*')], where: 'PID 1' }); } catch (err) { assert.match(err.hint, /Narrow it to the provider and probes you need/); }
  });

  it('a name a program cannot carry (a hostile library\'s *, :, a newline) is not traced', function () {
    assert.ok(traceable(START));
    for (const name of ['*', 'a:b', 'a,b', 'x\ny', 'a b', '']) assert.ok(!traceable({ provider: 'p', name }), name);
    assert.ok(!traceable({ provider: 'p*', name: 'x' }));
  });
});

describe('probes: the program, one clause per probe, everything a target chose as arguments', function () {
  const lib = '/x/nodetrace-usdt-0123456789abcdef0123.so';
  const clauses = [{ ...DONE, library: lib }, { ...START, library: lib }];

  it('reads each argument as its type: integers on the F line, one S line per string', function () {
    const p = planProbes(BPFTRACE_017, { mode: 'lines', pids: [42], probes: clauses });
    assert.match(p.programText,
      /usdt:\$9:\$10:\$11\n.*\n\{\n\t\$t = nsecs;\n\tprintf\("F 1 %d %d %lu %ld %ld\\n", pid, tid, \$t, arg0, arg3\);\n\tprintf\("S 1 %d %d %lu 1 %s\\n", pid, tid, \$t, str\(arg1\)\);\n\tprintf\("S 1 %d %d %lu 2 %s\\n", pid, tid, \$t, str\(arg2\)\);\n\}/);
    assert.match(p.programText, /usdt:\$12:\$13:\$14\n/);
    const code = p.programText.slice(p.programText.indexOf('BEGIN'));
    assert.ok(!code.includes('myapp') && !code.includes(lib), 'names and paths are arguments, not program text');
    assert.deepStrictEqual(p.arguments.slice(8).map((a) => a.name), ['LIBRARY', 'PROVIDER', 'PROBE', 'LIBRARY2', 'PROVIDER2', 'PROBE2']);
    assert.deepStrictEqual(p.argv.slice(-14), ['42', '0', '0', '0', '0', '0', '0', '0', lib, 'myapp', 'request-done', lib, 'myapp', 'request-start']);
    assert.strictEqual(p.env.BPFTRACE_STRLEN, '200');
  });

  it('before 0.24 reads a lib/usdt probe\'s arguments past the sixth from the stack, another object\'s not at all', function () {
    const twelve = { provider: 'w', name: 't', kinds: ['int', 'int', 'int', 'int', 'int', 'int', 'int32', 'string', 'int', 'int', 'int', 'int'], api: true, library: lib };
    const text = planProbes(BPFTRACE_017, { mode: 'lines', probes: [twelve] }).programText;
    assert.match(text, /\*uptr\(\(int32 \*\)\(reg\("sp"\) \+ 8\)\)/);
    assert.match(text, /str\(\*uptr\(\(uint64 \*\)\(reg\("sp"\) \+ 16\)\)\)/);
    assert.ok(!/arg6/.test(text));
    assert.match(planProbes(BPFTRACE_027, { mode: 'lines', probes: [twelve] }).programText, /arg6, .*str\(arg7\)/s);
    assert.strictEqual(argumentsRead(BPFTRACE_017, { ...twelve, api: false }), 6);
    assert.strictEqual(argumentsRead(BPFTRACE_027, { ...twelve, api: false }), 12);
  });

  it('--latency pairs by an argument both probes have, of one kind', function () {
    const text = planProbes(BPFTRACE_017, { mode: 'latency', key: 1, probes: [{ ...START, role: 'start', library: lib }, { ...DONE, role: 'end', library: lib }] }).programText;
    assert.match(text, /@start\[pid, str\(arg1\)\] = nsecs;/);
    assert.match(text, /\$began = @start\[pid, str\(arg1\)\];/);
    assert.strictEqual(latencyKeyRefusal(BPFTRACE_017, [START, DONE], 0), null);
    assert.match(latencyKeyRefusal(BPFTRACE_017, [START, DONE], 2),
      /myapp:request-start has no argument 2 \(it has 2\)/);
    assert.match(latencyKeyRefusal(BPFTRACE_017, [START, { ...DONE, kinds: ['string'] }], 0), /a string in some of the probes and an integer in others/);
  });

  it('gives each clause three arguments of its own, each checked as a probe description\'s part', function () {
    const args = programArguments('usdt-count.bt', { PID: 1, PROBES: [{ LIBRARY: lib, PROVIDER: 'a', PROBE: 'b' }, { LIBRARY: lib, PROVIDER: 'c', PROBE: 'd' }] });
    assert.deepStrictEqual(args.map((a) => `$${a.position} ${a.name}`).slice(8), ['$9 LIBRARY', '$10 PROVIDER', '$11 PROBE', '$12 LIBRARY2', '$13 PROVIDER2', '$14 PROBE2']);
    assert.throws(() => programArguments('usdt-count.bt', { PID: 1, PROBES: [{ LIBRARY: lib, PROVIDER: 'a:b', PROBE: 'c' }] }), /refusing to trace: a probe name .*PROVIDER, \$10/);
    assert.throws(() => programArguments('usdt-count.bt', { PID: 1, PROBES: [{ LIBRARY: `${lib},/etc/x`, PROVIDER: 'a', PROBE: 'c' }] }), /refusing to trace: a path .*LIBRARY, \$9/);
    assert.throws(() => programArguments('usdt-count.bt', { PID: 1, PROBES: [{ LIBRARY: lib, PROVIDER: 'a' }] }), /missing PROBE of clause 1 \(\$11\)/);
  });
});

describe('probes: what the tracer printed, read back and shown', function () {
  it('joins each firing\'s F and S lines: the arguments as the application passed them', function () {
    const reader = new FiringReader([DONE, START], { stringBytes: 200 });
    const got = [];
    for (const item of items('bpftrace-probes-lines.out')) got.push(...reader.push(item));
    got.push(...reader.end());
    assert.strictEqual(got.length, 29);
    assert.deepStrictEqual(reader.stats, { firings: 29, incomplete: 0, lostEvents: 0, malformed: 0, strays: 0 });
    const done = got.find((f) => f.probe === DONE);
    const id = Number(done.args[0]);
    assert.deepStrictEqual(done.args, [BigInt(id), `/orders/${id}?q="a b"\n\u001b[31m\u202e`, `{"id":${id},"user":"o\\"brien","ms":12.5}`, 200n]);
    const line = renderLine(done, { wallMinusMonoNs: 0n });
    assert.match(line, new RegExp(`^\\S+ +29773  myapp:request-done  ${id} "/orders/${id}\\?q=\\\\"a b\\\\"\\\\n\\\\u001b\\[31m\\\\u202e" \\{"id":${id},"user":"o\\\\"brien","ms":12\\.5\\} 200\\n$`));
    // eslint-disable-next-line no-control-regex -- no escape byte may reach the terminal
    assert.ok(!/[\u001b\u202e]/.test(line));
    const json = renderJsonLine(done, { wallMinusMonoNs: 0n });
    // eslint-disable-next-line no-control-regex -- no escape byte may reach the JSON
    assert.ok(!/[\u001b\u202e]/.test(json));
    assert.deepStrictEqual(JSON.parse(json).arguments, [id, `/orders/${id}?q="a b"\n\u001b[31m\u202e`, { id, user: 'o"brien', ms: 12.5 }, 200]);
  });

  it('shows a firing whose strings were lost with those arguments missing, and counts it', function () {
    // The capture with one S line left out, as when the tracer's buffer overflows.
    const all = items('bpftrace-probes-lines.out');
    const cut = all.findIndex((i) => i.type === 'printf' && /^S 1 /.test(i.data));
    const reader = new FiringReader([DONE, START], { stringBytes: 200 });
    const got = [];
    for (const item of [...all.slice(0, cut), ...all.slice(cut + 1), { type: 'lost_events', data: { events: 1 } }]) got.push(...reader.push(item));
    got.push(...reader.end());
    assert.strictEqual(got.length, 29);
    assert.deepStrictEqual([reader.stats.incomplete, reader.stats.lostEvents], [1, 1]);
    const partial = got.find((f) => f.incomplete);
    assert.strictEqual(partial.args[1], null);
    assert.match(renderLine(partial), / \? \{/);
  });

  it('marks a string at the limit as possibly cut, and a JSON argument cut short as a string', function () {
    const reader = new FiringReader([{ provider: 'p', name: 'j', kinds: ['json'] }], { stringBytes: 8 });
    reader.push({ type: 'printf', data: 'F 1 7 7 100\n' });
    const [f] = reader.push({ type: 'printf', data: 'S 1 7 7 100 0 {"a":12\n' });
    assert.deepStrictEqual(f.cut, [0]);
    assert.deepStrictEqual(JSON.parse(renderJsonLine(f)).arguments, ['{"a":12']);
    assert.match(renderLine(f), / "\{\\"a\\":12"…\n$/);
  });

  it('counts per process and probe, over every tracer, with the probes that never fired', function () {
    const rows = report.counts([{ items: items('bpftrace-probes-count.out'), probes: [DONE, START] }]);
    assert.deepStrictEqual(rows.map((r) => [r.pid, r.probe.name, r.count]), [[29773, 'request-done', 15n], [29773, 'request-start', 15n]]);
    const twice = report.counts([1, 2].map(() => ({ items: items('bpftrace-probes-count.out'), probes: [DONE, START] })));
    assert.deepStrictEqual(twice.map((r) => r.count), [30n, 30n]);
    const zero = { provider: 'myapp', name: 'cache-miss', kinds: ['string'] };
    assert.deepStrictEqual(report.withZeros(rows, [DONE, START, zero], [29773]).map((r) => [r.probe.name, r.count]), [['cache-miss', 0n], ['request-done', 15n], ['request-start', 15n]]);
    const identityOf = (pid) => ({ pid, pidInside: null, container: null });
    assert.match(report.renderCountsText(rows, { identityOf }),
      /^PID 29773\n {2}PROBE +COUNT\n {2}myapp:request-done +15\n {2}myapp:request-start +15\n$/);
  });

  it('latency: the histogram, and starts and ends as the program counted them', function () {
    const [r] = report.latencies([{ items: items('bpftrace-probes-latency.out') }]);
    assert.deepStrictEqual([r.pid, r.starts, r.ends, r.totalUs, r.maxUs], [29773, 13n, 13n, 279011n, 25152n]);
    const identityOf = (pid) => ({ pid, pidInside: null, container: null });
    const json = JSON.parse(report.renderLatencyJson([r], { identityOf, start: 's', end: 'e', key: 0, seconds: 5 }));
    const p = json.processes[0];
    assert.deepStrictEqual([p.paired, p.mean_us, p.max_us, p.histogram_us],
      [13, 21462.385, 25152, [{ lo: 16384, hi: 32768, count: 13 }]]);
    assert.ok(p.p50_us >= 16384 && p.p50_us <= 25152);
    assert.match(report.renderLatencyText([r], { identityOf, start: 's', end: 'e' }), /^ {2}mean 21 ms {2}max 25 ms {2}p50 16–25 ms {2}p90 16–25 ms {2}p99 16–25 ms$/m);
  });

  it('lists names and paths others chose escaped, in text and JSON', function () {
    const who = { pid: 7, pidInside: null, container: null, uid: 0, user: 'root' };
    const objects = [{ path: '/tmp/x\u001b[2J/lib.so', api: false, refused: null, probes: [{ provider: 'evil\u202e', module: null, name: 'p\nq', types: ['uint64'], format: '8@%rdi', sites: 2, enabled: null }] },
      { path: '/tmp/bad.so', api: true, refused: 'it has more than 64 probe sites', probes: [] }];
    const text = list.renderText([{ who, command: 'node\u009b31m app.js', objects }]);
    // eslint-disable-next-line no-control-regex -- no ESC or CSI may reach the terminal
    assert.ok(!/[\u001b\u202e\u009b]/.test(text) && !/p\nq/.test(text), text);
    assert.match(text, /not read: \/tmp\/bad\.so: it has more than 64 probe sites/);
    assert.match(text, /uint64 +- +2 sites/);
    const json = list.renderJson([{ who, command: 'node app.js', objects }]);
    assert.ok(!/[\u202e]/.test(json));
    assert.strictEqual(JSON.parse(json).processes[0].providers[0].probes[0].name, 'p\nq');
  });
});

describe('probes: objects\' notes and probe libraries are checked before a tracer reads them', function () {
  let dir;
  before(function () { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-probes-unit-')); });
  after(function () { fs.rmSync(dir, { recursive: true, force: true }); });

  const notesOf = (bytes) => {
    const file = path.join(dir, 'obj.so');
    fs.writeFileSync(file, bytes);
    const fd = fs.openSync(file, 'r');
    try { return notesOfOpenFile(fd, bytes.length); } finally { fs.closeSync(fd); }
  };

  it('reads a library\'s notes: each probe\'s arguments, sizes and semaphore', function () {
    const { bytes } = libraryFor('myapp', [['request-start', 'int', 'char *']]);
    const { notes } = notesOf(bytes);
    assert.deepStrictEqual(notes.map((n) => [n.provider, n.name, n.format, n.args.map((a) => `${a.signed ? '-' : ''}${a.bytes}`), n.semaphoreOffset]),
      [['myapp', 'request-start', '-8@%rdi 8@%rsi', ['-8', '8'], 0x2060]]);
  });

  it('refuses an object whose site is not on a nop, outside its code, or that has too many sites', function () {
    const server = 'http-server-request-done';
    assert.match(notesOf(crafted.siteAt(HTTP_PROVIDER, server, 0x1001).bytes).refused, /site at 0x1001, not on a nop/);
    assert.match(notesOf(crafted.siteAt(HTTP_PROVIDER, server, 0x7fffffff).bytes).refused, /outside the file's code/);
    assert.match(notesOf(crafted.manySites(HTTP_PROVIDER, server, 1100).bytes).refused, /more than 1024 probe sites/);
  });

  it('a probe library for \'*\': the provider a glob names, checked against its own definition', function () {
    const lib = (bytes, name) => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, bytes, { mode: 0o500 });
      return file;
    };
    const matcher = providerMatcher([parseSpec('nodetrace:http-server-*')]);
    const good = libraryFor(HTTP_PROVIDER.name, HTTP_PROVIDER.probes);
    const v = libraries.openVerified(lib(good.bytes, good.fileName), matcher);
    assert.ok(!v.refused, v.refused);
    fs.closeSync(v.fd);
    assert.deepStrictEqual(v.provider.probes.map(([n]) => n), ['http-client-request-done', 'http-server-request-done']);
    const other = libraryFor('myapp', [['request-start', 'int', 'char *']]);
    assert.match(libraries.openVerified(lib(other.bytes, other.fileName), matcher).refused,
      /does not declare a provider nodetrace was asked for/);
    const bad = crafted.siteAt(HTTP_PROVIDER, 'http-server-request-done', 0x7fffffff);
    assert.match(libraries.openVerified(lib(bad.bytes, bad.fileName), matcher).refused,
      /site at 0x7fffffff, outside the file's code/);
  });
});

describe('probes: DTrace is refused plainly', function () {
  // DTrace for Linux reads no stapsdt notes (docs/platforms.md): the same
  // line before anything runs, on each of the handler's paths (a trace, a
  // list, which runs no tracer, and --wait, which waits before tracing).
  it('--backend dtrace says DTrace for Linux reads no stapsdt notes, and exits 1: a trace, a list, a wait', async function () {
    const refusal = 'nodetrace: nodetrace probes traces with bpftrace on Linux: the probes are stapsdt USDT probes, which DTrace for Linux does not read.\nUse --backend bpftrace (the default).\n';
    const pid = String(process.pid);
    for (const args of [['-p', pid, 'myapp:*'], ['-p', pid], ['-p', pid, 'myapp:*', '--wait', '5']]) {
      const r = await nodetrace(['probes', ...args, '--backend', 'dtrace']);
      assert.deepStrictEqual([r.code, r.stdout, r.stderr], [1, '', refusal], args.join(' '));
    }
  });

  it('without bpftrace, says to install it, not DTrace for Linux', async function () {
    const r = await nodetrace(['probes', '-p', String(process.pid), 'myapp:*'], { env: { NODETRACE_BPFTRACE: '/nonexistent/bpftrace' } });
    assert.strictEqual(r.code, 1);
    assert.match(r.stderr, /^nodetrace: bpftrace is not usable here \(bpftrace: NODETRACE_BPFTRACE=\/nonexistent\/bpftrace is not an executable file\)\.\nInstall bpftrace \(.*\): DTrace for Linux cannot see these probes\.\n$/);
  });
});
