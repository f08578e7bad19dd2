'use strict';
// The profile report, in the spirit of `node --prof-process`: top functions
// by self and by total samples with their shares, the split by category, the
// threads that took the samples, and what share fell in JIT code with no
// name. Pure: named stacks in, a summary object out, then text or JSON.
const { CATEGORIES, CATEGORY_LABELS, UNNAMED_JIT } = require('./frames');
const { safeText, safeJson } = require('../terminal-safe');
const { plural } = require('../render/text');
const { threadLabel, groupKey } = require('../threads/roles');
const { NO_USER_STACK } = require('../render/map-full');

const JSON_VERSION = 1;

// Threads by what they are (lib/threads/roles.js), as lib/threads/identify.js
// read them from the process: one row for the main thread and for each
// Worker, one for each other role. `identityOf(tid)`: an identity or null
// (a thread that came and went between two looks).
function threadRows(perTid, identityOf) {
  const rows = new Map();
  for (const t of perTid.values()) {
    const identity = identityOf(t.tid);
    const key = groupKey(identity, t.tid);
    if (!rows.has(key)) {
      rows.set(key, {
        role: identity ? identity.role : 'exited',
        label: threadLabel(identity),
        ...(identity && identity.role === 'worker' ? { worker: { thread_id: identity.worker.threadId, name: identity.worker.name || null } } : {}),
        threads: 0, tids: [], samples: 0,
      });
    }
    const r = rows.get(key);
    r.threads++;
    r.tids.push(t.tid);
    r.samples += t.samples;
  }
  for (const r of rows.values()) r.tids.sort((a, b) => a - b);
  return [...rows.values()];
}

function share(n, total) {
  return total ? n / total : 0;
}

function topOf(map, total, limit) {
  return [...map.values()]
    .sort((a, b) => b.samples - a.samples || (a.name < b.name ? -1 : 1))
    .slice(0, limit)
    .map((f) => ({ ...f, share: share(f.samples, total) }));
}

/**
 * @param {object} named from nameStacks(): { stacks: [{tid, comm, frames (root first), count}], perfMap }
 * @param {object} o { pid, who (lib/proc/container.js identityJson: host PID, PID inside, container), hz, seconds, top = 15,
 *   identityOf(tid): the thread's identity (lib/threads/identify.js), or null }
 */
function summarize(named, { pid, who = null, hz, seconds, top = 15, identityOf = (tid) => (tid === pid ? { role: 'main' } : null) } = {}) {
  const total = named.stacks.reduce((n, s) => n + s.count, 0);
  const self = new Map();
  const inclusive = new Map();
  const categories = Object.fromEntries(CATEGORIES.map((c) => [c, 0]));
  const origins = { app: 0, node: 0, node_modules: 0 };
  const threads = new Map();
  const fnKey = (f) => f.category + '\0' + f.name;
  // A function is one row however it ran: `inlined` counts the samples
  // in which it ran only inlined into a caller (lib/profile/js-frames.js).
  const entry = (map, f) => {
    const k = fnKey(f);
    if (!map.has(k)) map.set(k,
      { name: f.name, category: f.category, ...(f.origin ? { origin: f.origin } : {}),
        ...(f.generated ? { generated: f.generated } : {}), samples: 0, inlined: 0 });
    return map.get(k);
  };
  for (const s of named.stacks) {
    const leaf = s.frames[s.frames.length - 1] || { name: NO_USER_STACK, category: 'unknown' };
    const own = entry(self, leaf);
    own.samples += s.count;
    if (leaf.inlined) own.inlined += s.count;
    categories[leaf.category] += s.count;
    if (leaf.origin) origins[leaf.origin] += s.count;
    // Recursion counts once; inlined, where every frame of it was.
    const seen = new Map();
    for (const f of s.frames) {
      const k = fnKey(f);
      seen.set(k, { f, inlined: (seen.has(k) ? seen.get(k).inlined : true) && Boolean(f.inlined) });
    }
    for (const { f, inlined } of seen.values()) {
      const e = entry(inclusive, f);
      e.samples += s.count;
      if (inlined) e.inlined += s.count;
    }
    if (!threads.has(s.tid)) threads.set(s.tid, { tid: s.tid, samples: 0 });
    threads.get(s.tid).samples += s.count;
  }
  const jitUnnamed = categories.jit;
  return {
    version: JSON_VERSION,
    command: 'profile',
    pid,
    ...(who ? { process: who } : {}),
    hz: hz == null ? null : hz,
    seconds: seconds == null ? null : seconds,
    samples: total,
    // On-CPU samples over the samples one always-busy thread would give.
    busyCpus: hz && seconds ? total / (hz * seconds) : null,
    categories: CATEGORIES.map((c) => ({ category: c, label: CATEGORY_LABELS[c], samples: categories[c],
      share: share(categories[c], total) })),
    jsOrigins: Object.entries(origins).map(([origin, samples]) => ({ origin, samples, share: share(samples, total) })),
    threads: threadRows(threads, identityOf).sort((a, b) => b.samples - a.samples)
      .map((r) => ({ ...r, share: share(r.samples, total) })),
    self: topOf(self, total, top),
    total: topOf(inclusive, total, top),
    // The application's view: event-loop and V8 frames under every sample
    // say nothing; JavaScript functions with what they call do.
    totalJs: topOf(new Map([...inclusive].filter(([, f]) => f.category === 'js')), total, top),
    jit: { unnamedSamples: jitUnnamed, unnamedShare: share(jitUnnamed, total), perfMap: named.perfMap || null,
      v8: named.v8 || null },
  };
}

