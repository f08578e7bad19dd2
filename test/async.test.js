'use strict';
// `nodetrace async` end to end @tracer: test/targets/async-mix.js does known
// counts of fs.read, dns.lookup, zlib.gzip, crypto.pbkdf2 and setTimeout,
// and serves HTTP requests this test makes; the traced per-kind counts are
// held to what the target counted itself. On this machine's node (@core)
// and on each Node build of the matrix; a target that leaks TCP connections
// is said to be growing, and nothing else is.
const assert = require('assert');
const { spawn } = require('child_process');
const { requireTracing, startTarget, stopTarget, nodetrace, killStragglers } = require('./support/harness');
const { BUILDS, NODE18, missingReason } = require('./support/node-builds');
const { ATTACH_MS, lineFrom, traceWhile, traceMix, checkCounts } = require('./support/async-checks');

// --stacks on a target that leaks loopback connections from a named
// function (and reads its file, released): the dry run without --stacks
// walks no stack; the client end of each connection is attributed to that
// function, together exactly as many as the target opened.
async function traceLeakStacks(node) {
  const target = await startTarget('async-mix.js', { node, env: { LEAK: '20' } });
  try {
    // Without --stacks the program walks no stack (its @stacks part left out).
    const dry = await nodetrace(['async', '-p', String(target.pid), '-n'], { timeoutMs: 120000 });
    assert.strictEqual(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /the @stacks part left out/);
    assert.match(dry.stdout, /@created\[\$kind\] = count\(\);/, 'the program itself is shown');
    assert.doesNotMatch(dry.stdout, /ustack|@live_stack|reg\("bp"\)/);
    const dryStacks = await nodetrace(['async', '-p', String(target.pid), '-n', '--stacks'], { timeoutMs: 120000 });
    assert.strictEqual(dryStacks.code, 0, dryStacks.stderr);
    // With it, the script runs whole (its @stacks part in).
    assert.match(dryStacks.stdout, /\/d-scripts\/async\.bt /);
    assert.doesNotMatch(dryStacks.stdout, /part left out/);
    const r = await traceWhile(target.pid, async () => {
      target.kill('SIGUSR2');
      await new Promise((res) => setTimeout(res, 3000));
      const done = lineFrom(target, 'done');
      target.kill('SIGUSR2');
      return JSON.parse(await done);
    }, ['--stacks']);
    assert.strictEqual(r.code, 0, r.stderr);
    const json = JSON.parse(r.stdout);
    const { opened } = r.truth;
    // 20 a second for 3 s; timers fire late on a loaded host: a handful is enough.
    assert(opened >= 3, `the target opened ${opened} connections`);
    const kind = (name) => json.kinds.find((k) => k.name === name);
    const tcp = kind('TCPWRAP').live_stacks;
    const show = JSON.stringify(tcp, null, 1).slice(0, 6000);
    // The client end of each: created under openLeakedConnection, named
    // as lib/v8 names frames (`name file:line:column`); however many
    // stacks V8's tiers made of it, together exactly what the target opened.
    const leaking = tcp.stacks.filter((s) => s.frames.some((f) => /^openLeakedConnection \S+async-mix\.js:\d+:\d+$/.test(f)));
    assert(leaking.length >= 1, show);
    assert.strictEqual(tcp.other_stacks, 0, show);
    assert.strictEqual(leaking.reduce((n, s) => n + s.count, 0), opened, show);
    // The server end of each: created by node's accept (onconnection), no
    // frame of that function: every live TCPWRAP has its stack (both ends).
    assert.strictEqual(tcp.alive, 2 * opened, show);
    assert.strictEqual(tcp.without_stack, 0);
    // The file reads were released: none alive, none kept.
    const fsKind = kind('FSREQCALLBACK');
    assert.strictEqual(fsKind.created, r.truth['fs.read']);
    assert.strictEqual(fsKind.live_stacks.alive, 0, JSON.stringify(fsKind.live_stacks));
    console.log(`      ${opened} opened: ${tcp.alive} TCPWRAPs alive in ${tcp.stacks.length} stacks, ${leaking.length} of them under openLeakedConnection`);
  } finally {
    stopTarget(target);
  }
}

