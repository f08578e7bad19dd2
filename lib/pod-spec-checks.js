'use strict';
// What a container running nodetrace (the image, docs/image.md) lacks to
// trace the host's Node processes, said as the flag or pod-spec field that
// gives it: privileges, the host's PID namespace, bpffs. (tracefs has its
// own check in host-checks.js, whose hint this module words for a
// container.) Gathering reads only this process's own /proc files, bounded;
// judging is pure, so that tests hold it to captured inputs.
const fs = require('fs');
const { readProcText } = require('./proc/read-bounded');
const { readLink } = require('./proc');

// include/linux/proc_ns.h: the initial PID namespace's inode number
// (PROC_PID_INIT_INO = 0xEFFFFFFC), the same on every kernel since 3.8.
const HOST_PID_NAMESPACE = 'pid:[4026531836]';
// include/uapi/linux/capability.h
const CAP_SYS_ADMIN = 21;
const CAP_PERFMON = 38;
const CAP_BPF = 39;

function exists(p) {
  try { fs.accessSync(p); return true; } catch { return false; }
}

/** This process's own facts, as judge() takes them (null where unreadable). */
function gather() {
  return {
    status: readProcText('/proc/self/status'),
    pidNamespace: readLink('/proc/self/ns/pid'),
    mounts: readProcText('/proc/self/mounts'),
    // Set by podman (/run/.containerenv), docker (/.dockerenv), systemd-nspawn
    // and podman (the environment's `container`), Kubernetes (its service
    // variables); a container without any of them is still told by its PID
    // namespace.
    containerMarks: ['/run/.containerenv', '/.dockerenv'].filter(exists)
      .concat(['container', 'KUBERNETES_SERVICE_HOST'].filter((v) => process.env[v] !== undefined)),
  };
}

function statusField(status, name) {
  const m = new RegExp(`^${name}:\\s*(\\S+)`, 'm').exec(status || '');
  return m ? m[1] : null;
}

function hasCap(hex, cap) {
  return /^[0-9a-f]{1,16}$/i.test(hex || '') && ((BigInt('0x' + hex) >> BigInt(cap)) & 1n) === 1n;
}

/**
 * @param {object} f gather()'s facts
 * @returns {{ inContainer: boolean, checks: Array<{ name, ok, optional?, detail }> }}
 */
function judge(f) {
  const hostPid = f.pidNamespace === HOST_PID_NAMESPACE;
  const inContainer = f.containerMarks.length > 0 || (f.pidNamespace !== null && !hostPid);
  const checks = [];

  // bpftrace loads programs (bpf) and attaches uprobes and perf events
  // (perf_event_open): CAP_SYS_ADMIN, or CAP_BPF with CAP_PERFMON (Linux
  // 5.8+). A container's default set has neither, and its seccomp filter
  // refuses bpf() without them.
  const capEff = statusField(f.status, 'CapEff');
  const seccomp = statusField(f.status, 'Seccomp');
  const sysAdmin = hasCap(capEff, CAP_SYS_ADMIN);
  const bpfPerfmon = hasCap(capEff, CAP_BPF) && hasCap(capEff, CAP_PERFMON);
  const filtered = seccomp !== null && seccomp !== '0' ? ', under a seccomp filter' : '';
  if (capEff === null) {
    checks.push({ name: 'privilege', ok: false, optional: true, detail: 'cannot read this process\'s capabilities (/proc/self/status)' });
  } else if (sysAdmin || bpfPerfmon) {
    checks.push({ name: 'privilege', ok: true, detail: `may load BPF programs and attach probes (${sysAdmin ? 'CAP_SYS_ADMIN' : 'CAP_BPF and CAP_PERFMON'}${filtered})` });
  } else {
    checks.push({
      name: 'privilege', ok: false,
      detail: 'lacks CAP_SYS_ADMIN (or CAP_BPF and CAP_PERFMON): '
        + (inContainer ? 'run the container privileged: podman/docker run --privileged, a pod\'s securityContext.privileged: true' : 'run nodetrace as root with full capabilities'),
    });
  }

  // bpftrace's `pid` is the host's: from another PID namespace, -p PID would
  // name a process the tracer never sees (silently nothing).
  if (f.pidNamespace === null) {
    checks.push({ name: 'hostPID', ok: false, optional: true, detail: 'cannot read this process\'s PID namespace (/proc/self/ns/pid)' });
  } else if (hostPid) {
    checks.push({ name: 'hostPID', ok: true, detail: 'in the host\'s PID namespace: -p takes the host\'s PIDs' });
  } else {
    checks.push({
      name: 'hostPID', ok: false,
      detail: 'not in the host\'s PID namespace: the tracer sees host PIDs, these are not; '
        + 'run with podman/docker run --pid=host, a pod\'s hostPID: true',
    });
  }

  // bpftrace pins nothing, so it runs without bpffs; said for tools beside it.
  const bpffs = (f.mounts || '').split('\n').some((line) => line.split(' ')[2] === 'bpf');
  checks.push({
    name: 'bpffs', ok: bpffs, optional: true,
    detail: bpffs ? 'mounted' : 'not mounted: not needed by nodetrace (bpftrace pins nothing); '
      + (inContainer ? 'give it with -v /sys/fs/bpf:/sys/fs/bpf or a hostPath volume if other tools need it' : 'mount -t bpf bpf /sys/fs/bpf if other tools need it'),
  });
  return { inContainer, checks };
}

/** host-checks' tracefs hint, worded for where nodetrace runs. */
function tracefsHint(inContainer) {
  return inContainer
    ? 'not mounted: give the host\'s with -v /sys/kernel/tracing:/sys/kernel/tracing (podman/docker) or a hostPath volume of /sys/kernel/tracing (Kubernetes)'
    : 'not mounted: sudo mount -t tracefs nodev /sys/kernel/tracing';
}

module.exports = { gather, judge, tracefsHint, HOST_PID_NAMESPACE };
