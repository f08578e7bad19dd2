'use strict';
// Issue 27.1: nothing a target controls becomes program text. A hostile
// user runs a copy of node from a directory named like a D/bpftrace clause
// (`x*/tick-1s{printf("INJECTED");}/*`): `gc` used to put that path in a
// program comment, and DTrace ran the clause as root. Every command that
// builds a program is planned (-n) against such a process, and gc really
// runs on it, with bpftrace and with DTrace where it is built.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { ROOT, requireTracing, killStragglers } = require('./support/harness');
const { HostileUser, hostileUserUnavailableReason, collect, runNodetrace } = require('./support/hostile-user');
const { findOnPath } = require('../lib/tracer/detect');

const { DTRACE, requireDtrace } = require('./support/dtrace-build');
const CLAUSE = 'x*/tick-1s{printf("INJECTED");}/*';
const TARGETS = path.join(ROOT, 'test', 'targets');
const RECORDER = path.join(ROOT, 'test', 'support', 'recording-tracer.sh');

// The dry run's lines that a shell or a tracer would read as program: the
// program between the heredoc markers (or after `exit`), and every line
// that is not a comment. -> the offending lines.
function programLinesWith(dryRun, word) {
  const bad = [];
  let inProgram = false;
  let afterExit = false;
  for (const line of dryRun.split('\n')) {
    if (line.endsWith("<<'NODETRACE_PROGRAM'")) { inProgram = true; continue; }
    if (line === 'NODETRACE_PROGRAM') { inProgram = false; continue; }
    if (line === 'exit') { afterExit = true; continue; }
    if (!line.includes(word)) continue;
    if (inProgram || afterExit || !line.startsWith('#')) bad.push(line);
  }
  return bad;
}

describe('27.1: a target\'s path never becomes program text @tracer @core', function () {
  this.timeout(420000);
  const user = new HostileUser();
  let target;
  let pid;
  let dir;

  before(async function () {
    requireTracing(this, { also: () => hostileUserUnavailableReason() });
    user.create();
    // The hostile user's own node, in a directory named like a clause.
    dir = path.join(user.home, CLAUSE);
    assert.strictEqual(user.run('/bin/mkdir', ['-p', dir]).status, 0);
    assert.strictEqual(user.run('/bin/cp', [fs.realpathSync(process.execPath), path.join(dir, 'node')]).status, 0);
    assert.strictEqual(user.run('/bin/cp', [path.join(TARGETS, 'gc-churn.js'), path.join(dir, 'gc-churn.js')]).status, 0);
    target = user.start(path.join(dir, 'node'), ['--expose-gc', path.join(dir, 'gc-churn.js')]);
    pid = Number((await collect(target).wait('stdout', /ready (\d+)/, 30000))[1]);
    assert.strictEqual(fs.readlinkSync(`/proc/${pid}/exe`), path.join(dir, 'node'));
  });
  after(async function () {
    await killStragglers.call(this);
    user.remove();
  });

  const dryRuns = [
    ['gc'], ['loop', '--stacks'], ['profile'], ['profile', '--off-cpu'], ['latency'], ['ebadf'],
  ];
  for (const words of dryRuns) {
    it(`${words.join(' ')} -n: the path is in no program and on no line a shell runs (bpftrace)`, async function () {
      const nt = runNodetrace([...words, '-p', String(pid), '-n', '--backend', 'bpftrace']);
      const r = await nt.exit;
      // latency may refuse (the copy's probe points are where they are);
      // a refusal is one line, and still no program.
      assert(r.code === 0 || !/\n\s+at /.test(nt.stderr), `exit ${r.code}\n${nt.stderr}`);
      if (r.code === 0) assert.match(nt.stdout, /would run/);
      assert.deepStrictEqual(programLinesWith(nt.stdout, 'INJECTED'), []);
      assert.doesNotMatch(nt.stderr, /\n[^\n]*INJECTED[^\n]*\{/, 'a line of stderr starting with the clause');
    });
  }

  it('gc -n with DTrace: the path is in no program', async function () {
    requireDtrace(this);
    const nt = runNodetrace(['gc', '-p', String(pid), '-n', '--backend', 'dtrace'], { env: { NODETRACE_DTRACE: DTRACE } });
    const r = await nt.exit;
    assert.strictEqual(r.code, 0, nt.stderr);
    assert.deepStrictEqual(programLinesWith(nt.stdout, 'INJECTED'), []);
  });

  // The tracer is run through test/support/recording-tracer.sh, which keeps
  // a copy of the program file it was given: the text really loaded.
  for (const backend of ['bpftrace', 'dtrace']) {
    it(`gc really run on it with ${backend}: pauses reported, the program loaded holds nothing of the path`, async function () {
      if (backend === 'dtrace') requireDtrace(this);
      const record = fs.mkdtempSync(path.join(os.tmpdir(), 'nt-program-'));
      try {
        const env = {
          [backend === 'dtrace' ? 'NODETRACE_DTRACE' : 'NODETRACE_BPFTRACE']: RECORDER,
          // The bpftrace under test: a matrix cell's tier, or the host's.
          REAL_TRACER: backend === 'dtrace' ? DTRACE : process.env.NODETRACE_BPFTRACE || findOnPath('bpftrace'),
          RECORD_DIR: record,
        };
        const nt = runNodetrace(['gc', '-p', String(pid), '-d', '5', '--backend', backend], { env });
        const r = await nt.exit;
        assert.strictEqual(r.code, 0, `exit ${r.code}\n${nt.stdout}\n${nt.stderr}`);
        assert.match(nt.stdout, /scavenge/);
        assert.doesNotMatch(nt.stdout + nt.stderr, /INJECTED/);
        const loaded = fs.readdirSync(record);
        assert.strictEqual(loaded.length, 1, `programs loaded: ${loaded}`);
        const text = fs.readFileSync(path.join(record, loaded[0]), 'utf8');
        assert.match(text, /IncrementalMarking4Step/, 'the instantiated gc program');
        assert.doesNotMatch(text, /INJECTED|tick-1s|nthostile/);
      } finally {
        fs.rmSync(record, { recursive: true, force: true });
      }
    });
  }
});

module.exports = { programLinesWith };
