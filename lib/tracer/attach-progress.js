'use strict';
// How far a tracer has got attaching its probes, read from its open files:
// bpftrace holds a perf event per probe (0.17, and uprobes without
// uprobe_multi) or a BPF link per probe or probe group (newer versions),
// and 0.17 a perf event per CPU for its output. Attaching is slow on a busy
// host (docs/platforms.md, "Learned 2026-11-27"), so a tracer whose count
// still grows is not given up on. A measure of progress, not a probe count.
const fs = require('fs');

const PROBE_FILE = /^anon_inode:(\[perf_event\]|bpf_link)$/;

/** The tracer's perf events and BPF links, 0 if they cannot be read. */
function attachedProbeCount(pid) {
  let names;
  try { names = fs.readdirSync(`/proc/${pid}/fd`); } catch { return 0; }
  let n = 0;
  for (const fd of names) {
    try { if (PROBE_FILE.test(fs.readlinkSync(`/proc/${pid}/fd/${fd}`))) n++; } catch { /* closed meanwhile */ }
  }
  return n;
}

module.exports = { attachedProbeCount };
