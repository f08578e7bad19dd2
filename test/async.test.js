'use strict';
// `nodetrace async` end to end @tracer: test/targets/async-mix.js does known
// counts of fs.read, dns.lookup, zlib.gzip, crypto.pbkdf2 and setTimeout,
// and serves HTTP requests this test makes; the traced per-kind counts are
// held to what the target counted itself. On this machine's node (@core)
// and on each Node build of the matrix; a target that leaks TCP connections
// is said to be growing, and nothing else is.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const { ROOT, requireTracing, startTarget, stopTarget, nodetrace, killStragglers } = require('./support/harness');
const { nodeBuilds, requireBuild, missingReason } = require('./support/node-builds');
const { ATTACH_MS, BUSY_MS, lineFrom, traceWhile, traceMix, checkCounts, checkCallbacksFitLoop, onlyKind } = require('./support/async-checks');

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
    // Each AsyncWrap function by its address in OBJECT, the comments naming each.
    assert.match(dry.stdout, new RegExp(`/async\\.bt \\S+ ${target.pid}( 0x[0-9a-f]+){5} \\d+ \\d+ `));
    assert.match(dry.stdout, /^# \$3 RESET node::AsyncWrap::AsyncReset\(/m);
    const dryStacks = await nodetrace(['async', '-p', String(target.pid), '-n', '--stacks'], { timeoutMs: 120000 });
    assert.strictEqual(dryStacks.code, 0, dryStacks.stderr);
    // With it, the @stacks part is in; no register hook here: the @hook part out.
    assert.match(dryStacks.stdout, /@live_stack\[arg0\] = ustack;/);
    assert.doesNotMatch(dryStacks.stdout, /@stacks part left out/);
    assert.match(dryStacks.stdout, /the @hook part left out, no register hook/);
    assert.doesNotMatch(dryStacks.stdout, /usdt:/, 'without the hook: no USDT probe');
    // -p all the same (the process sees nodetrace's mounts): from bpftrace
    // 0.20 it keeps the uprobes out of every other node process.
    assert.match(dryStacks.stdout, new RegExp(`bpftrace -p ${target.pid} `));
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
    const leaking = tcp.stacks.filter((s) =>
      s.frames.some((f) => /^openLeakedConnection \S+async-mix\.js:\d+:\d+$/.test(f)));
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

  // Issue 35: a full map said, not silent. 3,000 fs.stat calls alive at
  // once against a @born of 1,024 keys (NODETRACE_MAP_KEYS): the counts
  // stay whole, the waits past the bound are said as not measured.
  it('says when @born filled, how many it did not keep and how to raise it; the counts still whole @core', async function () {
    const KEYS = 1024;
    const target = await startTarget('async-burst.js');
    try {
      const r = await traceWhile(target.pid, async () => {
        const done = lineFrom(target, 'done');
        target.kill('SIGUSR2');
        return JSON.parse(await done);
      }, [], { NODETRACE_MAP_KEYS: String(KEYS) });
      assert.strictEqual(r.code, 0, r.stderr);
      const burst = r.truth.issued;
      const fsKind = JSON.parse(r.stdout).kinds.find((k) => k.name === 'FSREQCALLBACK');
      assert.strictEqual(fsKind.created, burst, r.stdout.slice(0, 2000));
      const m = /^nodetrace: warning: the tracer's map of operations alive at once \(@born\) filled at 1,024 keys: ([\d,]+) more were not kept, their wait for a first callback was not measured; raise the bound with NODETRACE_MAP_KEYS=N \(now 1,024\)$/m.exec(r.stderr);
      assert(m, r.stderr);
      const refused = Number(m[1].replace(/,/g, ''));
      // All alive at once: at least those past the bound, at most all of them.
      assert(refused >= burst - KEYS && refused <= burst, `${refused} of ${burst} not kept`);
      console.log(`      ${burst} alive at once, ${KEYS} keys: ${refused} said not kept`);
    } finally {
      stopTarget(target);
    }
  });

  // Issue 35: --stacks' map of JavaScript frames (@js_sfi, keys never
  // deleted) filled, said: 16,000 operations alive at once, each created
  // from a function of its own, against the 32,768 keys --stacks takes at
  // least; the counts whole, every live operation kept with its stack.
  it('--stacks: says when the map of creation stacks\' JavaScript frames filled; the counts still whole', async function () {
    const KEYS = 32768;
    const target = await startTarget('async-burst.js', { env: { BURST: '16000', CALLERS: '16000' } });
    try {
      const r = await traceWhile(target.pid, async () => {
        const done = lineFrom(target, 'done');
        target.kill('SIGUSR2');
        return JSON.parse(await done);
      }, ['--stacks'], { NODETRACE_MAP_KEYS: String(KEYS) });
      assert.strictEqual(r.code, 0, r.stderr);
      const fsKind = JSON.parse(r.stdout).kinds.find((k) => k.name === 'FSREQCALLBACK');
      assert.strictEqual(fsKind.created, r.truth.issued, r.stdout.slice(0, 2000));
      const m = /^nodetrace: warning: the tracer's map of JavaScript frames of creation stacks \(@js_sfi\) filled at 32,768 keys: ([\d,]+) more were not kept, the stacks through them were cut there; trace for less time, or raise the bound with NODETRACE_MAP_KEYS=N \(now 32,768\)$/m.exec(r.stderr);
      assert(m, r.stderr);
      assert.doesNotMatch(r.stderr, /\(@born\)|\(@function_ns\)/);
      console.log(`      ${r.truth.issued} creation stacks of their own, ${KEYS} keys: ${m[1]} chains said cut`);
    } finally {
      stopTarget(target);
    }
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
    assert.strictEqual(r.code, 0, `${r.stderr}\nstdout: ${r.stdout.slice(0, 400)}`);
    assert.match(r.stderr, /exited/);
    const fsKind = JSON.parse(r.stdout).kinds.find((k) => k.name === 'FSREQCALLBACK');
    assert(fsKind && fsKind.created === 20, r.stdout);
  });

  // 36.4: the loop figures of a Worker's own loop (--thread, as loop's),
  // and the counts said to be every thread's.
  it('--thread NAME: the loop busy time is the Worker\'s, within its own eventLoopUtilization() over a window around the trace', async function () {
    const target = await startTarget('loop-stall.js', { env: { LOOP_IN_WORKER: '1' } });
    try {
      const { askTarget } = require('./support/ask-target');
      const ask = () => askTarget(target, 'elu', { fields: 3 }).then(([activeMs, tid, threadId]) => ({ activeMs, tid, threadId, at: performance.now() }));
      const before = await ask();
      const r = await nodetrace(['async', '-p', String(target.pid), '--thread', 'stall', '-d', '5', '--json'], { timeoutMs: 380000 });
      const after = await ask();
      assert.strictEqual(r.code, 0, r.stderr);
      const json = JSON.parse(r.stdout);
      assert.deepStrictEqual(json.loop_thread, { tid: after.tid, role: 'worker', label: `Worker ${after.threadId} "stall"` });
      assert.deepStrictEqual(json.workers, [{ tid: after.tid, label: `Worker ${after.threadId} "stall"` }]);
      // The Worker stalls 200 ms a second and the main loop idles: the busy
      // time traced is the Worker's, no more than its own active time over
      // the window around the trace, and at least half its rate over the
      // time traced (the main loop's would be some milliseconds).
      const busyMs = Number(json.loop_busy_ns) / 1e6;
      const activeMs = after.activeMs - before.activeMs;
      const windowMs = after.at - before.at;
      console.log(`      loop busy ${busyMs.toFixed(0)} ms in ${(json.traced_ns / 1e9).toFixed(1)} s traced; the Worker's active ${activeMs.toFixed(0)} ms in ${(windowMs / 1000).toFixed(1)} s around it`);
      assert(busyMs <= activeMs + 10 && busyMs >= 0.5 * activeMs * (json.traced_ns / 1e6 / windowMs), `${busyMs} ms busy traced, ${activeMs} ms active in the Worker`);
      const text = await nodetrace(['async', '-p', String(target.pid), '-d', '2'], { timeoutMs: 380000 });
      assert.match(text.stdout, new RegExp(`^ {2}The event loop above, and the LOOP column, are the main thread's \\(--thread chooses\\); the counts, waits and callback times are of every thread,$`, 'm'), text.stdout);
      assert.match(text.stdout, new RegExp(`^ {2}the main thread and its Worker \\(${after.threadId} "stall" \\(TID ${after.tid}\\)\\), together\\.$`, 'm'), text.stdout);
    } finally {
      stopTarget(target);
    }
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
      // The reads and connects, made and released 20 a second through the
      // end: created minus destroyed is what was in flight at the end (a
      // few), not creations counted after the trace was told to stop.
      for (const name of ['FSREQCALLBACK', 'TCPCONNECTWRAP']) {
        const k = json.kinds.find((x) => x.name === name);
        assert(k && k.alive_delta <= 3, `${name}: ${k && k.created} created, ${k && k.destroyed} destroyed`);
      }
    } finally {
      stopTarget(target);
    }
  });

  it('--stacks: the connections left open are where the function that opened them made them', async function () {
    await traceLeakStacks(process.execPath);
  });
});