const CATEGORY_SHORT = { js: 'JS', jit: 'JIT?', v8: 'V8', node: 'Node', addon: 'add-on', libc: 'libc', kernel: 'kernel', unknown: '?' };
const ORIGIN_LABEL = { app: 'the application', node: "Node's own JavaScript (node:...)", node_modules: 'node_modules' };

// A share as the tables' column: ' 12.3%'.
function pct(x) {
  return (100 * x).toFixed(1).padStart(5) + '%';
}

// How much of a row's samples its function ran inlined into a caller.
function inlinedNote(f) {
  if (!f.inlined) return '';
  if (f.inlined === f.samples) return '  (inlined)';
  const p = (100 * f.inlined) / f.samples;
  return `  (${p < 1 ? '<1' : Math.round(p)}% inlined)`;
}

function functionRows(rows) {
  return rows.map((f) => `  ${pct(f.share)} ${String(f.samples).padStart(7)}  ${(CATEGORY_SHORT[f.category] + (f.origin && f.origin !== 'app' ? '/' + (f.origin === 'node' ? 'node' : 'npm') : '')).padEnd(9)} ${safeText(f.name, { oneLine: true })}${inlinedNote(f)}`);
}

// Why JIT frames have no name, and what to do, said once.
function jitAdvice(summary) {
  const j = summary.jit;
  if (!j.unnamedSamples) return [];
  const lines = [`${pct(j.unnamedShare).trim()} of samples were in JIT-compiled JavaScript that has no name.`];
  if (j.v8 && j.v8.used) {
    lines.push('  JavaScript is named from V8\'s own metadata, on every thread: those frames held no function there');
    lines.push('  (V8\'s stubs), or one deeper than the 64 frames walked.');
  } else if (j.perfMap && j.perfMap.refused) {
    lines.push(`  ${j.perfMap.path} was not read: ${j.perfMap.refused}.`);
  } else if (!j.perfMap || !j.perfMap.used) {
    lines.push('  Name it: start node with --perf-basic-prof (or --perf-basic-prof-only-functions), which writes');
    lines.push('  /tmp/perf-PID.map; it costs little CPU but the file grows for the life of the process (docs/performance.md).');
  } else {
    lines.push('  The perf map had no entry for that code (compiled before --perf-basic-prof took effect, or code V8 moved).');
  }
  return lines;
}

