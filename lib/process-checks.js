'use strict';
// `nodetrace doctor -p PID`: for one process, which Node build it is, where
// each probe point of the latency program was found, and what will not work.
// gather() reads /proc and the mapped files; describe() and render() are pure.
const fs = require('fs');
const path = require('path');
const { findProbePoints, nodeVersionOf, describeBuild, NAPI, LIBUV, QUEUE } = require('./latency/probe-points');
const { latencyProgram } = require('./latency/program');
const { planTracer, displayCommand, shellQuote } = require('./tracer/plan');

// The latency trace of this process as a command to run by hand, from the
// same program and arguments `nodetrace latency -p PID` would run, quoted
// for a POSIX shell: the bpftrace on the PATH, on the file in d-scripts/.
// Where nodetrace would run a program instantiated from that file (libuv's
// pool functions without symbols: its @pool part left out), the command is
// nodetrace's own dry run, which writes that program and runs it.
function latencyByHand(points, pid) {
  const program = latencyProgram(points, { pid });
  if (program.programText !== undefined) return `nodetrace latency -p ${shellQuote(String(pid))} --dry-run | sh`;
  const plan = planTracer({ name: 'bpftrace', path: 'bpftrace', version: null }, {
    script: program.script, pid, args: program.args, extra: program.extra,
  });
  return displayCommand('bpftrace', plan.argv);
}

function mountNamespace(pid) {
  try { return fs.readlinkSync(`/proc/${pid}/ns/mnt`); } catch (err) { return null; }
}

function gather(pid) {
  let exePath = '';
  try { exePath = fs.readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, ''); } catch (err) { /* gone or not ours */ }
  const found = findProbePoints(pid);
  const napi = found.points.napi_create_async_work;
  const ns = mountNamespace(pid);
  return {
    pid,
    exePath,
    found,
    version: napi ? nodeVersionOf(napi.file) : null,
    otherMountNamespace: Boolean(ns && mountNamespace('self') && ns !== mountNamespace('self')),
  };
}

/** The report as data (pure): { pid, build, probes: [...], wontWork: [...] }. */
function describe({ pid, exePath, found, version, otherMountNamespace }) {
  const build = describeBuild(found, exePath);
  const probes = [...NAPI, ...LIBUV, ...QUEUE].map((name) => {
    const p = found.points[name];
    if (p) return { name, found: true, location: p.location, object: p.object, file: p.file, how: p.how };
    const m = found.missing.find((x) => x.name === name);
    return { name, found: false, why: m ? m.why : 'not found' };
  });
  const wontWork = [];
  if (found.missing.length) {
    wontWork.push(`latency: ${found.missing.length} of its 6 probe points not found (${found.missing.map((m) => m.name).join(', ')}): it will refuse to run rather than report no work`);
  }
  if (build.libuvStripped) {
    wontWork.push(`latency with DTrace: ${path.basename(build.libuvIn)} is stripped and the D script names uv__queue_work/uv__queue_done; `
      + 'bpftrace is given their addresses instead (with --unsafe, which 0.17 needs for an address outside every symbol)');
  }
  if (build.node.startsWith('shared')) {
    wontWork.push('ebadf: the native stack may stop in libc: Debian 12\'s nodejs 18 (a shared libnode) keeps no frame pointers, '
      + 'so bpftrace\'s ustack ends at the innermost libc frame (measured; docs/platforms.md)');
  }
  if (otherMountNamespace) {
    wontWork.push(`files: PID ${pid} is in another mount namespace (a container?): its paths (${exePath || 'the executable'}, its libraries) `
      + `name other files, or none, on this host; nodetrace reads them through /proc/${pid}/map_files, and gdb needs /proc/${pid}/root${exePath}`);
  }
  return {
    pid,
    executable: exePath,
    latencyByHand: found.missing.length ? null : latencyByHand(found.points, pid),
    nodeVersion: version,
    node: build.node,
    libuv: build.libuv + (build.libuvStripped ? ' (stripped)' : ''),
    otherMountNamespace,
    probes,
    wontWork,
  };
}

function render(report) {
  const lines = [];
  lines.push(`PID ${report.pid}: ${report.executable || '(executable unknown)'}`);
  lines.push(`  Node     ${report.nodeVersion ? 'v' + report.nodeVersion : 'version not found'}; N-API ${report.node}; libuv ${report.libuv}`);
  lines.push(`  mounts   ${report.otherMountNamespace ? 'another mount namespace than nodetrace\'s (a container?)' : 'the same mount namespace as nodetrace'}`);
  lines.push('  latency probe points:');
  const width = Math.max(...report.probes.map((p) => p.name.length));
  for (const p of report.probes) {
    const where = p.found
      ? `${p.location === p.name ? 'symbol' : p.location} in ${p.object}${p.how === 'symbol' ? '' : ` (${p.how.replace(/^address: /, '')})`}`
      : `NOT FOUND: ${p.why}`;
    lines.push(`    ${p.name.padEnd(width)}  ${where}`);
  }
  if (report.latencyByHand) lines.push(`  by hand: ${report.latencyByHand}`);
  lines.push(report.wontWork.length ? '  what will not work, or works differently:' : '  nothing known not to work for this process');
  for (const w of report.wontWork) lines.push(`    - ${w}`);
  return lines.join('\n') + '\n';
}

module.exports = { gather, describe, render };
