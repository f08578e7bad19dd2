'use strict';
// nodetrace ebadf's parts that need neither root nor a tracer: argument
// checking, the programs it derives, reading the tracer's output, naming
// stack frames, rendering, the scripts' headers, and the watchdog.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const { UsageError } = require('../lib/errors');
const { parseErrnoList, LINUX_ERRNO } = require('../lib/ebadf/errno');
const { parseSyscallList } = require('../lib/ebadf/syscalls');
const { planEbadf, probeFor } = require('../lib/ebadf/program');
const { declaredProbe, instantiateProbes } = require('../lib/tracer/template');
const { OutputParser, parseHitLine } = require('../lib/ebadf/parse');
const { Symbolizer, loadElfSymbols, parseMaps } = require('../lib/symbolize');
const { MemoryBudget } = require('../lib/memory-budget');
const { LIMITS } = require('../lib/limits');
const { renderHit, renderOpenHelp } = require('../lib/ebadf/hit-report');
const { procState } = require('../lib/ebadf/procstate');
const { parseName } = require('../lib/commands/ebadf');
const { readScript, scriptPath } = require('../lib/tracer/plan');
const { READY_MARKER } = require('../lib/tracer/session');

const BPFTRACE = { name: 'bpftrace', path: '/usr/bin/bpftrace', version: '0.17.0' };
const DTRACE = { name: 'dtrace', path: '/usr/sbin/dtrace', version: '2.0' };

describe('ebadf: --errno', () => {
  it('takes names (any case), numbers and aliases; dedupes; keeps order', () => {
    assert.deepStrictEqual(parseErrnoList('EBADF'), [{ name: 'EBADF', number: 9 }]);
    assert.deepStrictEqual(parseErrnoList('ebadf, EPIPE,32,EWOULDBLOCK'),
      [{ name: 'EBADF', number: 9 }, { name: 'EPIPE', number: 32 }, { name: 'EAGAIN', number: 11 }]);
  });

  it('rejects unknown names with a suggestion and how to list them', () => {
    assert.throws(() => parseErrnoList('EBDAF'), (e) => e instanceof UsageError && /did you mean EBADF\?/.test(e.message) && /man 3 errno/.test(e.hint));
    assert.throws(() => parseErrnoList('41'), /not a Linux errno number/);
    assert.throws(() => parseErrnoList('$(reboot)'), UsageError);
    assert.throws(() => parseErrnoList(''), UsageError);
  });

  it('agrees with this host\'s errno values (Linux)', function () {
    if (process.platform !== 'linux') this.skip();
    for (const [name, n] of Object.entries(os.constants.errno)) {
      if (name in LINUX_ERRNO) assert.strictEqual(LINUX_ERRNO[name], n, name);
    }
  });
});

describe('ebadf: --syscall', () => {
  let events;
  before(() => {
    events = fs.mkdtempSync(path.join(os.tmpdir(), 'ebadf-events-'));
    for (const s of ['close', 'close_range', 'dup2', 'write', 'clone']) fs.mkdirSync(path.join(events, 'sys_exit_' + s));
  });
  after(() => fs.rmSync(events, { recursive: true, force: true }));

  it('checks names against the kernel\'s tracepoints', () => {
    assert.deepStrictEqual(parseSyscallList('close,dup2,close', { eventsDir: events }), { names: ['close', 'dup2'], checked: true });
    assert.throws(() => parseSyscallList('clsoe', { eventsDir: events }),
      (e) => /unknown system call "clsoe".*did you mean close\?/.test(e.message) && /bpftrace -l/.test(e.hint));
  });

  it('only checks the spelling when tracefs cannot be read (or for DTrace)', () => {
    assert.deepStrictEqual(parseSyscallList('close', { eventsDir: null }), { names: ['close'], checked: false });
    assert.deepStrictEqual(parseSyscallList('close', { tracerName: 'dtrace' }), { names: ['close'], checked: false });
    for (const bad of ['Close', 'close;reboot', 'a b', '../x', '']) assert.throws(() => parseSyscallList(bad, { eventsDir: null }), UsageError, bad);
  });
});

describe('ebadf: --name NAME', () => {
  it('keeps names the kernel can hold; says how to write longer ones', () => {
    assert.strictEqual(parseName('node'), 'node');
    assert.strictEqual(parseName('abcdefghijklmno'), 'abcdefghijklmno');
    assert.throws(() => parseName('my-long-service-name'), (e) => /longer than 15 bytes/.test(e.message) && /--name 'my-long-service'/.test(e.hint));
    assert.throws(() => parseName('-x'), UsageError);
    assert.throws(() => parseName('a\nb'), UsageError);
  });
});

