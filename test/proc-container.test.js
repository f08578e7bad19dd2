'use strict';
// Who a process is: host PID, PID inside, container (lib/proc/container.js),
// from /proc text captured on this host (test/fixtures/proc-*.txt, each with
// its .cmd).
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const c = require('../lib/proc/container');

const fixture = (name) => fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');
const PODMAN_ID = '2548ee601a87a55cc6d4d8d8e1fb1a80ac65b56ee71809651165f4e86c6de606';

describe('process identity (lib/proc/container.js)', () => {
  const names = c.parsePodmanStore(fixture('podman-containers.json'));

  it('reads podman\'s record of its containers: ID to name', () => {
    assert.strictEqual(names.get(PODMAN_ID), 'web-frontend');
    assert.strictEqual(c.parsePodmanStore('not json').size, 0);
    assert.strictEqual(c.parsePodmanStore('{"id": 1}').size, 0);
  });

  it('reads the store in the host\'s root when it runs in a container of its own (--pid=host): the same names, never through a link out of that root', function () {
    if (process.getuid() !== 0) this.skip();   // the store must be root's
    const os = require('os');
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-hostroot-'));
    try {
      const dir = path.join(root, 'var/lib/containers/storage/overlay-containers');
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'containers.json'), fixture('podman-containers.json'));
      assert.strictEqual(c.namesFromStores(root).get(PODMAN_ID), 'web-frontend');
      // A store that is a link to a file outside that root names nothing.
      const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-outside-'));
      try {
        fs.renameSync(path.join(dir, 'containers.json'), path.join(outside, 'containers.json'));
        fs.symlinkSync(path.join(outside, 'containers.json'), path.join(dir, 'containers.json'));
        assert.strictEqual(c.namesFromStores(root).size, 0);
      } finally {
        fs.rmSync(outside, { recursive: true, force: true });
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('takes PID 2 for the host\'s root only if the kernel flags it as its thread (/proc/PID/stat, read on this host)', () => {
    // `cat /proc/2/stat` and `cat /proc/1/stat` here, 2026-11-30: kthreadd, and this VM's init.
    assert.strictEqual(c.isKernelThreadStat('2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 2 0 0 20 0 1 0 24 0 0'), true);
    assert.strictEqual(c.isKernelThreadStat('1 (process_api) S 0 0 0 0 -1 4194560 160602 704204358 0 51854'), false);
    // A process may name itself anything, parentheses and spaces included.
    assert.strictEqual(c.isKernelThreadStat('2 (x) S 0 0 0 0 -1 2129984 (y) S 0 0 0 0 -1 4194560 0'), false);
    assert.strictEqual(c.isKernelThreadStat(''), false);
  });

  it('node as PID 1 of a podman container: host PID, PID 1 inside, the container by ID, runtime and name', () => {
    const id = c.identityFrom({ pid: 16441, status: fixture('proc-status-podman.txt'), cgroup: fixture('proc-cgroup-podman.txt'), names, otherMounts: true });
    assert.deepStrictEqual(id.nsPids, [16441, 1]);
    assert.strictEqual(id.pidInside, 1);
    assert.deepStrictEqual(id.container, { id: PODMAN_ID, runtime: 'podman', name: 'web-frontend' });
    assert.strictEqual(c.describeIdentity(id), 'PID 16441 (PID 1 in podman container web-frontend (2548ee601a87))');
    assert.deepStrictEqual(c.identityJson(id), { pid: 16441, pid_inside: 1, container: { id: PODMAN_ID, runtime: 'podman', name: 'web-frontend' } });
  });

  it('a process podman exec started in that container: its own PID inside, the same container', () => {
    const id = c.identityFrom({ pid: 16529, status: fixture('proc-status-podman-exec.txt'), cgroup: fixture('proc-cgroup-podman-exec.txt'), names });
    assert.strictEqual(id.pidInside, 12);
    assert.strictEqual(id.container.id, PODMAN_ID);
    assert.strictEqual(c.describeIdentity(id), 'PID 16529 (PID 12 in podman container web-frontend (2548ee601a87))');
  });

  it('a container whose name nodetrace cannot read is named by its short ID', () => {
    const id = c.identityFrom({ pid: 16441, status: fixture('proc-status-podman.txt'), cgroup: fixture('proc-cgroup-podman.txt') });
    assert.strictEqual(c.describeIdentity(id), 'PID 16441 (PID 1 in podman container 2548ee601a87)');
  });

  it('a process on the host: no PID inside, no container (the host\'s own hex-named memory cgroup is none)', () => {
    const id = c.identityFrom({ pid: 16477, status: fixture('proc-status-host.txt'), cgroup: fixture('proc-cgroup-host.txt'), names });
    assert.strictEqual(id.pidInside, null);
    assert.strictEqual(id.container, null);
    assert.strictEqual(c.describeIdentity(id), 'PID 16477');
    assert.deepStrictEqual(c.identityJson(id), { pid: 16477, pid_inside: null, container: null });
  });

  it('a PID namespace of its own with no container (unshare --pid): said as such', () => {
    const id = c.identityFrom({ pid: 16489, status: fixture('proc-status-unshare.txt'), cgroup: fixture('proc-cgroup-unshare.txt'), names });
    assert.strictEqual(id.pidInside, 1);
    assert.strictEqual(id.container, null);
    assert.strictEqual(c.describeIdentity(id), 'PID 16489 (PID 1 in its own PID namespace)');
  });

  // Not captured here (no docker, containerd or kubelet on this host): the
  // paths these runtimes document, so that their containers are not taken
  // for host processes. The IDs are made up.
  it('the cgroup paths of other runtimes (documented forms, not captured here)', () => {
    const hex = 'ab'.repeat(32);
    const cases = [
      [`0::/system.slice/docker-${hex}.scope`, 'docker'],
      [`12:pids:/docker/${hex}`, 'docker'],
      [`0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_5678.slice/cri-containerd-${hex}.scope`, 'containerd'],
      [`0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1234.slice/crio-${hex}.scope`, 'cri-o'],
      [`11:memory:/kubepods/burstable/pod0f1e2d3c-aaaa-bbbb-cccc-0123456789ab/${hex}`, 'kubernetes'],
      [`0::/machine.slice/libpod-${hex}.scope/container`, 'podman'],
      [`0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-${hex}.scope`, 'podman'],
    ];
    for (const [line, runtime] of cases) {
      assert.deepStrictEqual(c.containerOfCgroups(c.parseCgroup(line)), { id: hex, runtime }, line);
    }
    // podman's monitor (conmon) is not the container.
    assert.strictEqual(c.containerOfCgroups(c.parseCgroup(`0::/machine.slice/libpod-conmon-${hex}.scope`)), null);
  });

  it('a process that is gone: nothing known, nothing invented', () => {
    const id = c.identityFrom({ pid: 5, status: null, cgroup: null });
    assert.deepStrictEqual([id.pidInside, id.container, id.nsPids], [null, null, []]);
    assert.strictEqual(c.describeIdentity(id), 'PID 5');
  });

  it('reads a live process: this one, on the host\'s side of any container', () => {
    const id = c.identityOf(process.pid);
    assert.strictEqual(id.pid, process.pid);
    assert.strictEqual(id.nsPids[0], process.pid);
    assert.strictEqual(id.otherMounts, false);
  });
});
