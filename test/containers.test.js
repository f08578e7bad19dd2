'use strict';
// Node in containers, as production runs it, traced from the host @tracer:
// real podman containers (test/support/containers.js: a Debian 12 image with
// the official Node 22 at /usr/local/bin/node, node as PID 1), each command
// given the container's process by its host PID, with the assertions of
// the host's tests (kinds named, JavaScript named from the container's own
// perf map, a hit resumed and its core opened by the printed gdb line), the
// process named as the operator knows it (host PID, PID inside, container),
// and a hostile container whose /tmp links to a host directory.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn, spawnSync } = require('child_process');
const { requireTracing, nodetrace, killStragglers, functionAt, escapeRegExp } = require('./support/harness');
const { containerUnavailableReason, startContainer, removeContainers } = require('./support/containers');
const { askSplit, askWaits } = require('./support/ask-target');
const { profileUntilSamples } = require('./support/profile-runs');
const httpWire = require('./support/http-wire');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The identity every report gives a container's process.
function assertIsContainer(processJson, c) {
  assert.deepStrictEqual(
    [processJson.pid, processJson.pid_inside, processJson.container && processJson.container.id, processJson.container
      && processJson.container.name, processJson.container && processJson.container.runtime],
    [c.pid, 1, c.id, c.name, 'podman'], JSON.stringify(processJson));
}

// The words of a shell line as a shell would read them (the lines nodetrace
// prints quote with '...' only): for running a printed line without a shell.
function shellWords(line) {
  const words = [];
  const re = /'((?:[^']|'\\'')*)'|(\S+)/g;
  let m;
  while ((m = re.exec(line))) words.push(m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]);
  return words;
}

