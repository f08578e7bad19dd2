'use strict';
// How a command's target names a process: test/cli.test.js runs the
// commands; here, the rules over made-up hosts.
const assert = require('assert');
const { resolveOneProcess } = require('../lib/targets/one-process');

const PROFILE = { command: 'profile', force: false, verbing: 'profiling' };

describe('one process from a target (latency, gc, loop, profile, ebadf, doctor)', function () {
  // A host of made-up processes: pid -> { cmd, node, ticks: [before, after] }.
  function host(procs) {
    const seen = new Map();
    return {
      isRunning: (pid) => pid in procs,
      tgidOf: (pid) => (pid in procs ? (procs[pid].tgid || pid) : null),
      looksLikeNode: (pid) => Boolean(procs[pid].node),
      executableName: (pid) => (procs[pid].node ? '/usr/bin/node' : '/bin/sh'),
      commandLine: (pid) => procs[pid].cmd,
      findByCommandLine: (pattern) => Object.keys(procs).map(Number).filter((pid) => procs[pid].cmd.includes(pattern)),
      cpuTicks: (pid) => { const n = seen.get(pid) || 0; seen.set(pid, n + 1); return procs[pid].ticks[n]; },
      sleep: () => {},
    };
  }
  const procs = {
    101: { cmd: 'node api.js --worker 1', node: true, ticks: [100, 103] },
    102: { cmd: 'node api.js --worker 2', node: true, ticks: [500, 527] },
    103: { cmd: 'tail -f api.log', node: false, ticks: [1, 1] },
    200: { cmd: 'node batch.js', node: true, ticks: [0, 0] },
    201: { cmd: 'vim batch.sh', node: false, ticks: [0, 0] },
    300: { cmd: 'sh -c sleep only-shell', node: false, ticks: [0, 0] },
  };

  it('one Node process among the matches: that one, and says which', function () {
    const r = resolveOneProcess('batch', host(procs), PROFILE);
    assert.strictEqual(r.pid, 200);
    assert.match(r.note, /^profiling PID 200 node batch\.js$/);
  });

  it('several Node processes: refuses (exit 2), listing them busiest first with their CPU now', function () {
    assert.throws(() => resolveOneProcess('api', host(procs), PROFILE), (e) => {
      assert.strictEqual(e.exitCode, 2);
      assert.match(e.message,
        /^2 Node processes have "api" in their command lines, and nodetrace profile traces one process:/);
      const rows = e.message.split('\n').slice(2);
      assert.match(rows[0], /^\s+90% CPU {2}102 node api\.js --worker 2$/);
      assert.match(rows[1], /^\s+10% CPU {2}101 node api\.js --worker 1$/);
      assert(!/tail/.test(e.message), 'only Node processes are candidates');
      assert.match(e.hint, /Choose one: nodetrace profile -p PID/);
      return true;
    });
  });

  it('no Node process matches: exit 3, listing what did; --force takes the one that matched', function () {
    assert.throws(() => resolveOneProcess('only-shell', host(procs), PROFILE), (e) => e.exitCode === 3 && /300 sh -c sleep only-shell/.test(e.message) && /--force/.test(e.hint));
    assert.strictEqual(resolveOneProcess('only-shell', host(procs), { ...PROFILE, force: true }).pid, 300);
  });

  it("a PID is that process; '*', a PID list, a thread and nothing matching are usage errors", function () {
    assert.deepStrictEqual(resolveOneProcess('101', host(procs), PROFILE), { pid: 101, note: null });
    for (const t of ['*', '101,102', 'nothing-like-it', '']) {
      assert.throws(() => resolveOneProcess(t, host(procs), PROFILE), (e) => e.exitCode === 2, t);
    }
    const threads = { ...procs, 555: { cmd: 'node api.js --worker 1', node: true, tgid: 101, ticks: [] } };
    assert.throws(() => resolveOneProcess('555', host(threads), PROFILE), (e) => e.exitCode === 2 && /Give the process: nodetrace profile 101/.test(e.hint));
    assert.throws(() => resolveOneProcess('999', host(procs), PROFILE), (e) => e.exitCode === 3);
  });

  it('a command without --force never advises it; a command line shown in a list stays on its line', function () {
    assert.throws(() => resolveOneProcess('only-shell', host(procs), { command: 'gc' }), (e) => !/--force/.test(e.hint));
    const forged = { ...procs, 400: { cmd: 'node evil.js\n  99% CPU  1 node api.js', node: true, ticks: [0, 0] } };
    assert.throws(() => resolveOneProcess('node', host(forged), PROFILE), (e) => {
      const rows = e.message.split('\n').slice(2);
      assert.strictEqual(rows.length, 4, e.message);
      assert(rows.some((r) => r.includes('400 node evil.js\\x0a')), e.message);
      return true;
    });
  });
});

