'use strict';
// `nodetrace doctor -p PID`: for one process, who it is (host PID, PID
// inside, container), which Node build it is, where each probe point of the
// latency program was found, the command latency would run (runnable as
// printed), and what each command can and cannot do for it.
// gather() reads /proc, the mapped files and plans latency; describe() and
// render() are pure.
const fs = require('fs');
const path = require('path');
const { findProbePoints, nodeVersionOf, describeBuild, NAPI, LIBUV, QUEUE } = require('./latency/probe-points');
const { identityOf, describeIdentity, identityJson } = require('./proc/container');
const { readProcText } = require('./proc/read-bounded');
const { detectBpftrace, chooseTracer } = require('./tracer/detect');
const { hostNeighbourNote, payingNeighbours } = require('./tracer/neighbours');
const { displayCommand, shellQuote } = require('./tracer/plan');
const psFacts = require('./ps/facts');
const { verdicts } = require('./ps/verdicts');
const { safeText, safeJson } = require('./terminal-safe');
const { plural, noun } = require('./render/text');

// A character no terminal line should carry raw, newline included.
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/;
const { jsFramesLayout } = require('./profile/js-frames');
const { SourceMaps } = require('./source-maps');

const NODETRACE = path.join(__dirname, '..', 'bin', 'nodetrace');

// The other processes named in doctor -p's `others` line and JSON, at most.
const OTHERS_SHOWN = 10;

/**
 * What tracing this process costs the host's other processes: `doctor`'s
 * `others` check and `ps --json`'s `others_cost` (the same sentence,
 * lib/tracer/neighbours.js hostNeighbourNote), and, where they pay, which
 * processes map the files latency, gc and async set uprobes in (this
 * process's node, libnode, libuv: where its probe points were found) now.
 * null when no tracer is found.
 */
function othersCostOf(pid, tracer, found, { neighbours = payingNeighbours } = {}) {
  if (!tracer) return null;
  const note = hostNeighbourNote(tracer);
  const files = [...new Set(Object.values(found.points).map((p) => p.file))];
  const paying = note.ok ? []
    : neighbours({ uprobeFiles: files, tracer, target: { pid }, argv: [] }).sort((a, b) => a.pid - b.pid);
  return {
    tracer: `${tracer.name} ${tracer.version}`,
    othersPay: !note.ok,
    detail: note.detail,
    paying: paying.length,
    payingShown: paying.slice(0, OTHERS_SHOWN).map(({ pid: p, name }) => ({ pid: p, name })),
  };
}

/**
 * The command `nodetrace latency -p PID` would run, as one shell line that
 * runs as printed: the tracer's own command (the plan's environment, the
 * script's full path), or, where the plan instantiates a program of its
 * own, nodetrace's dry run piped to a shell. null when latency cannot run.
 */
function latencyByHand(pid, tracer = detectBpftrace()) {
  if (!tracer.available) return null;
  let plan;
  try {
    // The script as its file says (its functions by name), so that the
    // line is the tracer's own command, runnable without nodetrace.
    plan = require('./commands/latency').plan({ pid: String(pid), force: true }, tracer, { byName: true });
  } catch {
    return null;
  }
  const dryRun = `${displayCommand(NODETRACE, ['latency', '-p', String(pid), '-n'])} | sh`;
  // A program nodetrace only windows runs by hand from its file as it is.
  const asFile = plan.window && plan.window.scriptAsIs && plan.files.length === 1;
  if (!asFile && (plan.programText !== null || plan.files.length)) return dryRun;
  if (plan.links.length || plan.outputFile) return dryRun;
  const argv = plan.argv.map((a) => (typeof a === 'object' ? plan.scriptFile : a));
  const env = Object.entries(plan.env).map(([k, v]) => `${k}=${shellQuote(String(v))}`);
  const line = [...env, displayCommand(plan.tracer.path, argv)].join(' ');
  // Each word is quoted for the shell; one holding a control character or a
  // line break could be shown only escaped, and would then not run as
  // printed: the dry run's form, which holds nothing but the PID, instead.
  return UNPRINTABLE.test(line) ? dryRun : line;
}

