'use strict';
// The kernel's own run-time statistics of a tracer's BPF programs: with
// kernel.bpf_stats_enabled set, /proc/PID/fdinfo/FD of each program the
// tracer holds says run_cnt (runs) and run_time_ns (time inside it). What a
// program costs the process it runs in, apart from the trap that runs it.
// Root only. bpftrace loads one program per probe, in the order of its
// probes, so the fds in order are the probes in order (fdinfo names no probe).
const fs = require('fs');

const SYSCTL = '/proc/sys/kernel/bpf_stats_enabled';

/** Turns the statistics on; -> a function that puts the setting back. */
function enableStats() {
  const was = fs.readFileSync(SYSCTL, 'utf8').trim();
  fs.writeFileSync(SYSCTL, '1');
  return () => fs.writeFileSync(SYSCTL, was);
}

/** -> [{ fd, id, type, runs, ns }] for every BPF program `pid` holds, in fd order. */
function programStats(pid) {
  const out = [];
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`).map(Number).sort((a, b) => a - b)) {
    let link;
    try { link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { continue; }
    if (link !== 'anon_inode:bpf-prog') continue;
    let info;
    try { info = fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'); } catch { continue; }
    const field = (k) => Number((new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(info) || [])[1]);
    out.push({ fd, id: field('prog_id'), type: field('prog_type'), runs: field('run_cnt'), ns: field('run_time_ns') });
  }
  return out;
}

/** Per program, what ran between two programStats() of one tracer: [{ id, type, runs, ns }]. */
function between(before, after) {
  const was = new Map(before.map((p) => [p.id, p]));
  return after.map((p) => {
    const b = was.get(p.id) || { runs: 0, ns: 0 };
    return { id: p.id, type: p.type, runs: p.runs - b.runs, ns: p.ns - b.ns };
  });
}

/** The bpftrace that a nodetrace command (PID) runs: its child of that name. */
function bpftraceChild(pid) {
  const children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
  const found = children.find((c) => { try { return fs.readFileSync(`/proc/${c}/comm`, 'utf8').trim() === 'bpftrace'; } catch { return false; } });
  if (!found) throw new Error(`no bpftrace under nodetrace (PID ${pid})`);
  return found;
}

/** The BPF run time of `bpftracePid`'s programs while `work()` runs: -> { result, ns }. */
async function runTimeOf(bpftracePid, work) {
  const before = programStats(bpftracePid);
  const result = await work();
  const ns = between(before, programStats(bpftracePid)).reduce((t, p) => t + p.ns, 0);
  return { result, ns };
}

module.exports = { enableStats, programStats, between, bpftraceChild, runTimeOf };