describe('targets by container: --container, and PIDs as containers know them', function () {
  const { resolveOneTarget } = require('../lib/targets/one-process');
  const { containerProcesses, insideHint, refuseHostPidMeantInside, hostPidNote } = require('../lib/targets/containers');
  const WEB = { id: 'ab'.repeat(32), runtime: 'podman', name: 'web' };
  const WORKER = { id: 'abab' + 'cd'.repeat(30), runtime: 'docker', name: null };
  // pid -> { cmd, node, inside, container }
  const procs = {
    1: { cmd: '/sbin/init', node: false },
    500: { cmd: 'node /app/server.js', node: true, inside: 1, container: WEB },
    501: { cmd: 'sh -c backup', node: false, inside: 7, container: WEB },
    600: { cmd: 'node /app/worker.js', node: true, inside: 1, container: WORKER },
    601: { cmd: 'node /app/worker.js --child', node: true, inside: 9, container: WORKER },
    700: { cmd: 'node batch.js', node: true },
  };
  function host() {
    return {
      isRunning: (pid) => pid in procs,
      tgidOf: (pid) => (pid in procs ? pid : null),
      looksLikeNode: (pid) => Boolean(procs[pid].node),
      executableName: (pid) => (procs[pid].node ? '/usr/local/bin/node' : '/bin/sh'),
      commandLine: (pid) => procs[pid].cmd,
      findByCommandLine: () => [],
      allPids: () => Object.keys(procs).map(Number),
      identityOf: (pid) => ({ pid, pidInside: procs[pid].inside || null, container: procs[pid].container || null }),
      cpuTicks: (pid) => pid,
      sleep: () => {},
    };
  }
  const GC = { command: 'gc', force: false, verbing: 'tracing' };

  it('--container NAME or the start of the ID: its one Node process, said with its container', function () {
    const r = resolveOneTarget({ container: 'web' }, host(), GC);
    assert.strictEqual(r.pid, 500);
    assert.strictEqual(r.note, 'tracing the Node process of podman container web (abababababab): 500 node /app/server.js');
    assert.strictEqual(containerProcesses('ababab', host(), GC).container, WEB);
  });

  it('a container with several Node processes: refused (exit 2), listing them; none, or no such container: exit 3', function () {
    assert.throws(() => resolveOneTarget({ container: 'ababcd' }, host(), GC), (e) => e.exitCode === 2 && /has 2 Node processes/.test(e.message) && /601 node \/app\/worker\.js --child/.test(e.message));
    assert.throws(() => resolveOneTarget({ container: 'nope' }, host(), GC), (e) => e.exitCode === 3 && /podman container web/.test(e.hint) && /docker container ababcdcdcdcd/.test(e.hint));
    // "ab" is too short an ID to match (and names no container); "abab" starts both IDs.
    assert.throws(() => containerProcesses('ab', host(), GC), (e) => e.exitCode === 3);
    assert.throws(() => containerProcesses('abab', host(), GC), (e) => e.exitCode === 2 && /names 2 containers/.test(e.message));
  });

  it('-p 1: the host\'s init is not the node meant; answered with the host PIDs that are PID 1 inside', function () {
    assert.throws(() => refuseHostPidMeantInside(1, host(), { command: 'latency' }), (e) => {
      assert.strictEqual(e.exitCode, 1);
      assert.match(e.message, /^PID 1 on this host is \/bin\/sh, not a Node process\.$/);
      assert.match(e.hint, /PID 500 \(PID 1 in podman container web \(abababababab\)\) {2}node \/app\/server\.js/);
      assert.match(e.hint, /PID 600 \(PID 1 in docker container ababcdcdcdcd\)/);
      assert.match(e.hint, /Give the host PID: nodetrace latency -p 500$/);
      return true;
    });
    // A Node process on the host is taken as it is; a PID no container has inside: no hint.
    refuseHostPidMeantInside(700, host(), { command: 'latency' });
    assert.strictEqual(insideHint(42, host(), { command: 'gc' }), null);
    // ebadf and doctor take any program: the host's PID 1 is taken, and the Node processes said.
    assert.match(hostPidNote(1, host(), { command: 'ebadf' }), /^PID 1 is \/bin\/sh on this host, which nodetrace ebadf takes\. .*PID 500 \(PID 1 in podman/s);
    assert.strictEqual(hostPidNote(7, host(), { command: 'ebadf' }), null, 'PID 7 inside is no Node process');
  });

  it('a PID that runs only inside a container: "not running on this host", with the host PID that has it', function () {
    assert.throws(() => resolveOneTarget({ pid: '9' }, host(), GC), (e) => e.exitCode === 3 && /running on this host/.test(e.message)
      && /PID 601 \(PID 9 in docker container ababcdcdcdcd\)/.test(e.hint) && /nodetrace gc -p 601/.test(e.hint));
  });
});
