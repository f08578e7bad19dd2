'use strict';
// What this host has and lacks for tracing Node: each check is a plain object
// so `nodetrace doctor` can print it and tests can assert on it.
const fs = require('fs');
const { detectDtrace, detectBpftrace, chooseTracer, findOnPath, INSTALL_HINT } = require('./tracer/detect');
const { hostNeighbourNote } = require('./tracer/neighbours');
const { commandNotes } = require('./tracer/capabilities');
const podSpec = require('./pod-spec-checks');

function exists(p) {
  try { fs.accessSync(p); return true; } catch { return false; }
}

// Where the kernel's tracing files are: tracefs' own mount point (Linux
// 4.1+), or under debugfs, where older set-ups have it.
const TRACEFS_DIRS = ['/sys/kernel/tracing', '/sys/kernel/debug/tracing'];

function tracefsDir() {
  for (const dir of TRACEFS_DIRS) {
    if (exists(dir + '/uprobe_events') || exists(dir + '/available_events')) return dir;
  }
  return null;
}

// podFacts: pod-spec-checks' gather() (tests give captured ones).
function checks({ podFacts = process.platform === 'linux' ? podSpec.gather() : null } = {}) {
  const out = [];
  const isRoot = typeof process.getuid !== 'function' || process.getuid() === 0;
  out.push({ name: 'root', ok: isRoot, detail: isRoot ? 'running as root' : 'not root: tracing needs sudo' });

  const dtrace = detectDtrace();
  const bpftrace = detectBpftrace();
  out.push({ name: 'dtrace', ok: dtrace.available, optional: true, detail: dtrace.available ? `${dtrace.describe} ${dtrace.version} at ${dtrace.path}` : dtrace.reason });
  const chosen = bpftrace.chosenBy ? ` (chosen by ${bpftrace.chosenBy})` : '';
  out.push({ name: 'bpftrace', ok: bpftrace.available, optional: true, detail: bpftrace.available ? `bpftrace ${bpftrace.version} at ${bpftrace.path}${chosen}` : bpftrace.reason });
  const { tracer } = chooseTracer(undefined, { dtrace: () => dtrace, bpftrace: () => bpftrace });
  out.push({ name: 'tracer', ok: Boolean(tracer), detail: tracer ? `nodetrace will use ${tracer.name} ${tracer.version}` : 'no tracer: ' + INSTALL_HINT });
  // What a trace costs the other Node processes (lib/tracer/neighbours.js).
  if (tracer) out.push({ name: 'others', optional: true, ...hostNeighbourNote(tracer) });
  // What each command does with this bpftrace (snoop always uses bpftrace on Linux).
  if (bpftrace.available) {
    for (const c of commandNotes(bpftrace)) out.push({ name: c.command, ok: c.ok, optional: true, detail: c.detail });
  }

  if (process.platform === 'linux') {
    // In a container (the image): what its run flags or pod spec lack.
    const pod = podFacts ? podSpec.judge(podFacts) : { inContainer: false, checks: [] };
    out.push(...pod.checks);
    const tracefs = tracefsDir();
    out.push({ name: 'tracefs', ok: Boolean(tracefs), detail: tracefs ? `mounted at ${tracefs}` : podSpec.tracefsHint(pod.inContainer) });
    const uprobes = tracefs ? exists(tracefs + '/uprobe_events') : exists('/sys/bus/event_source/devices/uprobe');
    out.push({ name: 'uprobes', ok: uprobes, detail: uprobes ? 'kernel supports uprobes' : 'no uprobe support found (CONFIG_UPROBE_EVENTS)' });
    // loop's, profile's (and --off-cpu's) and http's wire programs read
    // kernel structures through `curtask` (task_struct, pt_regs, the fd
    // table); bpftrace takes their layout from BTF and, without it, refuses
    // to compile them (docs/image.md). The other commands do without.
    const btf = exists('/sys/kernel/btf/vmlinux');
    out.push({ name: 'BTF', ok: btf, optional: true, detail: btf ? '/sys/kernel/btf/vmlinux present'
      : 'no kernel BTF (/sys/kernel/btf/vmlinux): loop, profile and http off the wire cannot compile; '
        + 'use a kernel built with CONFIG_DEBUG_INFO_BTF' });
  }
  const gcore = findOnPath('gcore');
  out.push({ name: 'gcore', ok: Boolean(gcore), optional: true, detail: gcore ? `${gcore} (for ebadf)` : 'missing: install gdb for `nodetrace ebadf` (apt-get install gdb)' });
  const cxxfilt = findOnPath('c++filt');
  out.push({ name: 'c++filt', ok: Boolean(cxxfilt), optional: true, detail: cxxfilt ? 'demangles C++ names from DTrace for Linux' : 'missing: mangled C++ names shown as-is (install binutils)' });
  try {
    const usdt = require('./usdt').status();
    out.push({ name: 'usdt', ok: usdt.native, optional: true, detail: usdt.native ? `USDT provider active (${usdt.dir || 'ok'})` : `USDT provider inactive: ${usdt.reason}` });
  } catch {
    out.push({ name: 'usdt', ok: false, optional: true, detail: 'USDT provider not available in this build' });
  }
  return out;
}

module.exports = { checks, tracefsDir, TRACEFS_DIRS };
