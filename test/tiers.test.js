'use strict';
// Which bpftrace runs (NODETRACE_BPFTRACE) and what nodetrace chooses for
// each version (lib/tracer/capabilities.js); the real tiers themselves run
// the @core integration tests through scripts/test-matrix.sh.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { detectBpftrace, chooseTracer, parseBpftraceVersion } = require('../lib/tracer/detect');
const caps = require('../lib/tracer/capabilities');
const { nodetrace, ROOT, requireTracing } = require('./support/harness');

const FAKE = path.join(__dirname, 'support', 'versioned-bpftrace.sh');
const bpftraceOf = (version) => ({ name: 'bpftrace', path: '/x/bpftrace', version, versionParts: parseBpftraceVersion('bpftrace v' + version) });

describe('choosing the bpftrace (NODETRACE_BPFTRACE)', function () {
  afterEach(function () { delete process.env.FAKE_BPFTRACE_VERSION; });

  it('runs the one it names, and reads its version from --version', function () {
    process.env.FAKE_BPFTRACE_VERSION = '0.23.2';
    const t = detectBpftrace({ NODETRACE_BPFTRACE: FAKE });
    assert.deepStrictEqual([t.available, t.path, t.version, t.versionParts.minor, t.chosenBy], [true, FAKE, '0.23.2', 23, 'NODETRACE_BPFTRACE']);
  });

  it('says so when it names no executable file, rather than falling back to another bpftrace', function () {
    const t = detectBpftrace({ NODETRACE_BPFTRACE: path.join(__dirname, 'no-such-bpftrace') });
    assert.strictEqual(t.available, false);
    assert.match(t.reason, /NODETRACE_BPFTRACE=.*no-such-bpftrace is not an executable file/);
    assert.strictEqual(detectBpftrace({ NODETRACE_BPFTRACE: __dirname }).available, false, 'a directory');
  });

  it('says a bpftrace that does not answer in time is slow, never that there is none', function () {
    process.env.FAKE_BPFTRACE_DELAY = '2';
    let t;
    try {
      t = detectBpftrace({ NODETRACE_BPFTRACE: FAKE }, { timeoutMs: 300 });
    } finally {
      delete process.env.FAKE_BPFTRACE_DELAY;
    }
    assert.strictEqual(t.available, false);
    assert.match(t.reason, /--version did not answer within 0\.3 s \(a heavily loaded host\?\); try again$/);
  });

  it('puts bpftrace before dtrace when set; unset or empty, dtrace first as before', function () {
    const seen = [];
    const detectors = {
      dtrace: () => { seen.push('dtrace'); return { name: 'dtrace', available: true }; },
      bpftrace: () => { seen.push('bpftrace'); return { name: 'bpftrace', available: true }; },
    };
    assert.strictEqual(chooseTracer(undefined, detectors, { NODETRACE_BPFTRACE: FAKE }).tracer.name, 'bpftrace');
    assert.strictEqual(chooseTracer(undefined, detectors, { NODETRACE_BPFTRACE: '' }).tracer.name, 'dtrace');
    assert.strictEqual(chooseTracer(undefined, detectors, {}).tracer.name, 'dtrace');
    assert.strictEqual(chooseTracer('dtrace', detectors, { NODETRACE_BPFTRACE: FAKE }).tracer.name, 'dtrace', '--backend wins');
  });

  it('a dry run prints the chosen binary and its version', async function () {
    const r = await nodetrace(['latency', '-p', String(process.pid), '--force', '-n'],
      { env: { NODETRACE_BPFTRACE: FAKE, FAKE_BPFTRACE_VERSION: '0.27.1' } });
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, /^# bpftrace 0\.27\.1 would run/);
    // 0.27: latency runs with --no-warnings (lib/tracer/capabilities.js quietMapHelperArgs).
    const command = r.stdout.split('\n').find((l) => l.includes(FAKE));
    assert.ok(command.includes(' ' + FAKE + ' --no-warnings -p ' + process.pid + ' '), r.stdout);
  });

  it('doctor names the version, who chose it, and what each command does with it', async function () {
    const r = await nodetrace(['doctor', '--json'], { env: { NODETRACE_BPFTRACE: FAKE, FAKE_BPFTRACE_VERSION: '0.17.0' } });
    const checks = JSON.parse(r.stdout);
    const byName = Object.fromEntries(checks.map((c) => [c.name, c]));
    assert.match(byName.bpftrace.detail,
      /^bpftrace 0\.17\.0 at .*versioned-bpftrace\.sh \(chosen by NODETRACE_BPFTRACE\)$/);
    assert.match(byName.latency.detail, /filtered in the program/);
    assert.match(byName.snoop.detail, /199-byte pieces/);
    assert.ok(byName.ebadf);
    const newer = JSON.parse((await nodetrace(['doctor', '--json'], { env: { NODETRACE_BPFTRACE: FAKE, FAKE_BPFTRACE_VERSION: '0.27.1' } })).stdout);
    assert.match(newer.find((c) => c.name === 'latency').detail, /filtered in the kernel/);
  });
});

