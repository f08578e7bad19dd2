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

describe('targets by pod: --pod NAME or UID (lib/targets/pods.js)', function () {
  const { resolveOneTarget, podPidsTarget } = require('../lib/targets/one-process');
  const { podProcesses, podsOn } = require('../lib/targets/pods');
  const WEB = { kind: 'kubernetes', uid: '0f1e2d3c-aaaa-4bbb-8ccc-0123456789ab', qos: 'burstable', name: 'web-7d4b9' };
  const API = { kind: 'kubernetes', uid: '0f1e2d3c-bbbb-4bbb-8ccc-0123456789ab', qos: 'guaranteed', name: null };
  // Another pod that claims WEB's name in its environment.
  const FORGER = { kind: 'podman', uid: 'cd'.repeat(32), qos: null, name: 'web-7d4b9' };
  const procs = {
    1: { cmd: '/sbin/init', node: false },
    400: { cmd: '/pause', node: false, pod: { ...WEB, name: null } },
    500: { cmd: 'node /app/server.js', node: true, pod: WEB },
    600: { cmd: 'node /app/api.js', node: true, pod: API },
    601: { cmd: 'node /app/api-worker.js', node: true, pod: API },
    700: { cmd: 'node batch.js', node: true },
  };
  function host(extra = {}) {
    const all = { ...procs, ...extra };
    return {
      isRunning: (pid) => pid in all,
      looksLikeNode: (pid) => Boolean(all[pid].node),
      commandLine: (pid) => all[pid].cmd,
      allPids: () => Object.keys(all).map(Number),
      identityOf: (pid) => ({ pid, pidInside: null, container: null, pod: all[pid].pod || null }),
      cpuTicks: (pid) => pid,
      sleep: () => {},
    };
  }
  const GC = { command: 'gc', force: false, verbing: 'tracing' };

  it('by name, by UID or 8 characters of it: the pod\'s one Node process, said with its pod', function () {
    assert.deepStrictEqual(podsOn(host()).map((p) => [p.pod.uid, p.pod.name, p.pids]), [[WEB.uid, 'web-7d4b9', [400, 500]], [API.uid, null, [600, 601]]]);
    for (const asked of ['web-7d4b9', WEB.uid, '0f1e2d3c-aaaa', WEB.uid.toUpperCase()]) {
      const r = resolveOneTarget({ pod: asked }, host(), GC);
      assert.strictEqual(r.pid, 500, asked);
      assert.strictEqual(r.note, `tracing the Node process of pod web-7d4b9 (${WEB.uid}): 500 node /app/server.js`);
    }
  });

  it('strict: part of a name or a UID prefix under 8 characters names none (exit 3), one two pods share names both (exit 2)', function () {
    for (const asked of ['web', 'web-7d4b', '0f1e2d3', 'server.js']) {
      assert.throws(() => podProcesses(asked, host(), GC), (e) => e.exitCode === 3 && /no pod with a process on this host/.test(e.message)
        && /pod web-7d4b9/.test(e.hint) && /nodetrace ps/.test(e.hint), asked);
    }
    // "0f1e2d3c" starts both UIDs.
    assert.throws(() => podProcesses('0f1e2d3c', host(), GC), (e) => e.exitCode === 2 && /names 2 pods/.test(e.message) && /--pod UID/.test(e.hint));
    // A pod that says another's name is not taken for it: both listed, by UID.
    assert.throws(() => podProcesses('web-7d4b9', host({ 800: { cmd: 'node x.js', node: true, pod: FORGER } }), GC),
      (e) => e.exitCode === 2 && /names 2 pods/.test(e.message) && e.message.includes(WEB.uid) && e.message.includes('cdcdcdcdcdcd'));
  });

  it('several Node processes: one-process commands refuse (exit 2), listing them; many-process commands take them all', function () {
    assert.throws(() => resolveOneTarget({ pod: API.uid }, host(), GC), (e) => e.exitCode === 2 && /has 2 Node processes/.test(e.message) && /601 node \/app\/api-worker\.js/.test(e.message));
    // ebadf and doctor take any program (force): not the pod's pause beside its node.
    assert.strictEqual(resolveOneTarget({ pod: 'web-7d4b9' }, host(), { ...GC, force: true }).pid, 500);
    const r = podPidsTarget(API.uid, { command: 'snoop', verbing: 'snooping', host: host() });
    assert.deepStrictEqual(r, { pid: '600,601', note: `snooping the Node processes of pod ${API.uid}: PID 600, 601` });
  });

  it('--pod is one way to give the target: with another, or empty, a usage error; with snoop\'s and http\'s --container too', function () {
    const { checkTarget } = require('../lib/targets/options');
    assert.throws(() => checkTarget({ pod: 'web', pid: '4242' }), /Give one target: .*--pod NAME.*, not -p and --pod\./);
    assert.throws(() => checkTarget({ pod: 'web', container: 'web' }), /not --container and --pod\./);
    assert.throws(() => checkTarget({ pod: 'web', target: '*' }, { many: true, extra: ['container'] }), /not a target and --pod\./);
    assert.throws(() => checkTarget({ pod: ' ' }), /--pod expects a pod's name or its UID/);
    assert.doesNotThrow(() => checkTarget({ pod: 'web' }));
    assert.doesNotThrow(() => checkTarget({ pod: 'web' }, { many: true, extra: ['container'] }));
  });

  it('no pod here: said so, with nodetrace ps; a pod\'s name is escaped where it is said', function () {
    const h = host();
    h.allPids = () => [1, 700];
    assert.throws(() => podProcesses('web-7d4b9', h, GC), (e) => e.exitCode === 3 && /No process on this host runs in a pod/.test(e.hint));
    const evil = { ...WEB, uid: '99999999-aaaa-4bbb-8ccc-0123456789ab', name: 'x\x1b[2Jy\nz' };
    assert.throws(() => podProcesses('nope-pod', host({ 900: { cmd: 'node e.js', node: true, pod: evil } }), GC),
      (e) => {
        const line = e.hint.split('\n').find((l) => l.includes('99999999-aaaa'));
        return !e.hint.includes('\x1b') && /x.*y.*z/.test(line);
      });
  });
});
