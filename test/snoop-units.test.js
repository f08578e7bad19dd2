'use strict';
// nodetrace snoop's pure parts: levels, target syntax, probe-library
// recognition, the tracer command line and the marks it prints. No tracer.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { parseLevel, bpftraceProbeSlots, dtraceProbeGlob, probeNames } = require('../lib/snoop/levels');
const { parseTarget, BUNYAN } = require('../lib/snoop/targets');
const { declaresProvider, libraryDefinition, openVerified } = require('../lib/probe-libraries');
const { ancestors } = require('../lib/proc');
const { lineFor, truncatedJson, summary, isJsonMode } = require('../lib/snoop/format');
const { planSnoop, PID_SLOTS } = require('../lib/snoop/plan');
const { bunyanArgs } = require('../lib/snoop/sink');
const { scriptPath } = require('../lib/tracer/plan');
const usdt = require('../lib/usdt');
const { libraryFor } = require('../lib/usdt/paths');

const BPFTRACE = { name: 'bpftrace', path: '/usr/bin/bpftrace', version: '0.17.0' };
const DTRACE = { name: 'dtrace', path: '/usr/sbin/dtrace', version: '1.13' };

describe('snoop: levels', function () {
  it('reads names and numbers the way bunyan -l does', function () {
    assert.strictEqual(parseLevel(undefined), 10);
    assert.strictEqual(parseLevel('WARN'), 40);
    assert.strictEqual(parseLevel('30'), 30);
    assert.strictEqual(parseLevel('35'), 40);
    assert.throws(() => parseLevel('loud'), (e) => e.exitCode === 2 && /bunyan level/.test(e.message));
    assert.throws(() => parseLevel('61'), (e) => e.exitCode === 2 && /above fatal/.test(e.message));
  });

  it('enables only the probes of that level and above', function () {
    assert.deepStrictEqual(probeNames(40), ['log-warn', 'log-error', 'log-fatal']);
    assert.deepStrictEqual(bpftraceProbeSlots(10), ['log-*', 'none*', 'none*', 'none*', 'none*', 'none*']);
    assert.deepStrictEqual(bpftraceProbeSlots(40), ['log-warn', 'log-error', 'log-fatal', 'none*', 'none*', 'none*']);
    assert.deepStrictEqual(bpftraceProbeSlots(20), ['log-debug', 'log-info', 'log-warn', 'log-error', 'log-fatal', 'none*']);
    assert.strictEqual(dtraceProbeGlob(20), 'log-[!t]*');
    assert.strictEqual(dtraceProbeGlob(40), 'log-[wef]*');
    assert.strictEqual(dtraceProbeGlob(60), 'log-fatal');
  });
});