describe('per-version choices (lib/tracer/capabilities.js)', function () {
  const v17 = bpftraceOf('0.17.0');
  const v20 = bpftraceOf('0.20.2');
  const v23 = bpftraceOf('0.23.2');
  const v27 = bpftraceOf('0.27.1');

  it('the string limit by the name each version reads, with no deprecated name from 0.23', function () {
    assert.deepStrictEqual(caps.stringLimitEnv(v17, 200), { BPFTRACE_STRLEN: '200' });
    assert.deepStrictEqual(caps.stringLimitEnv(v20, 200), { BPFTRACE_STRLEN: '200', BPFTRACE_MAX_STRLEN: '200' });
    assert.deepStrictEqual(caps.stringLimitEnv(v23, 4096), { BPFTRACE_MAX_STRLEN: '4096' });
    assert.deepStrictEqual(caps.stringLimitEnv(v27, 4096), { BPFTRACE_MAX_STRLEN: '4096' });
    assert.deepStrictEqual(caps.stringLimitEnv({ name: 'dtrace', version: '2.0' }, 4096), {});
    assert.deepStrictEqual([caps.maxStringBytes(v17), caps.maxStringBytes(v23) > 4096], [200, true]);
    assert.deepStrictEqual([caps.stringTrailerEnv(v17), caps.stringTrailerEnv(v27)], [{}, { BPFTRACE_STR_TRUNC_TRAILER: '' }]);
  });

  it('the map size by the name each version reads: the old name before 0.20, the new from 0.20 (0.24 ignores the old)', function () {
    assert.deepStrictEqual(caps.mapKeysEnv(v17, 65536), { BPFTRACE_MAP_KEYS_MAX: '65536' });
    for (const v of [v20, v23, v27]) assert.deepStrictEqual(caps.mapKeysEnv(v, 65536), { BPFTRACE_MAX_MAP_KEYS: '65536' }, v.version);
    assert.deepStrictEqual(caps.mapKeysEnv({ name: 'dtrace', version: '2.0' }, 65536), {});
  });

  it('NODETRACE_MAP_KEYS sets the bound a command asks for, never under its floor; a bad value is a usage error', function () {
    assert.strictEqual(caps.mapKeysFor(65536, { env: {} }), 65536);
    assert.strictEqual(caps.mapKeysFor(65536, { env: { NODETRACE_MAP_KEYS: '1024' } }), 1024);
    assert.strictEqual(caps.mapKeysFor(65536, { env: { NODETRACE_MAP_KEYS: '1024' }, floor: 32768 }), 32768);
    assert.strictEqual(caps.mapKeysFor(65536, { env: { NODETRACE_MAP_KEYS: '262144' } }), 262144);
    for (const bad of ['1023', '16777217', '1e5', '-5', '4096 ', 'lots']) {
      assert.throws(() => caps.mapKeysFor(65536, { env: { NODETRACE_MAP_KEYS: bad } }),
        (e) => e.exitCode === 2 && /^NODETRACE_MAP_KEYS must be a whole number from 1024 to 16777216, not "/.test(e.message), bad);
    }
  });

  it('PID filtering of uprobes in the kernel from 0.20; SIGUSR1 maps before 0.22; strict attach and new JSON from 0.24', function () {
    assert.deepStrictEqual([v17, v20, v23, v27].map(caps.filtersUprobesByPid), [false, true, true, true]);
    assert.deepStrictEqual([v17, v20, v23, v27].map(caps.printsMapsOnSigusr1), [true, true, false, false]);
    assert.deepStrictEqual([v17, v20, v23, v27].map(caps.failsIfAnyProbeMissing), [false, false, false, true]);
    assert.deepStrictEqual([v17, v23, v27].map((t) => caps.jsonOutput(t).nullForUnknownTypes), [false, false, true]);
  });

  it('uprobes on a process in another mount namespace: no -p on any version (it would rewrite the paths); DTrace always -p', function () {
    assert.deepStrictEqual([v17, v20, v23, v27].map((t) => caps.uprobesWithPid(t, { otherMounts: true })),
      [false, false, false, false]);
    assert.deepStrictEqual([v17, v20, v23, v27].map((t) => caps.uprobesWithPid(t, { otherMounts: false })),
      [true, true, true, true]);
    assert.strictEqual(caps.uprobesWithPid({ name: 'dtrace', version: '2.0' }, { otherMounts: true }), true);
  });

  it('latency on a process that sees nodetrace\'s mounts: map_files and -p', function () {
    const latency = require('../lib/commands/latency');
    const p = latency.plan({ pid: String(process.pid), force: true }, v23);
    assert.strictEqual(p.argv[p.argv.indexOf('-p') + 1], String(process.pid));
    assert.match(p.argv[p.argv.indexOf('-p') + 3], new RegExp(`^/proc/${process.pid}/map_files/[0-9a-f]+-[0-9a-f]+$`));
  });
});

describe('the bpftrace tiers @tracer', function () {
  const cache = process.env.NODETRACE_CACHE || '/var/cache/nodetrace';
  for (const [suite, version] of [['trixie', '0.23.2'], ['sid', '0.27.1']]) {
    it(`${suite}: scripts/bpftrace-tier.sh gives a bpftrace ${version} that runs on this host`, function () {
      const wrapper = path.join(cache, 'bpftrace', suite, 'bpftrace');
      if (!fs.existsSync(wrapper)) {
        if (process.env.CI) assert.fail(`no ${suite} tier: run scripts/bpftrace-tier.sh ${suite}`);
        this.skip();
      }
      const made = execFileSync(path.join(ROOT, 'scripts', 'bpftrace-tier.sh'), [suite], { encoding: 'utf8' }).trim();
      assert.strictEqual(made, wrapper, 'cached: the same wrapper, nothing made again');
      assert.strictEqual(detectBpftrace({ NODETRACE_BPFTRACE: made }).version, version);
      // It runs, and shows as bpftrace (tests and users find it by that name).
      const out = execFileSync(made, ['-e', 'BEGIN { printf("tier %d %s\\n", 1 + 1, comm); exit(); }'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 120000 });
      assert.match(out, /^tier 2 bpftrace$/m);
    });
  }
});

// The bpftrace under test (a tier in its cell) given maps larger than its
// default 4,096 keys as nodetrace asks for them: 0.27 silently ignores the
// name 0.17 reads, and a full map drops what it would hold without a word.
describe('the map size nodetrace asks for, on the bpftrace under test @tracer @core', function () {
  before(function () { requireTracing(this); });

  it('a map asked for 8,192 keys holds 6,000 (the default holds 4,096)', function () {
    const tracer = detectBpftrace();
    // 6,000 failed close() calls of this test's own child, each a key.
    const program = 'tracepoint:syscalls:sys_exit_close /pid == cpid/ { @n = @n + 1; @keys[@n] = 1; } END { clear(@n); }';
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-keys-'));
    const script = path.join(dir, 'close-many.js');
    fs.writeFileSync(script, 'for (let i = 0; i < 6000; i++) try { require("fs").closeSync(1e6); } catch (e) {}\n');
    const child = `${process.execPath} ${script}`;
    const out = execFileSync(tracer.path, ['-e', program, '-c', child], {
      encoding: 'utf8', env: { ...process.env, ...caps.mapKeysEnv(tracer, 8192) }, stdio: ['ignore', 'pipe', 'ignore'], timeout: 120000, maxBuffer: 64 * 1024 * 1024,
    });
    fs.rmSync(dir, { recursive: true, force: true });
    const keys = out.split('\n').filter((l) => l.startsWith('@keys[')).length;
    assert.ok(keys >= 6000, `bpftrace ${tracer.version} kept ${keys} keys of 6,000+ (${JSON.stringify(caps.mapKeysEnv(tracer, 8192))})`);
  });
});

describe('raw user stacks on each bpftrace (ebadf)', function () {
  const { OutputParser } = require('../lib/ebadf/parse');
  const { planEbadf } = require('../lib/ebadf/program');
  const framesOf = (lines) => {
    const events = [];
    const p = new OutputParser((e) => events.push(e));
    for (const l of ['HIT pid=7 tid=7 errno=9 ns=1 probe=tracepoint:syscalls:sys_exit_close comm=\\x78\\x00', ...lines, 'END pid=7']) p.line(l);
    return events.find((e) => e.type === 'stack').frames;
  };

  it('asks each version for addresses by the name it reads', function () {
    const plan = (version) => planEbadf({ tracer: bpftraceOf(version), mode: 'stop', pid: 4242, syscalls: ['close'],
      errnos: [{ name: 'EBADF', number: 9 }], count: 1 }).env;
    // Only the stack settings (plans carry others, such as the attach notice).
    const stackEnv = (env) => Object.fromEntries(Object.entries(env)
      .filter(([k]) => /USER_SYMBOLS|STACK_MODE/.test(k)));
    assert.deepStrictEqual(stackEnv(plan('0.17.0')), { BPFTRACE_NO_USER_SYMBOLS: '1' });
    assert.deepStrictEqual(stackEnv(plan('0.23.2')), { BPFTRACE_STACK_MODE: 'raw' });
    assert.deepStrictEqual(stackEnv(plan('0.27.1')), { BPFTRACE_STACK_MODE: 'raw' });
  });

  it('reads 0.17\'s 0x frames and 0.23+\'s bare hex ending in 0 (as printed here) the same way', function () {
    assert.deepStrictEqual(framesOf(['        0x7f0f97f16350', '        0x55d0c0a1b2c3']), ['0x7f0f97f16350', '0x55d0c0a1b2c3']);
    assert.deepStrictEqual(framesOf(['7f9b20316350', '55D0C0A1B2C3', '0']), ['0x7f9b20316350', '0x55d0c0a1b2c3']);
    assert.deepStrictEqual(framesOf(['        __GI___write+16', '        libc.so.6`close+0x10']), ['__GI___write+16', 'libc.so.6`close+0x10']);
  });
});

describe('snoop\'s reading of records by bpftrace version', function () {
  const { planSnoop, SCRIPT, WHOLE_SCRIPT } = require('../lib/snoop/plan');
  const lib = '/tmp/nodetrace-1000/nodetrace-usdt-x.so';
  const one = (version) => planSnoop(bpftraceOf(version), { kind: 'pids', pids: [4242], libraries: [lib], describe: 'PID 4242' }, 20);

  it('0.17: 199-byte pieces (log-snoop.bt) under BPFTRACE_STRLEN=200', function () {
    const p = one('0.17.0');
    assert.deepStrictEqual([p.script, p.details.pieceBytes, p.env.BPFTRACE_STRLEN, p.env.BPFTRACE_MAX_STRLEN], [SCRIPT, 199, '200', undefined]);
    assert.ok(p.argv.includes(lib), 'the library by its path');
  });

  it('0.23 and 0.27: one string of 4,180 bytes (log-snoop-whole.bt), no deprecated name, no trailer', function () {
    for (const v of ['0.23.2', '0.27.1']) {
      const p = one(v);
      assert.deepStrictEqual([p.script, p.details.pieceBytes, p.env.BPFTRACE_MAX_STRLEN,
        p.env.BPFTRACE_STR_TRUNC_TRAILER, p.env.BPFTRACE_STRLEN],
        [WHOLE_SCRIPT, 4179, '4180', '', undefined], v);
    }
  });

  it('0.27 names one process\'s library through /proc/PID/root (a host path with -p attached every probe twice)', function () {
    assert.ok(one('0.27.1').argv.includes('/proc/4242/root' + lib));
    assert.ok(one('0.23.2').argv.includes(lib));
  });

  it('log-snoop-whole.bt keeps log-snoop.bt\'s arguments and protocol', function () {
    const read = (name) => fs.readFileSync(path.join(ROOT, 'd-scripts', name + '.bt'), 'utf8');
    const probes = (text) => text.match(/^usdt:[^\n]*\n[^\n]*\n\/[^\n]*\n[^\n]*\//m)[0];
    assert.strictEqual(probes(read(WHOLE_SCRIPT)), probes(read(SCRIPT)), 'the same probes and PID filter');
    // The reader (lib/snoop/reassemble.js) takes both: the same batch maps,
    // the same batch probe printing them, the same END.
    const block = (text, head) => text.match(new RegExp(`^${head}\\n\\{\\n[\\s\\S]*?\\n\\}\\n`, 'm'))[0];
    for (const head of ['interval:ms:100', 'END']) {
      assert.strictEqual(block(read(WHOLE_SCRIPT), head), block(read(SCRIPT), head), head);
    }
    for (const line of ['@pieces0[pid, tid, $id, ', '@pieces1[pid, tid, $id, ', '@cut0[pid, tid, $id] = ', '@cut1[pid, tid, $id] = ', 'Hit Ctrl-C to end.']) {
      assert.ok(read(WHOLE_SCRIPT).includes(line), line);
    }
  });
});