function gather(pid) {
  let exePath = '';
  try { exePath = fs.readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, ''); } catch { /* gone or not ours */ }
  const found = findProbePoints(pid);
  const napi = found.points.napi_create_async_work;
  const who = identityOf(pid);
  const facts = psFacts.gather(pid);
  const { tracer } = chooseTracer(undefined);
  return {
    pid,
    who,
    exePath,
    found,
    version: napi ? nodeVersionOf(napi.file) : null,
    otherMountNamespace: Boolean(who.otherMounts),
    byHand: found.missing.length ? null : latencyByHand(pid),
    commands: facts ? verdicts(facts) : [],
    javascript: javascriptFacts(pid, facts),
    othersCost: othersCostOf(pid, tracer, found),
  };
}

// Whether JavaScript frames can be named for this process, and how: V8's
// metadata in its node or libnode (a version nodetrace knows), its perf map.
function javascriptFacts(pid, facts) {
  const found = jsFramesLayout(pid);
  const perfMap = facts && facts.perfMap && facts.perfMap.path && !facts.perfMap.refused ? facts.perfMap.path : null;
  if (found.note) return { v8: null, note: found.note, perfMap };
  const note = found.layout.scopeInfo ? null
    : `V8 ${found.v8}'s ScopeInfo layout was not measured by nodetrace: function names are read from the source text, and unnamed where that fails`;
  // Functions V8 inlined: shown where their caller's code can be read (lib/v8/inlining.js).
  return { v8: found.v8, object: found.object, note, perfMap, inlined: found.codeArguments.CODE ? 'shown' : found.inliningNote, sourceMaps: mainScriptMap(pid) };
}

// Whether the process's main script (the first argument node was given
// that names a .js, .mjs or .cjs file) has a source map nodetrace can read
// (lib/source-maps.js, inside the process's own root) -> { script, found,
// map | why } or null (no such script).
function mainScriptMap(pid) {
  let argv = [];
  let cwd = null;
  const cmdline = readProcText(`/proc/${pid}/cmdline`);
  if (cmdline === null) return null;
  argv = cmdline.split('\0').slice(1, 64);
  try { cwd = fs.readlinkSync(`/proc/${pid}/cwd`); } catch { cwd = null; }
  const arg = argv.find((a) => !a.startsWith('-') && /\.[cm]?js$/.test(a));
  if (!arg || (!arg.startsWith('/') && !cwd)) return null;
  const script = arg.startsWith('/') ? path.posix.normalize(arg) : path.posix.join(cwd, arg);
  const maps = new SourceMaps({ root: `/proc/${pid}/root` });
  try {
    return { script, ...maps.check(script) };
  } finally {
    maps.close();
  }
}

// How functions V8 inlined into their callers are shown.
function inlinedText(inlined) {
  if (!inlined) return '';
  return inlined === 'shown' ? '; functions V8 inlined are shown above their caller' : `; not shown apart: ${inlined}`;
}

// Whether the main script's frames are shown where its source map puts them.
function sourceMapsText(maps) {
  if (!maps) return '';
  if (maps.found) return `; ${maps.script} has a source map (${maps.map}): its frames are shown where it puts them`;
  return maps.why ? `; the source map of ${maps.script} is not read: ${maps.why}` : `; ${maps.script} has no source map`;
}

/** Pure: the JavaScript line of doctor -p, from javascriptFacts(). */
function javascriptText(js) {
  if (!js) return null;
  const alsoMap = js.perfMap ? `; ${js.perfMap} names them too (and profile -c's)` : '';
  if (js.v8) {
    return `named with no flag, from V8 ${js.v8}'s metadata in ${js.object} (profile's threads, worker threads too; ebadf's hit; `
      + `nodetrace stack on its cores)${js.note ? ` (${js.note})` : ''}${inlinedText(js.inlined)}${sourceMapsText(js.sourceMaps)}${alsoMap}`;
  }
  return `not from V8's metadata: ${js.note.replace(/: JavaScript is named from the perf map only$/, '')}; `
    + (js.perfMap ? `named from ${js.perfMap}` : 'named only if node runs with --perf-basic-prof (then from its perf map)');
}