describe('snoop: targets', function () {
  it('tells \'*\', PID lists and name patterns apart', function () {
    assert.deepStrictEqual(parseTarget('*'), { kind: 'all' });
    assert.deepStrictEqual(parseTarget('4242'), { kind: 'pids', pids: [4242] });
    assert.deepStrictEqual(parseTarget('4242,4343,4242'), { kind: 'pids', pids: [4242, 4343] });
    assert.deepStrictEqual(parseTarget('my-service'), { kind: 'name', pattern: 'my-service' });
    assert.deepStrictEqual(parseTarget('a; rm -rf / `x` $(y)'), { kind: 'name', pattern: 'a; rm -rf / `x` $(y)' });
    assert.throws(() => parseTarget('0'), (e) => e.exitCode === 2);
    assert.throws(() => parseTarget(''), (e) => e.exitCode === 2);
  });

  it('recognises bunyan\'s probe library by the definition it carries, and nothing else', function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snoop-test-'));
    try {
      const bunyan = libraryFor('bunyan', usdt.BUNYAN_PROVIDER.probes);
      const other = libraryFor('restify', [['route-start', 'char *']]);
      const good = path.join(dir, bunyan.fileName);
      fs.writeFileSync(good, bunyan.bytes, { mode: 0o555 });
      fs.writeFileSync(path.join(dir, other.fileName), other.bytes, { mode: 0o555 });
      fs.writeFileSync(path.join(dir, 'x.so'), 'not an ELF');
      assert.strictEqual(libraryDefinition(good).provider, 'bunyan');
      assert.strictEqual(declaresProvider(good, BUNYAN), true);
      const why = (file) => openVerified(path.join(dir, file), BUNYAN).refused;
      assert.match(why(other.fileName), /does not declare the bunyan provider/);
      assert.match(why('x.so'), /not a probe library name/);
      assert.match(why('nodetrace-usdt-missing.so'), /cannot be opened \(ENOENT\)/);
      // The right bytes under another name; other bytes under the right name.
      fs.writeFileSync(path.join(dir, 'nodetrace-usdt-0000000000000000dead.so'), bunyan.bytes);
      assert.match(why('nodetrace-usdt-0000000000000000dead.so'), /name is not the hash of its bytes/);
      const forged = path.join(dir, 'forged', bunyan.fileName);
      fs.mkdirSync(path.dirname(forged));
      fs.writeFileSync(forged, Buffer.concat([bunyan.bytes, Buffer.from('x')]));
      assert.match(why(path.join('forged', bunyan.fileName)), /name is not the hash of its bytes/);
      // Writable by others, a link, a FIFO.
      const gw = path.join(dir, 'gw', bunyan.fileName);
      fs.mkdirSync(path.dirname(gw));
      fs.writeFileSync(gw, bunyan.bytes, { mode: 0o575 });
      fs.chmodSync(gw, 0o575);
      assert.match(why(path.join('gw', bunyan.fileName)), /others may write to it/);
      const ln = path.join(dir, 'ln');
      fs.mkdirSync(ln);
      fs.symlinkSync(good, path.join(ln, bunyan.fileName));
      assert.match(why(path.join('ln', bunyan.fileName)), /symbolic link/);
      const fifo = path.join(dir, 'fifo');
      fs.mkdirSync(fifo);
      require('child_process').execFileSync('mkfifo', [path.join(fifo, bunyan.fileName)]);
      assert.match(why(path.join('fifo', bunyan.fileName)), /not a regular file/, 'refused at once, without blocking');
      if (process.getuid() === 0) {
        // A file in someone else's directory that is not theirs.
        const theirs = path.join(dir, 'theirs');
        fs.mkdirSync(theirs);
        fs.chownSync(theirs, 65534, 65534);
        fs.writeFileSync(path.join(theirs, bunyan.fileName), bunyan.bytes, { mode: 0o555 });
        assert.match(why(path.join('theirs', bunyan.fileName)), /belongs to uid 0, its directory to uid 65534/);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('knows its own ancestors, whose command lines hold the pattern too', function () {
    assert(ancestors().has(process.ppid));
  });
});

describe('snoop: the tracer command line', function () {
  const lib = '/home/u/.cache/nodetrace/usdt/nodetrace-usdt-0123.so';

  it('bpftrace, one process: JSON output, -p, the library, the probes, the PID filter, BPFTRACE_STRLEN=200', function () {
    const plan = planSnoop(BPFTRACE, { kind: 'pids', pids: [4242], libraries: [lib] }, 20);
    assert.strictEqual(plan.output, 'json', 'records cross as JSON-escaped strings');
    assert.deepStrictEqual(plan.argv, ['-f', 'json', '-p', '4242', scriptPath('log-snoop', 'bpftrace'), lib,
      'log-debug', 'log-info', 'log-warn', 'log-error', 'log-fatal', 'none*', '4242', '0', '0', '0', '0', '0', '0', '0']);
    assert.deepStrictEqual(plan.env, { BPFTRACE_STRLEN: '200', __BPFTRACE_NOTIFY_PROBES_ATTACHED: '1' });
    assert.strictEqual(plan.only, null);
  });

  it('bpftrace, \'*\': by path only (processes started later included), no PID filter, through verified descriptors', function () {
    const plan = planSnoop(BPFTRACE, { kind: 'all', pids: [], libraries: [lib] }, 10, { opened: new Map([[lib, 7]]) });
    assert.deepStrictEqual(plan.argv, ['-f', 'json', scriptPath('log-snoop', 'bpftrace'), { temp: '*.so' }, 'log-*', 'none*', 'none*', 'none*', 'none*', 'none*']);
    assert.deepStrictEqual(plan.links, [{ name: '0.so', target: `/proc/${process.pid}/fd/7` }]);
    assert.deepStrictEqual(planSnoop(BPFTRACE, { kind: 'all', pids: [], libraries: [lib] }, 10).links, [{ name: '0.so', target: lib }],
      'the dry run, which opens nothing, links to the file');
  });

  it('bpftrace, several libraries: one glob over a private directory of links to them', function () {
    const plan = planSnoop(BPFTRACE, { kind: 'all', pids: [], libraries: [lib, '/tmp/nodetrace-1000/b.so'] }, 40);
    assert.deepStrictEqual(plan.argv[3], { temp: '*.so' });
    assert.deepStrictEqual(plan.links, [{ name: '0.so', target: lib }, { name: '1.so', target: '/tmp/nodetrace-1000/b.so' }]);
  });

  it('bpftrace, more PIDs than filter slots: no PID filter in the kernel, filtered here', function () {
    const pids = Array.from({ length: PID_SLOTS + 1 }, (_, i) => 1000 + i);
    const plan = planSnoop(BPFTRACE, { kind: 'pids', pids, libraries: [lib] }, 10);
    assert.deepStrictEqual([...plan.only], pids);
    assert.strictEqual(plan.argv.length, 10);
    const two = planSnoop(BPFTRACE, { kind: 'pids', pids: [5, 6], libraries: [lib] }, 10);
    assert(!two.argv.includes('-p'), 'no -p for two processes');
    assert.deepStrictEqual(two.argv.slice(10), ['5', '6', '0', '0', '0', '0', '0', '0']);
  });

  it('bpftrace: the records are stopped before bpftrace is ended, where its -p lets the signal\'s tracepoint run', function () {
    const quiesce = { signal: 'SIGURG', line: 'Tracing stopped.' };
    const newer = { ...BPFTRACE, version: '0.24.0', versionParts: { major: 0, minor: 24, patch: 0 } };
    assert.deepStrictEqual(planSnoop(BPFTRACE, { kind: 'pids', pids: [4242], libraries: [lib] }, 20).quiesce, quiesce);
    assert.strictEqual(planSnoop(newer, { kind: 'pids', pids: [4242], libraries: [lib] }, 20).quiesce, null, '0.24+ filters it out under -p');
    assert.deepStrictEqual(planSnoop(newer, { kind: 'pids', pids: [5, 6], libraries: [lib] }, 20).quiesce, quiesce);
    assert.strictEqual(planSnoop(DTRACE, { kind: 'all', pids: [], libraries: [] }, 40).quiesce, null, 'DTrace reads its buffers to the end');
  });

  it('bpftrace reading whole records (0.23+): 4,180-byte strings, batches whose full maps bpftrace does not report', function () {
    const whole = { ...BPFTRACE, version: '0.23.2', versionParts: { major: 0, minor: 23, patch: 2 } };
    const plan = planSnoop(whole, { kind: 'pids', pids: [4242], libraries: [lib] }, 20);
    assert.strictEqual(plan.scriptFile, scriptPath('log-snoop-whole', 'bpftrace'));
    assert.strictEqual(plan.env.BPFTRACE_MAX_STRLEN, '4180');
    assert.strictEqual(plan.details.pieceBytes, 4179);
    assert.deepStrictEqual(plan.argv.slice(0, 3), ['-f', 'json', '--no-warnings']);
    assert(!planSnoop(BPFTRACE, { kind: 'pids', pids: [4242], libraries: [lib] }, 20).argv.includes('--no-warnings'), '0.17 checks no map update');
  });

  it('DTrace: bunyan<PID> or bunyan* with the level\'s probe glob', function () {
    const d = scriptPath('log-snoop', 'dtrace');
    assert.deepStrictEqual(planSnoop(DTRACE, { kind: 'all', pids: [], libraries: [] }, 40).argv, ['-s', d, '*', 'log-[wef]*']);
    assert.deepStrictEqual(planSnoop(DTRACE, { kind: 'pids', pids: [7, 8], libraries: [] }, 10).argv, ['-s', d, '7', 'log-*', '8']);
  });

  it('the scripts take those arguments', function () {
    const bt = fs.readFileSync(scriptPath('log-snoop', 'bpftrace'), 'utf8');
    assert.match(bt, /usdt:\$1:bunyan:\$2, usdt:\$1:bunyan:\$3/);
    assert.match(bt, /pid == \$15\)\//);
    assert.match(bt, /Hit Ctrl-C to end\./);
    const d = fs.readFileSync(scriptPath('log-snoop', 'dtrace'), 'utf8');
    // No argument in a probe description (D refuses an undefined one there,
    // even with defaultargs): PIDs and level are predicates, any number given.
    assert.doesNotMatch(d.replace(/\/\*[\s\S]*?\*\//g, ''), /^[^/\n{]*:::[^\n{]*\$/m);
    assert.match(d, /\$\$1 == "\*" \|\| \$\$1 == "" \|\| lltostr\(pid\) == \$\$1 \|\| pid == \$3/);
    assert.match(d, /pid == \$9\)\//);
    for (const opt of ['zdefs', 'strsize=4k', 'switchrate=10hz', 'quiet', 'defaultargs']) assert.match(d, new RegExp(`#pragma D option ${opt}\\b`));
  });

  it('formats with bunyan\'s own CLI, argv only', function () {
    const args = bunyanArgs({ output: 'short', color: false });
    assert.match(args[0], /node_modules\/bunyan\/bin\/bunyan$/);
    assert.deepStrictEqual(args.slice(1), ['-o', 'short', '--no-color']);
  });
});

describe('snoop: marks and summary', function () {
  const cut = { type: 'truncated', pid: 4, tid: 5, level: 40, bytesSeen: 4179, prefix: '{"name":"a"', complete: true };

  it('marks a truncated record with a JSON line in JSON modes, a plain line otherwise', function () {
    assert.deepStrictEqual(JSON.parse(truncatedJson(cut)),
      { nodetrace: 'truncated', pid: 4, tid: 5, level: 40, bytes_seen: 4179, prefix: '{"name":"a"' });
    assert.deepStrictEqual(JSON.parse(lineFor(cut, 'raw')).nodetrace, 'truncated');
    assert.deepStrictEqual(JSON.parse(lineFor(cut, 'bunyan')).nodetrace, 'truncated');
    assert.deepStrictEqual(JSON.parse(lineFor({ ...cut, complete: false }, 'json-0')).complete, false);
    assert.match(lineFor(cut, 'long'), /^\[nodetrace\] PID 4: WARN record TRUNCATED: longer than the 4179 bytes/);
    assert(isJsonMode('json-4') && !isJsonMode('short'));
  });

  it('keeps --json output JSON even for a record that is not', function () {
    assert.strictEqual(lineFor({ type: 'record', pid: 1, tid: 1, text: '{"a":1}' }, 'raw'), '{"a":1}');
    assert.deepStrictEqual(JSON.parse(lineFor({ type: 'record', pid: 1, tid: 1, text: 'oops' }, 'raw')),
      { nodetrace: 'not-json', pid: 1, tid: 1, text: 'oops' });
  });

  it('shows a record that claims another process\'s PID for what it is, in every mode', function () {
    const sshd = '{"name":"sshd","hostname":"h","pid":1,"level":30,"msg":"forged","time":"t","v":0}';
    const ev = { type: 'record', pid: 666, tid: 667, text: sshd };
    assert.deepStrictEqual(JSON.parse(lineFor(ev, 'raw')), { nodetrace: 'pid-mismatch', pid: 666, tid: 667, claimed_pid: 1, text: sshd });
    assert.strictEqual(JSON.parse(lineFor(ev, 'bunyan')).nodetrace, 'pid-mismatch');
    assert.match(lineFor(ev, 'long'), /^\[nodetrace\] PID 666 logged a record that claims to be PID 1's: /);
    // In a container a process knows itself by its namespace's PID: that claim is its own.
    const inContainer = { type: 'record', pid: 5000, tid: 5000, text: sshd };
    assert.strictEqual(lineFor(inContainer, 'raw', () => [5000, 1]), sshd);
    assert.strictEqual(lineFor({ ...ev, pid: 1, tid: 1 }, 'raw'), sshd);
  });

  it('says how many records were lost', function () {
    const stats = { records: 10, truncated: 1, incomplete: 2, pids: new Set([1, 2]) };
    assert.strictEqual(summary(stats, { lostRecords: 5, lostEvents: 40 }),
      'nodetrace: 10 records from 2 processes, and 1 too long for the tracer (marked TRUNCATED); the tracer lost 5 records: it could not keep up.');
    assert.match(summary({ ...stats, truncated: 0 }, { lostRecords: 0, lostEvents: 0 }), /; none lost\.$/);
    assert.match(summary(stats, { lostRecords: null, lostEvents: 3 }),
      /the tracer dropped 3 events; 2 records arrived incomplete/);
  });

  it('does not blame the tracer\'s speed for records it discarded as it ended', function () {
    const stats = { records: 5, truncated: 0, incomplete: 0, pids: new Set([1]) };
    assert.strictEqual(summary(stats, { lostRecords: 2, lostEvents: 0 }),
      'nodetrace: 5 records from 1 process; 2 records fired as the snoop ended and the tracer discarded them unread.');
    assert.match(summary(stats, { lostRecords: 1, lostEvents: 0 }),
      /; 1 record fired as the snoop ended and the tracer discarded it unread\.$/);
  });

  it('blames the tracer\'s speed when its batches were full', function () {
    const stats = { records: 5, truncated: 0, incomplete: 0, pids: new Set([1]) };
    assert.strictEqual(summary(stats, { lostRecords: 300, lostEvents: 0, fullBatches: 3 }),
      'nodetrace: 5 records from 1 process; the tracer lost 300 records: it could not keep up (3 batches full).');
  });
});