describe('ebadf: programs', () => {
  const errnos = [{ name: 'EBADF', number: 9 }];
  const two = [{ name: 'EBADF', number: 9 }, { name: 'EPIPE', number: 32 }];

  it('runs the checked-in script as it is, with the values as arguments', () => {
    const p = planEbadf({ tracer: BPFTRACE, mode: 'stop', pid: 4242, syscalls: ['close'], errnos, count: 1 });
    assert.strictEqual(p.programText, null);
    assert.deepStrictEqual(p.argv, ['--unsafe', scriptPath('ebadf-stop-gcore', 'bpftrace'), '4242', '-', '9', '1', '0', '0', '0', '1']);
    assert.deepStrictEqual(p.env, { BPFTRACE_NO_USER_SYMBOLS: '1', __BPFTRACE_NOTIFY_PROBES_ATTACHED: '1' });
    const n = planEbadf({ tracer: BPFTRACE, mode: 'abort', name: 'node', syscalls: ['close'], errnos: two, count: 3 });
    assert.deepStrictEqual(n.argv.slice(-7), ['0', 'node', '9', '3', '32', '0', '0']);
    const d = planEbadf({ tracer: DTRACE, mode: 'stop', pid: 4242, syscalls: ['close'], errnos: two, count: 1 });
    // $9: ustack() in D where it does not block gcore (illumos, macOS) ...
    assert.deepStrictEqual(d.argv, ['-w', '-s', scriptPath('ebadf-stop-gcore', 'dtrace'), '4242', '-', 'EBADF', '1', 'EPIPE', '0', '0', '1', '1']);
    // ... and not on DTrace for Linux, where gcore would then fail: the stack comes from the core.
    const linux = planEbadf({ tracer: { ...DTRACE, flavor: 'oracle' }, mode: 'stop', pid: 4242, syscalls: ['close'], errnos: two, count: 1 });
    assert.deepStrictEqual(linux.argv.slice(-2), ['1', '0']);
  });

  it('reads the failing thread\'s stack from gdb\'s output for a core, innermost first', () => {
    const { parseThreadStack } = require('../lib/ebadf/core-stack');
    const text = fs.readFileSync(path.join(__dirname, 'fixtures', 'gdb-core-bt.out'), 'utf8');
    const frames = parseThreadStack(text, 944);
    assert.deepStrictEqual(frames.slice(0, 3), ['0x7ffb0663f829', '0x18ace92', '0x18b0589']);
    assert(frames.every((f) => BigInt(f) >= 0x1000n), 'stops at the first guess that is no address');
    assert.strictEqual(parseThreadStack(text, 1), null, 'a thread not in the core');
    assert.notDeepStrictEqual(parseThreadStack(text, 958), frames, 'another thread has its own stack');
  });

  it('instantiates other system calls from the script\'s declared probe, changing nothing else', () => {
    for (const [tracer, script] of [[BPFTRACE, 'ebadf-stop-gcore'], [BPFTRACE, 'ebadf-abort'], [DTRACE, 'ebadf-stop-gcore'], [DTRACE, 'ebadf-abort']]) {
      const original = readScript(script, tracer.name);
      const p = planEbadf({ tracer, mode: script === 'ebadf-abort' ? 'abort' : 'stop', pid: 7, syscalls: ['close', 'dup2'], errnos, count: 1 });
      const text = p.programText;
      const probe = declaredProbe(original);
      const uses = original.split('\n').filter((l) => l.trim() === probe).length;
      assert(uses >= 1, `${script}: uses its declared probe`);
      const list = `${probeFor(tracer.name, 'close')},\n${probeFor(tracer.name, 'dup2')}`;
      assert.strictEqual(text.split(list).length - 1, uses, `${script}: every use replaced`);
      // Everything else is the checked-in script, line for line.
      const back = text.split(list).join(probe);
      const comment = back.match(/^(#!.*\n)?(\/\* Instantiated by nodetrace ebadf .*\*\/\n)/)[2];
      assert.strictEqual(back.replace(comment, ''), original);
      assert(p.argv.some((a) => typeof a === 'object'), 'runs from the private directory');
    }
    assert.throws(() => instantiateProbes('no slot here', ['x'], 'n'), /declares no @template/);
    assert.throws(() => instantiateProbes(' * @template PROBES: a:b\nc\n', ['x'], 'n'), /never uses its declared PROBES text/);
    assert.throws(() => instantiateProbes(' * @template PROBES: a:b\na:b\n', ['x; system("id")'], 'n'), /not a probe description/);
  });
});

describe('ebadf: scripts', () => {
  for (const [script, tracer] of [['ebadf-stop-gcore', 'bpftrace'], ['ebadf-abort', 'bpftrace'], ['ebadf-stop-gcore', 'dtrace'], ['ebadf-abort', 'dtrace']]) {
    it(`${script}.${tracer === 'dtrace' ? 'd' : 'bt'} carries its header and the ready line`, () => {
      const text = readScript(script, tracer);
      const header = text.slice(0, text.indexOf('*/'));
      assert.match(header, new RegExp(`\\* ${script}\\.(d|bt) +\\S`), 'name and purpose');
      assert.match(header, /USAGE: /);
      assert.match(header, /Twin of ebadf-/);
      // The notes live in docs/ (one home), pointed to from the header.
      assert.match(header, /docs\/ebadf\.md#the-scripts/);
      const notes = fs.readFileSync(path.join(__dirname, '..', 'docs', 'ebadf.md'), 'utf8');
      assert.match(notes, /^## The scripts$/m);
      assert.match(notes, /Why `-w` \/ `--unsafe`/);
      assert.match(notes, /Why `exit` after the\s+first hit/);
      assert.ok(text.includes(READY_MARKER), 'prints the ready marker from BEGIN');
      assert.match(text, /Refusing to run without a PID or a/);
      if (tracer === 'dtrace') {
        assert.match(notes, /`errno == EBADF`/);
        assert.doesNotMatch(text.replace(/\/\*[\s\S]*?\*\//g, ''), /\bstop\(\)|\bprun\b|arg1 == -1/, 'portable D: no stop(), prun or arg1 == -1');
        // D rejects macro arguments a script does not use: the CLI passes $1..$7 (+$8).
        for (const n of script === 'ebadf-abort' ? [1, 2, 3, 4, 5, 6, 7] : [1, 2, 3, 4, 5, 6, 7, 8]) assert.ok(text.includes('$' + n), `$${n} used`);
      }
    });
  }
});

describe('ebadf: tracer output', () => {
  it('reads hits, their stacks and the stopped map', () => {
    const events = [];
    const p = new OutputParser((e) => events.push(e));
    const text = 'Attaching 2 probes...\nWatching PID 42 for close() failing with errno 9... Hit Ctrl-C to end.\n'
      + 'HIT pid=42 tid=43 errno=9 ns=674037839680 probe=tracepoint:syscalls:sys_exit_close comm=\\x6d\\x79\\x20\\x61\\x70\\x70'
      + '\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\n\n'
      + '        0x7f3d8971f829\n        0x18b0589\nEND pid=42\n\n\n@hits: 1\n@stopped_ns[42]: 674037838428\n';
    for (const line of text.split('\n')) p.line(line);
    p.end();
    assert.deepStrictEqual(events.map((e) => e.type), ['line', 'line', 'hit', 'stack', 'line', 'stopped']);
    assert.deepStrictEqual(events[2].hit, { pid: 42, tid: 43, errno: 9, kernelNs: 674037839680n, wallNs: null, syscall: 'close', comm: 'my app' });
    assert.deepStrictEqual(events[3], { type: 'stack', pid: 42, frames: ['0x7f3d8971f829', '0x18b0589'] });
    assert.deepStrictEqual(events[5], { type: 'stopped', pid: 42, kernelNs: 674037838428n });
  });

  it('reads the D scripts\' hit lines', () => {
    assert.deepStrictEqual(parseHitLine('HIT pid=4242 tid=1 errno=9 wall=1763744763512000000 syscall=close comm=65646f6e 0'),
      { pid: 4242, tid: 1, errno: 9, kernelNs: null, wallNs: 1763744763512000000n, syscall: 'close', comm: 'node' });
    assert.strictEqual(parseHitLine('HIT garbage'), null);
  });

  // A process named itself "a\nEND pid=99999" (real captures: the fixtures'
  // .cmd files): its name crosses in hex, so its hit's stack is whole, on
  // bpftrace and DTrace alike, and the name is the hit's, shown escaped.
  for (const fixture of ['bpftrace-ebadf-forged-comm.out', 'dtrace-ebadf-forged-comm.out']) {
    it(`a name with a newline and a forged END line ends nothing (${fixture})`, () => {
      const events = [];
      const p = new OutputParser((e) => events.push(e));
      for (const line of fs.readFileSync(path.join(__dirname, 'fixtures', fixture), 'utf8').split('\n')) p.line(line);
      p.end();
      const hit = events.find((e) => e.type === 'hit').hit;
      assert.strictEqual(hit.comm, 'a\nEND pid=99999');
      const stacks = events.filter((e) => e.type === 'stack');
      assert.strictEqual(stacks.length, 1);
      assert.strictEqual(stacks[0].truncated, undefined);
      assert.strictEqual(stacks[0].frames.length, 25, 'every frame the tracer printed');
      assert.deepStrictEqual(events.filter((e) => e.type === 'line' && /0x|END/.test(e.line)), [], 'no frame or END taken for a line');
      const text = renderHit({ n: 1, of: 1, mode: 'abort', hit, wallMs: 0, frames: stacks[0].frames, outcome: 'gone' });
      assert.match(text, /^ {2}process {2}PID \d+ \(a\\x0aEND pid=99999\), thread \d+$/m, text);
    });
  }
});

describe('ebadf: naming stack frames', () => {
  it('names an address in the node binary from its ELF symbols and our own memory map', function () {
    if (process.platform !== 'linux') this.skip();
    const table = loadElfSymbols(process.execPath, { budget: new MemoryBudget(LIMITS.RUN_MEMORY_BYTES) });
    if (!table) this.skip();
    let idx = -1;
    for (let i = 0; i < table.values.length; i++) if (table.nameAt(i) === 'uv_fs_close') { idx = i; break; }
    if (idx < 0) this.skip();
    const vaddr = table.values[idx] + 5;
    const seg = table.loads.find((l) => vaddr >= l.vaddr && vaddr < l.vaddr + l.filesz);
    const fileOff = vaddr - seg.vaddr + seg.offset;
    const exe = fs.realpathSync(process.execPath);
    const map = parseMaps(fs.readFileSync('/proc/self/maps', 'utf8')).find((m) => m.path === exe && fileOff >= m.offset && fileOff < m.offset + (m.end - m.start));
    const addr = map.start + fileOff - map.offset;
    const sym = new Symbolizer();
    const r = sym.symbolize(sym.snapshot(process.pid), ['0x' + addr.toString(16), '0x' + (addr + 1).toString(16), 'libc.so.1`close+0xa']);
    sym.close();
    assert.strictEqual(r.frames[0].text, 'uv_fs_close+5');
    assert.strictEqual(r.frames[0].module, path.basename(exe));
    assert.strictEqual(r.frames[1].text, 'uv_fs_close+6', 'a return address is looked up at addr - 1 but shown as is');
    assert.deepStrictEqual(r.frames[2], { text: 'libc.so.1`close+0xa', module: '', kind: 'named' }, 'already-named frames (DTrace) pass through');
  });

  it('names an address in the vDSO [vdso], never JIT code; anonymous executable memory is JIT', function () {
    const maps = parseMaps(fs.readFileSync('/proc/self/maps', 'utf8'));
    const vdso = maps.find((m) => m.path === '[vdso]');
    if (!vdso) this.skip();
    const sym = new Symbolizer();
    const snap = { ...sym.snapshot(process.pid, { perfMap: false }) };
    const anon = { start: 0x10000000, end: 0x10001000, range: '10000000-10001000', perms: 'r-xp', offset: 0, dev: '00:00', inode: '0', path: '' };
    snap.maps = [...snap.maps, anon];
    const r = sym.symbolize(snap, ['0x' + (vdso.start + 16).toString(16), '0x10000010'], { allPcs: true });
    sym.close();
    assert.deepStrictEqual([r.frames[0].kind, r.frames[0].module], ['special', '[vdso]']);
    assert.deepStrictEqual([r.frames[1].kind, r.jitUnnamed], ['jit', 1]);
  });
});

describe('ebadf: report', () => {
  const base = {
    n: 1, of: 1, hit: { pid: 42, tid: 43, errno: 9, syscall: 'close', comm: 'node' }, wallMs: Date.UTC(2026, 10, 21, 20, 27, 3, 512),
    errnoName: 'EBADF', exe: '/usr/bin/node', isNode: true,
    symbolized: { frames: [{ kind: 'native', text: 'uv_fs_close+180', module: 'node' }, { kind: 'js', symbol: 'JS:~closeTwice /a.js:39:20', text: '' }], perfMapUsed: true, interpreted: 0, jitUnnamed: 0 },
  };

  it('a stop: the call, the stack, the core, how long, resumed', () => {
    const text = renderHit({ ...base, mode: 'stop', perfMap: '/tmp/perf-42.map', core: { ok: true, file: '/c/core.node.42.x', size: 662288336, ms: 942 }, stoppedMs: 1180, resumeText: 'yes, PID 42 is running again (state S)' });
    assert.match(text, /^hit 1 of 1 at 2026-11-21T20:27:03\.512Z\n/);
    assert.match(text, /call {5}close\(\) failed with EBADF \(errno 9/);
    assert.match(text, /stack {4}innermost first; JavaScript frames named from \/tmp\/perf-42\.map\n {6}uv_fs_close\+180 \(node\)\n {6}JS:~closeTwice \/a\.js:39:20 {2}\[JS\]\n/);
    assert.match(text, /core {5}\/c\/core\.node\.42\.x \(662\.3 MB, owner-only -rw-------\)/);
    assert.match(text, /stopped {2}1\.18 s \(gcore took 942 ms\)/);
    const help = renderOpenHelp([{ ...base, core: { ok: true, file: '/c/core.node.42.x' } }]);
    assert.match(help, /gdb \/usr\/bin\/node \/c\/core\.node\.42\.x/);
    assert.match(help, /nodetrace stack \/c\/core\.node\.42\.x {4}# every thread's JavaScript and native stack/);
    assert.doesNotMatch(help, /llnode/);
    assert.match(help, /thread find 43/);
  });

  it('says a user stack the tracer lost as lost, not as a thread outside user code', () => {
    // A hit is at a system call's return: its thread was in user code.
    const text = renderHit({ ...base, symbolized: { ...base.symbolized, frames: [] }, mode: 'stop', perfMap: null, resumeText: 'yes' });
    assert.match(text, /\(no user stack: the tracer printed none, though the thread was returning from a system call; bpftrace before 0\.25 loses /);
    assert.doesNotMatch(text, /not in user code/);
  });

  it('says when JavaScript frames cannot be named, and why', () => {
    const text = renderHit({ ...base, mode: 'stop', perfMap: null, jsStack: { error: 'gdb could not read the registers of 42 (ptrace not permitted)' },
      core: { ok: false, reason: 'gcore failed' }, stoppedMs: 10, resumeText: 'yes' });
    assert.match(text, /JavaScript frames are not named: gdb could not read the registers of 42 \(ptrace not permitted\)\.\n/);
    assert.doesNotMatch(text, /perf-basic-prof/, 'no advice to restart the process');
    const unknownV8 = renderHit({ ...base, mode: 'stop', perfMap: null, jsStack: { frames: [], note: 'V8 15.1.2.3 is not a version nodetrace knows: JavaScript frames are shown as addresses' }, resumeText: 'yes' });
    assert.match(unknownV8,
      /JavaScript frames are not named: V8 15\.1\.2\.3 is not a version nodetrace knows: JavaScript frames are shown as addresses\.\n/);
    assert.match(text, /core {5}NOT SAVED: gcore failed/);
    const interp = renderHit({ ...base, mode: 'stop', perfMap: '/tmp/perf-42.map', symbolized: { ...base.symbolized, interpreted: 3 }, core: null, resumeText: 'yes' });
    assert.match(interp, /--interpreted-frames-native-stack/);
    const notNode = renderHit({ ...base, isNode: false, mode: 'abort', perfMap: null, outcome: 'PID 42 is gone' });
    assert.doesNotMatch(notNode, /JavaScript/);
    assert.match(notNode, /action {3}SIGABRT sent in the kernel/);
  });

  it('a process in a container: its PID, thread and path there, its files beside the core, a gdb line that uses them', () => {
    const who = { pid: 42, pidInside: 1, container: { id: 'ab'.repeat(32), runtime: 'podman', name: 'web' }, otherMounts: true };
    const root = '/c d/core.node.42.x.root';
    const rec = { ...base, exe: '/usr/local/bin/node', who, tidInside: 7, mode: 'stop', perfMap: '/proc/42/root/tmp/perf-1.map',
      core: { ok: true, file: '/c d/core.node.42.x', size: 1e6, ms: 5 }, sysroot: { root, bytes: 125e6 }, stoppedMs: 9, resumeText: 'yes' };
    const text = renderHit(rec);
    assert.match(text, /process {2}PID 42 \(node\), thread 43, \/usr\/local\/bin\/node\n {11}PID 1, thread 7 in podman container web \(abababababab\); \/usr\/local\/bin\/node is its path there\n/);
    assert.match(text, /files {4}\/c d\/core\.node\.42\.x\.root: its executable and libraries, at their paths in the container \(125\.0 MB\)/);
    const help = renderOpenHelp([rec]);
    assert(help.includes(`nodetrace stack '/c d/core.node.42.x' --root '/c d/core.node.42.x.root'`), help);
    // Quoted as a shell needs it: it runs as printed.
    assert(help.includes(`gdb -iex 'set sysroot /c d/core.node.42.x.root' '/c d/core.node.42.x.root/usr/local/bin/node' '/c d/core.node.42.x'\n`), help);
    const failed = renderHit({ ...rec, sysroot: { error: 'none of its files could be opened' } });
    assert.match(failed, /files {4}its executable and libraries NOT saved beside the core: none of its files could be opened/);
  });
});

describe('ebadf: watchdog', function () {
  this.timeout(30000);
  const client = path.join(__dirname, 'targets', 'ebadf-guard-client.js');

  function waitFor(test, ms) {
    const deadline = Date.now() + ms;
    return new Promise((resolve, reject) => {
      const tick = () => (test() ? resolve() : Date.now() > deadline ? reject(new Error('timed out')) : setTimeout(tick, 20));
      tick();
    });
  }

  it('resumes a stopped process, and kills gcore\'s group, when nodetrace is SIGKILLed', async function () {
    if (process.platform !== 'linux') this.skip();
    const victim = spawn('sleep', ['30'], { stdio: 'ignore' });
    const gcore = spawn('sleep', ['30'], { stdio: 'ignore', detached: true });
    try {
      process.kill(victim.pid, 'SIGSTOP');
      await waitFor(() => procState(victim.pid) === 'T', 5000);
      const c = spawn(process.execPath, [client, String(victim.pid), String(gcore.pid)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      c.stdout.on('data', (d) => { out += d; });
      c.stderr.on('data', (d) => { err += d; });
      await waitFor(() => out.includes('armed'), 15000);
      assert.strictEqual(procState(victim.pid), 'T', 'still stopped while nodetrace lives');
      c.kill('SIGKILL');
      await waitFor(() => procState(victim.pid) !== 'T', 5000);
      assert.match(procState(victim.pid), /^[RS]$/);
      await waitFor(() => procState(gcore.pid) === null || procState(gcore.pid) === 'Z', 5000);
      await waitFor(() => /went away/.test(err), 5000);
      assert.match(err, new RegExp(`killed gcore \\(process group ${gcore.pid}\\).*resumed PID ${victim.pid} with SIGCONT`));
    } finally {
      victim.kill('SIGKILL');
      try { process.kill(-gcore.pid, 'SIGKILL'); } catch { /* gone */ }
    }
  });
  // The stop bound by the watchdog's own clock, while nodetrace lives
  // (issue 35.1: root's process stayed stopped 60 s and more while
  // nodetrace read a hostile binary, never handling its hit).
  async function armed(victim, env, gcore) {
    const c = spawn(process.execPath, [client, String(victim.pid), ...(gcore ? [String(gcore.pid)] : [])],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    const o = { child: c, out: '', err: '' };
    c.stdout.on('data', (d) => { o.out += d; });
    c.stderr.on('data', (d) => { o.err += d; });
    await waitFor(() => o.out.includes('armed'), 15000);
    return o;
  }

  it('resumes a process stopped longer than the bound, and kills its gcore, while nodetrace lives and talks', async function () {
    const victim = spawn('sleep', ['30'], { stdio: 'ignore' });
    const gcore = spawn('sleep', ['30'], { stdio: 'ignore', detached: true });
    let c;
    try {
      process.kill(victim.pid, 'SIGSTOP');
      await waitFor(() => procState(victim.pid) === 'T', 5000);
      const t0 = Date.now();
      c = await armed(victim, { GUARD_MAX_STOP_MS: '2000', GUARD_SILENT_MS: '60000' }, gcore);
      await waitFor(() => procState(victim.pid) !== 'T', 8000);
      const ms = Date.now() - t0;
      assert.ok(ms >= 1500, `resumed after ${ms} ms, before its bound`);
      assert.strictEqual(c.child.exitCode, null, 'nodetrace still runs');
      await waitFor(() => procState(gcore.pid) === null || procState(gcore.pid) === 'Z', 5000);
      await waitFor(() => /resumed PID/.test(c.err), 5000);
      assert.match(c.err, new RegExp(`^nodetrace ebadf watchdog: resumed PID ${victim.pid} with SIGCONT: stopped for more than 2 s, the longest a hit's handling may take\\.$`, 'm'));
    } finally {
      if (c) c.child.kill('SIGKILL');
      victim.kill('SIGKILL');
      try { process.kill(-gcore.pid, 'SIGKILL'); } catch { /* gone */ }
    }
  });

  it('resumes what nodetrace stopped, and a hit it has not read, once nodetrace is silent (its loop blocked)', async function () {
    const victim = spawn('sleep', ['30'], { stdio: 'ignore' });
    let c;
    try {
      // Not stopped when the watch began, and never claimed: a hit nodetrace has not read.
      c = await armed(victim, { GUARD_MAX_STOP_MS: '600000', GUARD_SILENT_MS: '1500', GUARD_CLAIM: '0', GUARD_BLOCK_MS: '8000' });
      process.kill(victim.pid, 'SIGSTOP');
      const t0 = Date.now();
      await waitFor(() => procState(victim.pid) === 'T', 5000);
      await waitFor(() => procState(victim.pid) !== 'T', 6000);
      assert.ok(Date.now() - t0 < 5000, 'resumed within seconds of the silence');
      assert.ok(!c.out.includes('unblocked'), 'while nodetrace was still blocked');
      await waitFor(() => /resumed PID/.test(c.err), 5000);
      assert.match(c.err, new RegExp(`resumed PID ${victim.pid} with SIGCONT: nodetrace \\(PID ${c.child.pid}\\) has not answered for [1-9] s\\.`));
    } finally {
      if (c) c.child.kill('SIGKILL');
      victim.kill('SIGKILL');
    }
  });
});

describe('ebadf: report of a walked stack', () => {
  const base = {
    n: 1, of: 1, hit: { pid: 42, tid: 43, errno: 9, syscall: 'close', comm: 'node' }, wallMs: Date.UTC(2026, 10, 21, 20, 27, 3, 512),
    errnoName: 'EBADF', exe: '/usr/bin/node', isNode: true,
    symbolized: { frames: [{ kind: 'native', text: 'uv_fs_close+180', module: 'node' }], perfMapUsed: false, interpreted: 0, jitUnnamed: 0 },
  };
  // A walk as lib/v8/walk.js gives it (frames of the ebadf target on Node 20).
  const walk = {
    from: 'process', note: null, ended: 'a frame pointer that does not climb the stack (a cycle or a wild pointer)',
    frames: [
      { kind: 'native', pc: 0x1000, text: 'uv_fs_close+180', module: 'node' },
      { kind: 'v8', pc: 0x2000, text: '[BuiltinExitFrame] CEntry_Return1_ArgvOnStack_BuiltinExit', module: 'node' },
      { kind: 'js', pc: 0x3000, name: 'closeSync', text: 'closeSync (node:fs:524:19)', tier: 'interpreted' },
      { kind: 'js', pc: 0x4000, name: 'closeTwice', text: 'closeTwice (/a.js:39:20)', tier: 'compiled' },
      { kind: 'native', pc: 0x5000, text: 'uv_run+756', module: 'node' },
    ],
  };

  it('the stack walked in the stopped process: JavaScript frames named with no perf map, no advice to restart', () => {
    const text = renderHit({ ...base, mode: 'stop', perfMap: null, jsStack: walk, resumeText: 'yes' });
    assert.match(text, /stack {4}innermost first; walked in the stopped process, JavaScript frames named from V8's own metadata\n/);
    assert.match(text, / {6}uv_fs_close\+180 \(node\)\n {6}\[BuiltinExitFrame\] CEntry_Return1_ArgvOnStack_BuiltinExit \(node\)\n {6}closeSync \(node:fs:524:19\) {2}\[JS, interpreted\]\n {6}closeTwice \(\/a\.js:39:20\) {2}\[JS, compiled\]\n {6}uv_run\+756 \(node\)\n/);
    assert.doesNotMatch(text, /perf-basic-prof|not named|walk ended/, 'a walk that ends below main in native code says nothing of it');
    const fromCore = renderHit({ ...base, mode: 'stop', jsStack: { ...walk, from: 'core', ended: 'an unreadable frame pointer (0x10)', frames: walk.frames.slice(0, 4) }, resumeText: 'yes' });
    assert.match(fromCore, /walked in the core, JavaScript/);
    assert.match(fromCore, /The walk ended at an unreadable frame pointer \(0x10\)\./, 'a walk that ends in JavaScript frames says so');
  });

  it('the perf map, when there is one, cross-checks the walk frame by frame', () => {
    const perf = (symbol, addr) => ({ kind: 'js', symbol, addr, text: '' });
    const same = renderHit({ ...base, mode: 'stop', perfMap: '/tmp/perf-42.map', jsStack: walk, resumeText: 'yes',
      symbolized: { frames: [perf('JS:*closeTwice /a.js:39:20', 0x4000)], perfMapUsed: true, interpreted: 0, jitUnnamed: 0 } });
    assert.match(same, /\/tmp\/perf-42\.map names the 1 JavaScript frame\(s\) it has the same\./);
    const differ = renderHit({ ...base, mode: 'stop', perfMap: '/tmp/perf-42.map', jsStack: walk, resumeText: 'yes',
      symbolized: { frames: [perf('LazyCompile:~other /a.js:1:1', 0x4000)], perfMapUsed: true, interpreted: 0, jitUnnamed: 0 } });
    assert.match(differ, /\/tmp\/perf-42\.map names closeTwice \(\/a\.js:39:20\) otherwise: LazyCompile:~other \/a\.js:1:1\./);
  });
});

describe('ebadf: the perf map against the walk (pure)', () => {
  const { crossCheck, perfMapFunction } = require('../lib/ebadf/js-stack');
  it('reads the function out of every form of perf map name', () => {
    assert.strictEqual(perfMapFunction('JS:*closeTwice /a.js:39:20'), 'closeTwice');
    assert.strictEqual(perfMapFunction('LazyCompile:~handlers.onTick file:///m.mjs:3:4'), 'handlers.onTick');
    assert.strictEqual(perfMapFunction('JS:^ node:fs:10:2'), '');
    assert.strictEqual(perfMapFunction('plain'), 'plain');
  });
  it('compares only frames both name, by address', () => {
    const r = crossCheck([{ kind: 'js', pc: 1, name: 'a' }, { kind: 'js', pc: 2, name: 'b' }, { kind: 'js', pc: 3, name: null }, { kind: 'native', pc: 4 }],
      [{ kind: 'js', addr: 1, symbol: 'JS:*a /x.js:1:1' }, { kind: 'js', addr: 3, symbol: 'JS:*c /x.js:1:1' }, { kind: 'native', addr: 2, symbol: 'b' }]);
    assert.deepStrictEqual(r, { compared: 1, differ: [] });
  });
});


describe('ebadf --abort: where the kernel writes the core', () => {
  const { coreNameComponent } = require('../lib/ebadf/watch');
  it('names the process in the path as fs/coredump.c does, never a path the process chose', () => {
    assert.strictEqual(coreNameComponent('node'), 'node');
    assert.strictEqual(coreNameComponent('../../etc/x'), '..!..!etc!x');
    assert.strictEqual(coreNameComponent('..'), '!.');
    assert.strictEqual(coreNameComponent('.'), '!');
    assert.strictEqual(coreNameComponent(''), '!');
    assert.strictEqual(coreNameComponent('a\nb'), 'a\nb', 'escaped where shown, not here');
  });
});

// Issue 35.1: what a hit needs of its process (symbols, V8's metadata, its
// memory) is read in a worker of that process's user, with a deadline:
// past it the worker goes, the hit is said with the addresses it has, and
// the process goes on to its core and resume. (The deadline here is 1 ms,
// so that it passes while the worker is still loading its modules: the
// real ones are 30 s, too long for a test, and no read can be made to
// block at will, files of others being opened so that none does.)
describe('ebadf: hit readers give a read up at its deadline (lib/ebadf/hit-readers.js)', function () {
  this.timeout(30000);
  const { HitReaders } = require('../lib/ebadf/hit-readers');
  const { Watch } = require('../lib/ebadf/watch');
  const snap = { pid: process.pid, maps: [], perfMap: null };
  const request = { op: 'symbolize', snap, frames: ['0x10'] };
  let readers;
  beforeEach(function () { readers = new HitReaders(); });
  afterEach(function () { readers.close(); });

  it('ends the request and its worker; that user\'s next request gets a new worker, another user\'s its own', async function () {
    const late = readers.run(1001, request, { deadlineMs: 1 });
    const worker = readers.readers.get('1001').worker;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    const other = readers.run(1002, request, { deadlineMs: 20000 });
    const r = await late;
    assert.ok(r.timedOut === true && r.ms >= 0 && !('value' in r), JSON.stringify(r));
    await exited;   // terminated, with whatever it was reading
    const again = await readers.run(1001, request, { deadlineMs: 20000 });
    assert.strictEqual(again.value.frames[0].text, '0x10', JSON.stringify(again));
    assert.notStrictEqual(readers.readers.get('1001').worker, worker, 'a new worker');
    assert.strictEqual((await other).value.frames[0].text, '0x10');
  });

  it('a hit whose naming passed its deadline is said with its addresses and why', async function () {
    const rec = { ...ebadfHitBase(), uid: 1001, snap: { ...snap, elfFiles: () => [] }, sysroot: null };
    const watch = Object.create(Watch.prototype);
    watch.readers = { run: (key, req) => readers.run(key, req, { deadlineMs: 1 }) };
    await watch.symbolizeApart(rec, ['0x55d4c0a01234', '0x55d4c0a05678']);
    assert.deepStrictEqual(rec.symbolized.frames.map((f) => f.text), ['0x55d4c0a01234', '0x55d4c0a05678']);
    const text = renderHit({ ...rec, mode: 'stop', perfMap: null, resumeText: 'yes, PID 42 is running again (state S)' });
    assert.match(text, /stack {4}innermost first; addresses only: naming them took longer than 30 s \(reading the process's files\), and was given up\n {6}0x55d4c0a01234\n {6}0x55d4c0a05678\n/);
    assert.match(text, /running again/);
  });
});

function ebadfHitBase() {
  return {
    n: 1, of: 1, hit: { pid: 42, tid: 43, errno: 9, syscall: 'close', comm: 'node' }, wallMs: Date.UTC(2026, 10, 21, 20, 27, 3, 512),
    errnoName: 'EBADF', exe: '/usr/bin/node', isNode: true,
  };
}