// ---- with the register hook: the kinds that are not AsyncWraps ---------------

const HOOK_ROUNDS = 200;
// A type the target gives an AsyncResource of its own, made to look like a
// map line of bpftrace's output: once read as `@created[1]`, a forged row of
// DIRHANDLE (provider 1) with 4,242,424,242 created (docs/security.md, 35.8).
const FORGED_TYPE = 'Y\n@created[1]: 4242424242';

// test/targets/async-hook-mix.js started with -r register (its probe
// library in a private directory), traced while it does HOOK_ROUNDS of
// setTimeout, setImmediate, Promise.resolve().then(), an AsyncResource and
// fs.read; beside it, a second process mapping the same library, untraced:
// its hook must stay off (the trace sets only the target's semaphores).
async function traceHookMix(node, env = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-async-hook-'));
  const targetEnv = { NODETRACE_USDT_DIR: path.join(dir, 'lib'), ROUNDS: String(HOOK_ROUNDS), BUSY_MS: String(BUSY_MS), FORGED_TYPE };
  const args = ['-r', path.join(ROOT, 'register.js')];
  let target;
  let bystander;
  try {
    target = await startTarget('async-hook-mix.js', { node, env: targetEnv, args });
    bystander = await startTarget('async-hook-mix.js', { node, env: targetEnv, args });
    // The dry run: -p and the @hook part; --no-hook: the program without it.
    const dry = await nodetrace(['async', '-p', String(target.pid), '-n'], { timeoutMs: 120000 });
    assert.strictEqual(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /usdt:\$\d+:nodetrace_async:async-after/);
    assert.match(dry.stdout, new RegExp(`bpftrace -p ${target.pid} `));
    const plain = await nodetrace(['async', '-p', String(target.pid), '-n', '--no-hook'], { timeoutMs: 120000 });
    assert.strictEqual(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /the @hook part left out, no register hook/);
    assert.doesNotMatch(plain.stdout, /usdt:/);
    let bystanderHook = null;
    const r = await traceWhile(target.pid, async () => {
      const state = lineFrom(target, 'state');
      const done = lineFrom(target, 'done');
      target.kill('SIGUSR2');
      assert.strictEqual(await state, 'active', 'the target\'s hook turned on');
      const said = lineFrom(bystander, 'hook');
      bystander.kill('SIGUSR1');
      bystanderHook = await said;
      return JSON.parse(await done);
    }, [], env);
    assert.strictEqual(r.code, 0, r.stderr);
    return { json: JSON.parse(r.stdout), truth: r.truth, stderr: r.stderr, bystanderHook };
  } finally {
    stopTarget(target);
    stopTarget(bystander);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function checkHookCounts({ json, truth, bystanderHook }) {
  const show = json.kinds.map((k) => `${k.name}(${k.source}) ${k.created}/${k.callbacks}/${k.destroyed}`).join(', ');
  const kind = (name) => onlyKind(json, name, show);
  assert.strictEqual(json.hook, true, show);
  // Created, called back and destroyed once each, all while traced (the
  // target began once its hook was on): exact, no slack.
  for (const name of ['Timeout', 'Immediate', 'NodetraceJob']) {
    const k = kind(name);
    assert.strictEqual(k.source, 'async_hooks', name);
    assert.strictEqual(k.provider, null, name);
    assert.deepStrictEqual([k.created, k.callbacks, k.destroyed], [truth[name], truth[name], truth[name]], `${name}: ${show}`);
    assert.strictEqual(k.wait.histogram.reduce((n, b) => n + b.count, 0), truth[name], `${name}: each waited once`);
  }
  // Two promises a round (Promise.resolve and its then()), one callback.
  const promise = kind('PROMISE');
  assert.deepStrictEqual([promise.created, promise.callbacks], [truth.promises, truth.then], show);
  // The file reads are AsyncWraps, from the uprobes only: not counted twice.
  const fsKind = kind('FSREQCALLBACK');
  assert.deepStrictEqual([fsKind.source, fsKind.created, fsKind.callbacks], ['AsyncWrap', truth['fs.read'], truth['fs.read']], show);
  // The setImmediate callback that busy-waited is its kind's max (a loaded
  // host may stretch it: less than twice as long).
  const immediate = kind('Immediate').callback;
  assert(immediate.max_us >= BUSY_MS * 1000 && immediate.max_us < BUSY_MS * 2000, `Immediate callback max ${immediate.max_us} us`);
  // So did the promise reaction run inside an fs.read callback: its time is
  // PROMISE's, taken out of the read's (not counted twice).
  assert(promise.callback.max_us >= BUSY_MS * 1000 && promise.callback.max_us < BUSY_MS * 2000, `PROMISE callback max ${promise.callback.max_us} us`);
  assert(fsKind.callback.max_us < BUSY_MS * 1000 / 2, `FSREQCALLBACK callback max ${fsKind.callback.max_us} us: the promise's time left in it`);
  checkCallbacksFitLoop(json);
  assert.strictEqual(bystanderHook, 'off', 'the untraced process beside it kept its hook off');
  // The type that looks like a map line is one kind, by its whole name, with
  // what the target did; nothing was read out of it.
  const forged = kind(FORGED_TYPE);
  assert.deepStrictEqual([forged.source, forged.created, forged.callbacks, forged.destroyed], ['async_hooks', truth.forged, truth.forged, truth.forged], show);
  assert(!json.kinds.some((k) => k.name === 'DIRHANDLE' || k.provider === 1), `no forged DIRHANDLE row: ${show}`);
  assert(!json.kinds.some((k) => k.created === 4242424242 || k.alive === 4242424242), `no forged count: ${show}`);
}

describe('nodetrace async with the register hook @tracer', function () {
  this.timeout(ATTACH_MS + 240000);
  before(function () { requireTracing(this); });
  afterEach(killStragglers);

  it('counts Timeout, Immediate, promises and an AsyncResource beside the AsyncWraps, exactly @core', async function () {
    const r = await traceHookMix(process.execPath);
    checkHookCounts(r);
    console.log(`      ${r.json.kinds.map((k) => `${JSON.stringify(k.name)} ${k.created}`).join(', ')}`);
  });

  it('leaves the hook out, in one line, where its library\'s path cannot go to a tracer (a blank in it)', async function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace async hook '));
    let target;
    try {
      target = await startTarget('async-hook-mix.js', { env: { NODETRACE_USDT_DIR: path.join(dir, 'lib') }, args: ['-r', path.join(ROOT, 'register.js')] });
      assert(fs.readFileSync(`/proc/${target.pid}/maps`, 'utf8').includes(dir), 'the target maps its library there');
      const dry = await nodetrace(['async', '-p', String(target.pid), '-n'], { timeoutMs: 120000 });
      assert.strictEqual(dry.code, 0, dry.stderr);
      assert.match(dry.stdout, /probe library has a path nodetrace does not hand to a tracer .*: AsyncWraps only/);
      assert.match(dry.stdout, /the @hook part left out/);
      assert.doesNotMatch(dry.stdout, /usdt:/);
    } finally {
      stopTarget(target);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  // The newer bpftrace tiers run the @core test above in their own cells (scripts/test-matrix.sh).

  // Every official build of the matrix (Debian's 18 runs in its own mount
  // namespace: traced without its hook, said in one line).
  for (const build of nodeBuilds('official')) {
    it(`on ${build.label}`, async function () {
      requireBuild(this, build);
      checkHookCounts(await traceHookMix(build.node));
    });
  }
});

for (const build of nodeBuilds('all', { except: ['host'] })) {
  describe(`nodetrace async on ${build.label} @tracer`, function () {
    this.timeout(ATTACH_MS + 240000);
    before(function () { requireTracing(this, { also: () => missingReason(build) }); });
    afterEach(killStragglers);

    it('counts each kind of operation the target counted itself', async function () {
      checkCounts(await traceMix(build.node));
    });

    // --stacks once per V8 layout: 10.2 (Node 18), 11.3 (the host's 20),
    // 12.4 (22), 14.6 (26). Node 24's 13.6 is laid out as 14.6, Debian's 18
    // has official 18's V8; profile and loop name frames on every build.
    if (build.name !== 'node24' && build.name !== 'debian18') {
      it('--stacks: the connections left open are where the function that opened them made them', async function () {
        await traceLeakStacks(build.node);
      });
    }
  });
}
