'use strict';
// Issue 35: the /proc files of another user's process are that user's to
// fill. A process that maps one page 60,000 times under a 1,000-character
// path (its maps: ~50 MB) and starts with 1.2 MB of arguments is read to
// the bounds of lib/limits.js (PROC_FILE_BYTES): each file past its bound
// said once, in one line naming it and the bound, the report as usual.
// The file is named libnode.so*, so that the process looks like Node and
// ps and doctor read it all.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const { HostileUser, hostileUserUnavailableReason, collect, runNodetrace } = require('./support/hostile-user');
const { findOnPath } = require('../lib/tracer/detect');
const { LIMITS, formatBytes, setLimitSink } = require('../lib/limits');
const { readProcText, procFileBound } = require('../lib/proc/read-bounded');
const { watchPeak } = require('./support/peak-rss');

const TARGET = path.join(__dirname, 'targets', 'many-mappings.py');
const MAPPINGS = 60000;
// Ten arguments of 120,000 bytes (each under Linux's 128 KB per string).
const PADDING = Array.from({ length: 10 }, (_, i) => String(i).repeat(120000));
// Measured with doctor -p, load 18 on 2 cores: 188 MB bounded; 481 MB (and
// 40 s, against 10) when every file was read whole.
const RSS_BOUND_KB = 320 * 1024;

describe('35: /proc files another user fills are read to a bound', function () {
  this.timeout(180000);
  const user = new HostileUser();
  let hostile;
  let honest;

  before(async function () {
    const python = ['/usr/bin/python3', '/usr/local/bin/python3'].find((f) => fs.existsSync(f)) || findOnPath('python3');
    const reason = hostileUserUnavailableReason() || (python ? null : 'needs python3');
    if (reason) {
      if (process.env.CI) throw new Error(`cannot run in CI: ${reason}`);
      this.skip(reason);
    }
    user.create();
    // Three directories of 250 characters: a line of maps is ~850 bytes.
    const dir = path.join(user.home, ...['d', 'e', 'f'].map((c) => c.repeat(250)));
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'libnode.so.1');
    fs.writeFileSync(file, Buffer.alloc(4096));
    const h = user.start(python, [TARGET, file, String(MAPPINGS), ...PADDING], { stdin: 'pipe' });
    hostile = Number((await collect(h).wait('stdout', /ready (\d+)/, 60000))[1]);
    honest = spawn(process.execPath, ['-e', 'console.log("ready " + process.pid); setInterval(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'pipe'] });
    await collect(honest).wait('stdout', /ready/, 30000);
  });

  after(function () {
    if (honest) honest.kill('SIGKILL');
    user.remove();
  });

  const overLines = (stderr) => stderr.split('\n').filter((l) => l.startsWith(`nodetrace: /proc/${hostile}/`));
  const expected = (name) => {
    const bound = formatBytes(LIMITS.PROC_FILE_BYTES[name]);
    return `nodetrace: /proc/${hostile}/${name}: larger than ${bound}: only its first ${bound} was read`;
  };

  it('doctor -p ends within its bounds, says maps and cmdline once each, and reports the process', async function () {
    const t0 = Date.now();
    const nt = runNodetrace(['doctor', '-p', String(hostile), '--json']);
    const peak = watchPeak(nt.child.pid);
    await nt.exit;
    const peakKb = peak.stop();
    const seconds = (Date.now() - t0) / 1000;
    assert.ok(seconds < 60, `doctor took ${seconds} s`);
    assert.ok(peakKb < RSS_BOUND_KB, `doctor peaked at ${peakKb} kB`);
    assert.deepStrictEqual(overLines(nt.stderr).sort(), [expected('cmdline'), expected('maps')], nt.stderr);
    assert.match(nt.stdout, new RegExp(`"pid": ?${hostile}\\b`));
  });

  it('ps lists it (its command cut at the bound) and the honest node as usual', async function () {
    const nt = runNodetrace(['ps', '--json']);
    const end = await nt.exit;
    assert.strictEqual(end.code, 0, nt.stderr);
    assert.deepStrictEqual(overLines(nt.stderr).sort(), [expected('cmdline'), expected('maps')], nt.stderr);
    const rows = JSON.parse(nt.stdout).processes;
    const row = rows.find((r) => r.pid === hostile);
    assert.ok(row, 'the hostile process is listed');
    assert.ok(row.command.length <= LIMITS.PROC_FILE_BYTES.cmdline, `${row.command.length} characters`);
    assert.ok(row.command.includes('many-mappings.py'), row.command.slice(0, 200));
    const own = rows.find((r) => r.pid === honest.pid);
    assert.strictEqual(own.node, process.versions.node);
    assert.deepStrictEqual([own.commands.latency.can, own.commands.profile.can], ['yes', 'yes']);
  });
});

describe('35: readProcText (lib/proc/read-bounded.js)', function () {
  let dir;
  let said;
  let restore;
  before(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-proc-bounds-')); });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  beforeEach(() => { said = []; restore = setLimitSink((l) => said.push(l)); });
  afterEach(() => setLimitSink(restore));

  it('reads a file of exactly its bound whole, silently', function () {
    const file = path.join(dir, 'maps');
    fs.writeFileSync(file, 'a\nbb\n');
    assert.strictEqual(readProcText(file, { bound: 5 }), 'a\nbb\n');
    assert.deepStrictEqual(said, []);
  });

  it('past its bound: up to the last whole line (or NUL-ended string), said once', function () {
    const file = path.join(dir, 'maps');
    fs.writeFileSync(file, 'line one\nline two\nline three\n');
    assert.strictEqual(readProcText(file, { bound: 20 }), 'line one\nline two\n');
    assert.strictEqual(readProcText(file, { bound: 20 }), 'line one\nline two\n');
    fs.writeFileSync(path.join(dir, 'cmdline'), 'node\0script.js\0' + 'x'.repeat(100));
    assert.strictEqual(readProcText(path.join(dir, 'cmdline'), { bound: 64 }), 'node\0script.js\0');
    assert.deepStrictEqual(said, [
      `nodetrace: ${file}: larger than 20 bytes: only its first 20 bytes was read`,
      `nodetrace: ${dir}/cmdline: larger than 64 bytes: only its first 64 bytes was read`,
    ]);
  });

  it('takes its bound from lib/limits.js by the file\'s name; null when unreadable', function () {
    assert.strictEqual(procFileBound('/proc/1/task/1/status'), LIMITS.PROC_FILE_BYTES.status);
    assert.strictEqual(procFileBound('/proc/1/maps'), LIMITS.PROC_FILE_BYTES.maps);
    assert.strictEqual(procFileBound('/proc/1/smaps'), LIMITS.PROC_FILE_BYTES.other);
    assert.strictEqual(readProcText(path.join(dir, 'absent')), null);
  });
});