describe('Node in containers, traced from the host @tracer', function () {
  this.timeout(600000);
  before(function () { requireTracing(this, { also: containerUnavailableReason }); });
  // A test's own containers go after it; a group's, after the group.
  const own = [];
  async function startOwnContainer(target, options) {
    const c = await startContainer(target, options);
    own.push(c);
    return c;
  }
  afterEach(async function () {
    await killStragglers.call(this);
    for (const c of own.splice(0)) c.remove();
  });
  after(() => removeContainers());

  // The tests that only look at a process share it: a container costs
  // seconds to start, more than most of what these tests do with it.
  describe('one crypto-loop.js container', function () {
    let c;
    before(async function () { c = await startContainer('crypto-loop.js'); });
    after(() => c && c.remove());

    it('latency: its kinds by its host PID, said with its container; another container of its image stays out @core', async function () {
      // Same image, same node file: the uprobes (given without -p) fire there too.
      await startOwnContainer('fs-loop.js');
      const r = await nodetrace(['latency', '-p', String(c.pid), '-d', '3', '--json'], { timeoutMs: 300000 });
      assert.strictEqual(r.code, 0, r.stderr);
      const json = JSON.parse(r.stdout);
      assertIsContainer(json.process, c);
      const pbkdf2 = json.kinds.find((k) => k.name === 'crypto.pbkdf2');
      assert(pbkdf2 && pbkdf2.count > 5, JSON.stringify(json.kinds.map((k) => [k.name, k.count])));
      assert(!json.kinds.some((k) => /^fs\./.test(k.name)), `the other container's fs work leaked in: ${json.kinds.map((k) => k.name)}`);
      assert.match(r.stderr, new RegExp(`tracing PID ${c.pid} \\(PID 1 in podman container ${c.name} \\(${c.id.slice(0, 12)}\\)\\)`));
    });

    it('doctor -p: who it is, what works; its by-hand line runs as printed', async function () {
      const r = await nodetrace(['doctor', '-p', String(c.pid), '--json'], { timeoutMs: 300000 });
      assert.strictEqual(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout);
      assertIsContainer(report.process, c);
      assert.strictEqual(report.otherMountNamespace, true);
      const can = Object.fromEntries(report.commands.map((x) => [x.command, x.can]));
      // profile: no perf map, but V8's metadata in the container's node (22)
      // names its JavaScript; http: off the wire, HTTPS from the OpenSSL that
      // node links statically and exports.
      assert.deepStrictEqual(can, { latency: 'yes', gc: 'yes', async: 'yes', loop: 'yes', profile: 'yes', ebadf: 'yes', snoop: 'no', http: 'yes' });
      assert.match(report.javascript,
        /^named with no flag, from V8 12\.4\.254\.21's metadata in \/usr\/local\/bin\/node /);
      assert(!/ -p /.test(report.latencyByHand), report.latencyByHand);
      // As printed, through a shell, until it has traced a second; then Ctrl-C.
      const sh = spawn('sh', ['-c', report.latencyByHand], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      sh.stdout.on('data', (d) => { out += d; });
      sh.stderr.on('data', (d) => { out += d; });
      let exited = null;
      sh.on('exit', (code, signal) => { exited = { code, signal }; });
      // (bpftrace 0.17 reads node's symbol tables for each probe: minutes on a loaded host.)
      const started = Date.now();
      for (let i = 0; i < 3000 && !exited && !/__BPFTRACE_NOTIFY_PROBES_ATTACHED/.test(out); i++) await sleep(100);
      const waited = `${((Date.now() - started) / 1000).toFixed(1)} s`;
      // Never leave the line's tracer running past a failure.
      if (!exited && !/__BPFTRACE_NOTIFY_PROBES_ATTACHED/.test(out)) process.kill(-sh.pid, 'SIGKILL');
      assert.match(out, /__BPFTRACE_NOTIFY_PROBES_ATTACHED/,
        `not attached (${exited ? `the line exited: ${JSON.stringify(exited)}` : 'still running'} after ${waited}; `
        + `load ${os.loadavg()[0].toFixed(1)}): ${report.latencyByHand}\n${out.slice(-2000)}`);
      await sleep(1500);
      // Ctrl-C reaches the shell and bpftrace alike (the shell dies of it);
      // bpftrace ends its program and prints its maps to the pipe's end.
      process.kill(-sh.pid, 'SIGINT');
      const closed = await Promise.race([new Promise((resolve) => sh.stdout.on('close', () => resolve(true))),
        sleep(60000).then(() => false)]);
      if (!closed) process.kill(-sh.pid, 'SIGKILL');
      assert(closed, `the line's tracer still ran 60 s after Ctrl-C (exited: ${JSON.stringify(exited)}):\n${out.slice(-2000)}`);
      assert.match(out, /^Tracing ended\.$/m, out.slice(-2000));
      assert.match(out, /^@total_us\[.*PBKDF2.*\]:/m, out.slice(-2000));
    });

    it('--container NAME takes its Node process; -p 1 is answered with the host PIDs of the PID 1s inside', async function () {
      const byName = await nodetrace(['gc', '--container', c.name, '-n'], { timeoutMs: 120000 });
      assert.strictEqual(byName.code, 0, byName.stderr);
      assert.match(byName.stdout, new RegExp(`^# bpftrace \\S+ would run \\(V8's garbage collection pauses of PID ${c.pid} \\(PID 1 in podman container ${c.name}`, 'm'));
      const byId = await nodetrace(['latency', '--container', c.id.slice(0, 8), '-n'], { timeoutMs: 120000 });
      assert.strictEqual(byId.code, 0, byId.stderr);
      const one = await nodetrace(['profile', '-p', '1', '-d', '1'], { timeoutMs: 120000 });
      assert.strictEqual(one.code, 1, one.stderr);
      assert.match(one.stderr, /^nodetrace: PID 1 on this host is .*, not a Node process\.$/m);
      assert.match(one.stderr, new RegExp(`PID ${c.pid} \\(PID 1 in podman container ${c.name} \\(${c.id.slice(0, 12)}\\)\\) +/usr/local/bin/node /app/crypto-loop\\.js`));
    });
  });

  describe('one loop-stall.js container, with its perf map', function () {
    let c;
    before(async function () { c = await startContainer('loop-stall.js', { nodeArgs: ['--perf-basic-prof'] }); });
    after(() => c && c.remove());

    it('loop --stacks: the stalls, and the busy-wait named from the container\'s own perf map @core', async function () {
      const r = await nodetrace(['loop', '-p', String(c.pid), '-d', '6', '--json', '--stacks'], { timeoutMs: 300000 });
      assert.strictEqual(r.code, 0, r.stderr);
      const json = JSON.parse(r.stdout);
      assertIsContainer(json.process, c);
      assert(json.stalls.length >= 3 && json.stalls.every((s) => s.busy_us >= 200000), JSON.stringify(json.stalls));
      // Named from V8's metadata read through the container's map_files (or, for what it leaves, its perf map).
      const at = new RegExp(`^(JS:\\*?)?spinTheLoop ${escapeRegExp(functionAt('loop-stall.js', 'spinTheLoop', '/app'))}`);
      assert(json.stacks.some((s) => s.frames.some((f) => at.test(f))), `${at} ${JSON.stringify(json.stacks.slice(0, 2))}`);
    });

    it('ps: the container\'s node by its host PID, PID 1 inside, its container, its perf map', async function () {
      const r = await nodetrace(['ps', '--json'], { timeoutMs: 120000 });
      assert.strictEqual(r.code, 0, r.stderr);
      const row = JSON.parse(r.stdout).processes.find((p) => p.pid === c.pid);
      assert(row, r.stdout);
      assertIsContainer(row, c);
      assert.strictEqual(row.node, '22.12.0');
      assert.strictEqual(row.executable, '/usr/local/bin/node');
      assert.strictEqual(row.perf_map.path, `/proc/${c.pid}/root/tmp/perf-1.map`);
      assert.deepStrictEqual([row.commands.profile.can, row.commands.snoop.can], ['yes', 'no']);
      const text = await nodetrace(['ps'], { timeoutMs: 120000 });
      assert.match(text.stdout, new RegExp(`^${c.pid} +1 +podman container ${c.name} \\(${c.id.slice(0, 12)}\\) +v22\\.12\\.0 +root `, 'm'));
    });
  });

  it('snoop --container: its bunyan records, the debug ones its level drops too, said with its container @core', async function () {
    const c = await startOwnContainer('bunyan-debug-loop.js', { hook: true, env: { INTERVAL: '20' } });
    const r = await nodetrace(['snoop', '--container', c.name, '-d', '3', '-m', 'short'], { timeoutMs: 120000 });
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`^nodetrace: snooping the Node process of podman container ${c.name} \\(${c.id.slice(0, 12)}\\): PID ${c.pid}$`, 'm'));
    assert.match(r.stderr, new RegExp(`snooping bunyan records \\(all levels\\) of PID ${c.pid} \\(PID 1 in podman container ${c.name} \\(${c.id.slice(0, 12)}\\)\\) with`));
    // Each round logs trace, debug, info, warn and error; the logger is at info.
    const seqs = (level) => [...r.stdout.matchAll(new RegExp(`^\\S+ +${level} snoop-target/${c.pid} in ${c.name}: .* \\(seq=(\\d+)\\)$`, 'gm'))].map((m) => Number(m[1]));
    const debug = seqs('DEBUG');
    const error = seqs('ERROR');
    assert(debug.length >= 10, `debug records: ${r.stdout.slice(0, 2000)}`);
    // Every round in order, none lost; the snoop may begin and end mid-round.
    for (const got of [debug, error]) assert.deepStrictEqual(got, got.map((_, i) => got[0] + i));
    assert(Math.abs(debug[0] - error[0]) <= 1 && Math.abs(debug.length - error.length) <= 2, `debug ${debug[0]}+${debug.length}, error ${error[0]}+${error.length}`);
  });

  it('probes --container NAME: an application\'s own provider, unprepared, listed and traced by its host PID, its firings as it counted them', async function () {
    // usdt-app.js requires lib/usdt itself (the checkout mounted, no hook),
    // in a container started with no flag beyond every container's here.
    const c = await startOwnContainer('usdt-app.js', { checkout: true });
    const list = await nodetrace(['probes', '--container', c.name, '--json'], { timeoutMs: 120000 });
    assert.strictEqual(list.code, 0, list.stderr);
    const listed = JSON.parse(list.stdout).processes;
    assert.strictEqual(listed.length, 1, list.stdout);
    assertIsContainer(listed[0], c);
    const own = listed[0].providers.find((g) => g.provider === 'myapp');
    assert.deepStrictEqual(own && own.probes.map((p) => [p.name, p.arguments, p.enabled]),
      [['request-done', ['int', 'char *', 'json', 'int'], false], ['request-start', ['int', 'char *'], false]], list.stdout);

    const out = { stdout: '', stderr: '' };
    const done = nodetrace(['probes', '--container', c.name, 'myapp:*', '--json'], {
      timeoutMs: 300000,
      onSpawn: (child) => {
        out.child = child;
        child.stdout.on('data', (d) => { out.stdout += d; });
        child.stderr.on('data', (d) => { out.stderr += d; });
      },
    });
    const until = async (what, test) => {
      for (const end = Date.now() + 120000; !test();) {
        if (Date.now() > end || out.child.exitCode !== null) assert.fail(`no ${what} in 2 minutes:\n${out.stdout.slice(-2000)}\n${out.stderr.slice(-2000)}\n${c.output().slice(-1000)}`);
        await sleep(50);
      }
    };
    await until('"tracing"', () => /nodetrace: tracing .* with bpftrace/.test(out.stderr));
    // The application fires three requests and says what it fired (only
    // what fired while a tracer had the probe on is counted).
    c.kill('SIGUSR2');
    await until('counts from the application', () => /^fired \{.*\}$/m.test(c.output()));
    const fired = JSON.parse(/^fired (\{.*\})$/m.exec(c.output())[1]);
    assert.deepStrictEqual(fired, { 'request-start': 3, 'request-done': 3 });
    await until('its third request-done', () => /"probe":"request-done","arguments":\[3,/.test(out.stdout));
    out.child.kill('SIGINT');
    const r = await done;
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`^nodetrace: tracing the Node process of podman container ${escapeRegExp(c.name)} \\(${c.id.slice(0, 12)}\\): PID ${c.pid}\\.$`, 'm'));
    const seen = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    assert.ok(seen.every((f) => f.pid === c.pid && f.provider === 'myapp'), r.stdout);
    const urlOf = (id) => `/orders/${id}?q="a b"\n\u001b[31m\u202e`;
    const of = (probe) => seen.filter((f) => f.probe === probe).map((f) => f.arguments);
    assert.deepStrictEqual(of('request-start'), [1, 2, 3].map((id) => [id, urlOf(id)]));
    assert.deepStrictEqual(of('request-done'), [1, 2, 3].map((id) => [id, urlOf(id), { id, user: 'o"brien', ms: 12.5 }, 200]));
  });

  it('a hostile container that mounts a link to a host directory over its probe library\'s: snoop reads the library it maps, never the host\'s', async function () {
    // The host's directory holds a FIFO by the name of each of its libraries
    // (a naive reader would hang, or see no probes); the container mounts a
    // tmpfs over its library directory's parent with a link to that
    // directory in it, so its maps still name the old path.
    const decoy = fs.mkdtempSync('/var/tmp/nodetrace-decoy-');
    try {
      const c = await startOwnContainer('bunyan-debug-loop.js', { hook: true, capAdd: ['SYS_ADMIN'], env: { INTERVAL: '20' } });
      const libs = [...new Set(fs.readFileSync(`/proc/${c.pid}/maps`, 'utf8').split('\n').map((l) => l.split(/\s+/)[5]).filter((f) => f && /\/nodetrace-usdt-[0-9a-f]+\.so$/.test(f)))];
      assert(libs.length >= 1, 'the container maps its probe libraries');
      const dir = path.dirname(libs[0]);
      for (const f of libs) assert.strictEqual(spawnSync('mkfifo', [path.join(decoy, path.basename(f))]).status, 0);
      const m = c.exec(['sh', '-c', 'mount -t tmpfs none "$(dirname "$1")" && ln -s "$2" "$1"', 'sh', dir, decoy]);
      assert.strictEqual(m.status, 0, m.stderr);
      // What a reader that follows the link from the host gets: the host's FIFO.
      assert(fs.lstatSync(`/proc/${c.pid}/root${libs[0]}`).isFIFO(), 'the link leads out of the container');
      for (const target of [['-p', String(c.pid)], ['*']]) {
        const r = await nodetrace(['snoop', ...target, '-d', '3', '-m', 'short'], { timeoutMs: 120000 });
        assert.strictEqual(r.code, 0, `${target.join(' ')}: ${r.stderr}`);
        assert.match(r.stdout, new RegExp(`^\\S+ +DEBUG snoop-target/${c.pid} in ${c.name}: `, 'm'), `${target.join(' ')}: ${r.stdout.slice(0, 1000)}`);
      }
    } finally {
      fs.rmSync(decoy, { recursive: true, force: true });
    }
  });

  it('gc: scavenges and mark-compact pauses, said with its container @core', async function () {
    const c = await startOwnContainer('gc-churn.js', { nodeArgs: ['--expose-gc'], env: { GC_FULL_MS: '500' } });
    const r = await nodetrace(['gc', '-p', String(c.pid), '-d', '5', '--json'], { timeoutMs: 400000 });
    assert.strictEqual(r.code, 0, r.stderr);
    const json = JSON.parse(r.stdout);
    assertIsContainer(json.process, c);
    const kind = (name) => json.kinds.find((k) => k.name === name);
    assert(kind('scavenge') && kind('scavenge').count >= 3, r.stdout);
    assert(kind('mark-compact') && kind('mark-compact').count >= 2, r.stdout);
  });

  it('async: a container leaking TCP connections, its TCPWRAP growing, said with its container', async function () {
    const c = await startOwnContainer('async-mix.js', { env: { LEAK: '20' } });
    const r = await nodetrace(['async', '-p', String(c.pid), '-d', '6', '--json'], {
      timeoutMs: 300000,
      onSpawn: (child) => {
        let err = '';
        child.stderr.on('data', (d) => {
          err += d;
          if (/tracing the asynchronous operations/.test(err) && !child.told) { child.told = true; c.kill('SIGUSR2'); }
        });
      },
    });
    assert.strictEqual(r.code, 0, r.stderr);
    const json = JSON.parse(r.stdout);
    assertIsContainer(json.process, c);
    const tcp = json.kinds.find((k) => k.name === 'TCPWRAP');
    assert(tcp && tcp.growing && tcp.alive_delta >= 20,
      JSON.stringify(json.kinds.map((k) => [k.name, k.created, k.alive_delta, k.growing])));
  });

  it('http --container: HTTPS read off the container\'s own node (its OpenSSL by map_files), served and made, each once', async function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-ctls-'));
    let pem;
    try {
      pem = (await httpWire.certificate(dir)).map((f) => fs.readFileSync(f, 'utf8'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const c = await startOwnContainer('http-wire-server.js', { env: { TLS_KEY_PEM: pem[0], TLS_CERT_PEM: pem[1], CLIENT_ON_SIGNAL: '4' } });
    const r = await nodetrace(['http', '--container', c.name, '-d', '60', '--json'], {
      timeoutMs: 300000,
      onSpawn: (child) => {
        let err = '';
        child.stderr.on('data', (d) => {
          err += d;
          if (/tracing HTTP/.test(err) && !child.told) { child.told = true; c.kill('SIGUSR2'); }
        });
        // Its client's requests done, and the last batch shown (within 100 ms, held 400 ms): stopped.
        const poll = setInterval(() => {
          if (!/client done/.test(c.output())) return;
          clearInterval(poll);
          setTimeout(() => child.kill('SIGINT'), 1000);
        }, 100);
        child.on('close', () => clearInterval(poll));
      },
    });
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stderr, /its HTTPS off the OpenSSL in \/usr\/local\/bin\/node /, 'its path inside the container');
    assert.match(r.stderr, new RegExp(`tracing HTTP on the sockets of PID ${c.pid} \\(PID 1 in podman container ${c.name} \\(${c.id.slice(0, 12)}\\)\\)`));
    const measured = c.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    assert.strictEqual(measured.length, 4, c.output());
    const port = Number(/^ready \d+ (\d+)/m.exec(c.output())[1]);
    const lines = r.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
    httpWire.eachOnceAsMeasured(lines, measured, { port, child: { pid: c.pid } }, r.stdout, { scheme: 'https' });
    assert.strictEqual(lines.length, 2 * 4, r.stdout);
  });

  it('profile: hotSpin first, named from the container\'s perf map, its share within 10 points of the truth @core', async function () {
    const c = await startOwnContainer('profile-hot.js', { nodeArgs: ['--perf-basic-prof'] });
    await sleep(2000);
    // As on the host: sample until there are 200 samples (a busy machine runs the target less).
    const { json, before, after } = await profileUntilSamples(c, askSplit, { minSamples: 200 });
    const truth = (after.hot - before.hot) / (after.cpu - before.cpu);
    assertIsContainer(json.process, c);
    assert.match(json.self[0].name, /^hotSpin \/app\/profile-hot\.js:\d+:\d+$/, json.self.slice(0, 5).map((f) => f.name).join('\n'));
    const hot = json.total.find((f) => /^hotSpin /.test(f.name));
    assert(Math.abs(hot.samples / json.samples - truth) <= 0.10, `hotSpin ${hot.samples / json.samples}, truth ${truth}`);
    assert.strictEqual(json.jit.perfMap.path, `/proc/${c.pid}/root/tmp/perf-1.map`);
    assert(json.jit.perfMap.used);
  });

  it('profile --off-cpu: the FIFO read first, named down to its JavaScript function @core', async function () {
    // Interpreted frames named too: its functions may not have left V8's
    // interpreter yet when the trace begins (Node 22 here, on a busy host).
    const c = await startOwnContainer('offcpu-wait.js', { nodeArgs: ['--perf-basic-prof', '--interpreted-frames-native-stack'] });
    await sleep(1500);
    const before = await askWaits(c);
    const r = await nodetrace(['profile', '--off-cpu', '-p', String(c.pid), '-d', '4', '--json'], { timeoutMs: 300000 });
    const after = await askWaits(c);
    assert.strictEqual(r.code, 0, r.stderr);
    const json = JSON.parse(r.stdout);
    assertIsContainer(json.process, c);
    const top = json.stacks[0];
    assert.strictEqual(top.reason, 'read: anon_pipe_read', JSON.stringify(json.stacks.map((s) => s.reason)));
    const jsNames = top.frames.filter((f) => f.category === 'js').map((f) => f.name);
    assert.match(jsNames[1], /^waitForFifo \/app\/offcpu-wait\.js:\d+:\d+$/, jsNames.join('\n'));
    const fifo = json.stacks.filter((s) => s.reason === 'read: anon_pipe_read').reduce((n, s) => n + s.us, 0);
    const futex = json.stacks.filter((s) => /^futex/.test(s.reason)).reduce((n, s) => n + s.us, 0);
    const truth = (after.fifo - before.fifo) / (after.fifo - before.fifo + after.atomics - before.atomics);
    assert(Math.abs(fifo / (fifo + futex) - truth) < 0.1, `traced ${fifo / (fifo + futex)}, truth ${truth}`);
  });

  it('ebadf: stopped, dumped, resumed; the hit says where it runs; the printed gdb line opens the core once the container is gone @core', async function () {
    const cores = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-container-cores-'));
    try {
      const c = await startOwnContainer('ebadf-close.js', { nodeArgs: ['--perf-basic-prof', '--interpreted-frames-native-stack'], env: { EBADF_ON_SIGNAL: '1' } });
      let watching = false;
      const run = nodetrace(['ebadf', '-p', String(c.pid), '-o', cores], {
        timeoutMs: 400000,
        onSpawn: (child) => child.stderr.on('data', (d) => { if (/watching PID/.test(String(d))) watching = true; }),
      });
      for (let i = 0; i < 3000 && !watching; i++) await sleep(100);
      assert(watching, 'nodetrace attached');
      c.kill('SIGUSR2');
      const r = await run;
      const out = r.stdout;
      assert.strictEqual(r.code, 0, `${out}\n${r.stderr}`);
      assert.match(out, new RegExp(`process  PID ${c.pid} \\(node\\), thread ${c.pid}, /usr/local/bin/node\\n {11}PID 1, thread 1 in podman container ${c.name} \\(${c.id.slice(0, 12)}\\); /usr/local/bin/node is its path there\\n`));
      // Walked with V8's metadata in the stopped process; its perf map agrees.
      assert.match(out, /stack {4}innermost first; walked in the stopped process, JavaScript frames named from V8's own metadata\n/);
      assert.match(out, /closeTwice \(\/app\/ebadf-close\.js:\d+:\d+\) {2}\[JS/);
      assert.match(out, new RegExp(`/proc/${c.pid}/root/tmp/perf-1\\.map names the \\d+ JavaScript frame\\(s\\) it has the same\\.`));
      assert.match(out, new RegExp(`resumed  yes, PID ${c.pid} is running again`));
      // The target carries on, finishes, and its container goes.
      for (let i = 0; i < 300 && c.child.exitCode === null; i++) await sleep(100);
      assert.match(c.output(), /finished: \d+ ticks, 1 bad closes/);
      // The core and, beside it, the container's files: the printed line opens it.
      const stackLine = /^Open the core:\n {2}(nodetrace stack .*?) {4}# every thread/m.exec(out)[1];
      const line = /^ {2}(gdb .*)$/m.exec(out)[1];
      const words = shellWords(line);
      assert.deepStrictEqual(words.slice(0, 2), ['gdb', '-iex']);
      const gdb = spawnSync(words[0], [...words.slice(1), '-batch', '-nx', '-ex', 'info sharedlibrary', '-ex', 'bt'], { encoding: 'utf8', timeout: 180000 });
      assert.strictEqual(gdb.status, 0, gdb.stderr);
      const root = /set sysroot (.*)$/.exec(words[2])[1];
      const libs = gdb.stdout.split('\n').filter((l) => /^0x[0-9a-f]+ +0x[0-9a-f]+ +Yes/.test(l));
      assert(libs.length >= 5 && libs.every((l) => l.includes(root)), `libraries read from beside the core:\n${gdb.stdout}`);
      assert.doesNotMatch(gdb.stderr, /Could not load shared library symbols|not a core dump|is truncated/);
      assert.match(gdb.stdout, /uv__fs_close|uv_fs_close/, gdb.stdout);
      // The printed `nodetrace stack` line names the JavaScript from the core and the files beside it.
      const stack = await nodetrace([...shellWords(stackLine).slice(1), '--thread', String(c.pid)], { timeoutMs: 120000 });
      assert.strictEqual(stack.code, 0, stack.stderr);
      assert.match(stack.stdout, /closeTwice \(\/app\/ebadf-close\.js:\d+:\d+\) {2}\[JS/, stack.stdout);
    } finally {
      fs.rmSync(cores, { recursive: true, force: true });
    }
  });

  it('a hostile container whose /tmp links to a host directory: the host\'s file there is never read @core', async function () {
    // A decoy perf map on the host that would name every address, at the
    // path the container's /tmp link names; the container has a directory
    // of that name too, where its node writes its real map.
    const decoy = fs.mkdtempSync('/var/tmp/nodetrace-decoy-');
    try {
      fs.writeFileSync(path.join(decoy, 'perf-1.map'), '1000 7ffffffff000 JS:*hostDecoy /etc/shadow:1:1\n', { mode: 0o600 });
      const c = await startOwnContainer('profile-hot.js', { nodeArgs: ['--perf-basic-prof'], tmpLinkTo: decoy });
      await sleep(2000);
      // What a reader that follows the link from the host gets: the decoy.
      assert.match(fs.readFileSync(`/proc/${c.pid}/root/tmp/perf-1.map`, 'utf8'), /hostDecoy/);
      const p = await nodetrace(['profile', '-p', String(c.pid), '-d', '4', '--json', '--top', '100'], { timeoutMs: 300000 });
      assert.strictEqual(p.code, 0, p.stderr);
      assert.doesNotMatch(p.stdout, /hostDecoy/);
      const json = JSON.parse(p.stdout);
      assert(json.total.some((f) => /^hotSpin \/app\/profile-hot\.js/.test(f.name)), 'named from the container\'s own map');
      const l = await nodetrace(['loop', '-p', String(c.pid), '-d', '3', '--over', '5ms', '--stacks', '--json'], { timeoutMs: 300000 });
      assert.strictEqual(l.code, 0, l.stderr);
      assert.doesNotMatch(l.stdout, /hostDecoy/);
    } finally {
      fs.rmSync(decoy, { recursive: true, force: true });
    }
  });
});