// "Worker 1 \"resize\" (TID 4250)", "libuv pool (4 threads)".
function threadRowText(t) {
  if (t.threads > 1) return `${t.label} (${t.threads} threads)`;
  return t.role === 'main' ? t.label : `${t.label} (TID ${t.tids[0]})`;
}

function renderText(summary, { describe = '' } = {}) {
  const out = [];
  const s = summary;
  const busy = s.busyCpus == null ? '' : `, ${s.busyCpus.toFixed(2)} CPUs busy on average`;
  out.push(`Profile of ${describe ? safeText(describe, { oneLine: true }) : `PID ${s.pid}`}: ${s.samples} on-CPU samples at ${s.hz} Hz in ${s.seconds == null ? '?' : s.seconds.toFixed(1)} s${busy}.`);
  if (!s.samples) {
    out.push('No samples: the process used no CPU while it was sampled.');
    return safeText(out.join('\n') + '\n');
  }
  out.push('', 'Where the CPU was (the sampled frame):');
  for (const c of s.categories) {
    if (!c.samples) continue;
    out.push(`  ${pct(c.share)} ${String(c.samples).padStart(7)}  ${c.label}`);
    if (c.category === 'js') {
      for (const o of s.jsOrigins) if (o.samples) out.push(`  ${' '.repeat(14)}  ${pct(o.share)} ${ORIGIN_LABEL[o.origin]}`);
    }
  }
  out.push('', 'Threads:');
  for (const t of s.threads) out.push(`  ${pct(t.share)} ${String(t.samples).padStart(7)}  ${threadRowText(t)}`);
  out.push('', 'Top functions by self samples (the function was running):');
  out.push('   share samples  kind      function', ...functionRows(s.self));
  out.push('', 'Top JavaScript functions by total samples (the function or what it called was running):');
  out.push('   share samples  kind      function', ...functionRows(s.totalJs));
  const inlining = inliningLine(s);
  if (inlining) out.push('', inlining);
  const maps = sourceMapsLine(s);
  if (maps) out.push(maps);
  const advice = jitAdvice(s);
  if (advice.length) out.push('', ...advice);
  return safeText(out.join('\n') + '\n');
}

// Said once, where JavaScript ran: how functions V8's optimizing compiler
// inlined into their callers are shown (docs/v8-frames.md, "Inlined functions").
function inliningLine(s) {
  if (!s.categories.some((c) => c.category === 'js' && c.samples)) return null;
  const inlining = s.jit.v8 && s.jit.v8.inlining;
  if (inlining && inlining.read) {
    const line = 'A function V8\'s optimizing compiler inlined into its caller is shown above it in the stacks; its row says how much of it ran inlined ("(inlined)", "(40% inlined)").';
    // Under 1%: code replaced while sampled, not worth a line.
    if (!inlining.unknown || !s.samples || inlining.unknown < 0.01 * s.samples) return line;
    return `${line} Not in ${pct(inlining.unknown / s.samples).trim()} of the samples: there a frame ran optimized code that is not its function's own `
      + '(a loop V8 optimized while it ran, on-stack replacement; or code replaced since), and what was inlined in it counts as that function.';
  }
  if (inlining && inlining.note) return `Not shown apart: ${inlining.note}.`;
  return 'A function V8\'s optimizing compiler inlined into its caller is counted as that caller (not shown apart).';
}

// Said where frames were shown at their original place (lib/source-maps.js).
function sourceMapsLine(s) {
  const maps = s.jit.v8 && s.jit.v8.sourceMaps;
  if (!maps || !maps.found.length) return null;
  const n = maps.found.length;
  return `Frames of ${plural(n, 'script')} with a source map are shown where the map puts them (the place V8 runs them: "generated" in --json; --no-source-maps shows that place).`;
}

function renderJson(summary) {
  return safeJson(summary) + '\n';
}

module.exports = { summarize, renderText, renderJson, threadRows, threadRowText, pct, inliningLine, sourceMapsLine,
  UNNAMED_JIT, JSON_VERSION };