/** The report as data (pure): { pid, process, build, probes: [...], commands, wontWork: [...] }. */
function describe({ pid, who = null, exePath, found, version, otherMountNamespace, byHand = null, commands = [],
  javascript = null, othersCost = null }) {
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
    wontWork.push('ebadf: the native stack has a gap: Debian 12\'s libuv keeps no frame pointers, so the walk goes on '
      + 'from the next frame record up the stack and leaves out what lies between (measured; docs/v8-frames.md)');
  }
  if (otherMountNamespace) {
    wontWork.push(`files: PID ${pid} sees other mounts than nodetrace (${who && who.container ? 'its container\'s' : 'a container?'}): its paths `
      + `(${exePath || 'the executable'}, its libraries) name other files, or none, on this host. nodetrace reads them through `
      + `/proc/${pid}/map_files and inside its own root; bpftrace is given map_files without -p (-p would make it rewrite them); `
      + 'ebadf copies them beside the core, where the printed gdb line finds them');
  }
  return {
    pid,
    process: who ? identityJson(who) : null,
    describe: who ? describeIdentity(who) : `PID ${pid}`,
    executable: exePath,
    latencyByHand: byHand,
    nodeVersion: version,
    node: build.node,
    libuv: build.libuv + (build.libuvStripped ? ' (stripped)' : ''),
    otherMountNamespace,
    probes,
    commands,
    javascript: javascriptText(javascript),
    othersCost,
    wontWork,
  };
}

/** Pure: the `others` line of doctor -p, from othersCostOf(), or null. */
function othersText(cost) {
  if (!cost) return null;
  if (!cost.othersPay) return cost.detail;
  const shown = cost.payingShown.map((o) => `${o.pid} ${o.name}`).join(', ');
  const more = cost.paying > cost.payingShown.length ? ` and ${cost.paying - cost.payingShown.length} more` : '';
  const now = cost.paying
    ? `now ${plural(cost.paying, 'other process', 'other processes')} ${noun(cost.paying, 'maps', 'map')} the files its probes would be set in (PID ${shown}${more})`
    : 'no other process maps the files its probes would be set in now';
  return `${now}; ${cost.detail}`;
}

function render(report) {
  const lines = [];
  const inside = report.otherMountNamespace && report.executable ? ' (its path in its own mounts)' : '';
  lines.push(`${report.describe}: ${report.executable || '(executable unknown)'}${inside}`);
  lines.push(`  Node     ${report.nodeVersion ? 'v' + report.nodeVersion : 'version not found'}; N-API ${report.node}; libuv ${report.libuv}`);
  if (report.javascript) lines.push(`  JS       ${report.javascript}`);
  lines.push(`  mounts   ${report.otherMountNamespace ? 'another mount namespace than nodetrace\'s (its container\'s)' : 'the same mount namespace as nodetrace'}`);
  const others = othersText(report.othersCost);
  if (others) lines.push(`  others   ${others}`);
  lines.push('  latency probe points:');
  const width = Math.max(...report.probes.map((p) => p.name.length));
  for (const p of report.probes) {
    const where = p.found
      ? `${p.location === p.name ? 'symbol' : p.location} in ${p.object}${p.how === 'symbol' ? '' : ` (${p.how.replace(/^address: /, '')})`}`
      : `NOT FOUND: ${p.why}`;
    lines.push(`    ${p.name.padEnd(width)}  ${where}`);
  }
  if (report.latencyByHand) lines.push(`  by hand: ${report.latencyByHand}`);
  if (report.commands.length) {
    lines.push('  what each command can do for it:');
    for (const c of report.commands) lines.push(`    ${c.command.padEnd(8)} ${c.can}${c.why ? `: ${c.why}` : ''}`);
  }
  lines.push(report.wontWork.length ? '  what will not work, or works differently:' : '  nothing known not to work for this process');
  for (const w of report.wontWork) lines.push(`    - ${w}`);
  // Paths and names are the process's users' to choose: escapes and line
  // breaks in them are shown, never obeyed, and each stays on its line.
  return lines.map((l) => safeText(l, { oneLine: true })).join('\n') + '\n';
}

// The report as JSON, safe for a terminal too (lib/terminal-safe.js).
function renderJson(report) {
  return safeJson(report) + '\n';
}

module.exports = { gather, describe, render, renderJson, latencyByHand, javascriptText, othersCostOf };