describe('nodetrace async @tracer', function () {
  this.timeout(ATTACH_MS + 240000);
  before(function () { requireTracing(this); });
  afterEach(killStragglers);

  it('counts each kind of operation the target counted itself @core', async function () {
    const r = await traceMix(process.execPath);
    checkCounts(r);
    console.log(`      ${r.json.kinds.map((k) => `${k.name} ${k.created}`).join(', ')}`);
  });

  it('reports what was gathered, exit 0, when the target exits mid-trace', async function () {
    const target = await startTarget('async-mix.js', { env: { ROUNDS: '20', EXIT: '1' } });
    const r = await nodetrace(['async', '-p', String(target.pid), '--json'], {
      timeoutMs: ATTACH_MS + 60000,
      onSpawn: (child) => {
        let err = '';
        child.stderr.on('data', (c) => {
          err += c;
          if (/tracing the asynchronous operations/.test(err) && !child.told) { child.told = true; target.kill('SIGUSR2'); }
        });
      },
    });
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stderr, /exited/);
    const fsKind = JSON.parse(r.stdout).kinds.find((k) => k.name === 'FSREQCALLBACK');
    assert(fsKind && fsKind.created === 20, r.stdout);
  });

  it('refuses a process that is not Node in one line', async function () {
    const other = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const r = await nodetrace(['async', '-p', String(other.pid), '-d', '1']);
      assert.notStrictEqual(r.code, 0);
      assert.match(r.stderr, /is not a Node process/);
      assert.strictEqual(r.stderr.trim().split('\n').length <= 2, true, r.stderr);
      assert(!/\n\s+at /.test(r.stderr), `no stack trace: ${r.stderr}`);
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('calls a kind that leaks TCP connections growing, and no other', async function () {
    const target = await startTarget('async-mix.js', { env: { LEAK: '20' } });
    try {
      const SECONDS = 8;
      const r = await nodetrace(['async', '-p', String(target.pid), '-d', String(SECONDS), '--json'], {
        timeoutMs: ATTACH_MS + 60000,
        onSpawn: (child) => {
          let err = '';
          child.stderr.on('data', (c) => {
            err += c;
            if (/tracing the asynchronous operations/.test(err) && !child.leaking) { child.leaking = true; target.kill('SIGUSR2'); }
          });
        },
      });
      assert.strictEqual(r.code, 0, r.stderr);
      const json = JSON.parse(r.stdout);
      const tcp = json.kinds.find((k) => k.name === 'TCPWRAP');
      assert(tcp && tcp.growing, `TCPWRAP not growing: ${JSON.stringify(tcp && tcp.alive_each_second)}`);
      // Both ends of each connection stay; 20 a second for SECONDS (a timer
      // fires late on a loaded host: a quarter of that is the floor).
      assert(tcp.alive_delta >= (20 * SECONDS) / 4, `${tcp.alive_delta} TCPWRAPs alive`);
      const others = json.kinds.filter((k) => k.growing && k.name !== 'TCPWRAP').map((k) => k.name);
      assert.deepStrictEqual(others, [], 'only TCPWRAP grows');
    } finally {
      stopTarget(target);
    }
  });

  it('--stacks: the connections left open are where the function that opened them made them', async function () {
    await traceLeakStacks(process.execPath);
  });
});

for (const build of [NODE18, ...BUILDS.filter((b) => b.name !== 'host')]) {
  describe(`nodetrace async on ${build.label} @tracer`, function () {
    this.timeout(ATTACH_MS + 240000);
    before(function () { requireTracing(this, { also: () => missingReason(build) }); });
    afterEach(killStragglers);

    it('counts each kind of operation the target counted itself', async function () {
      checkCounts(await traceMix(build.node));
    });

    it('--stacks: the connections left open are where the function that opened them made them', async function () {
      await traceLeakStacks(build.node);
    });
  });
}
