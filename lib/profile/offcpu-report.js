'use strict';
// The off-CPU report (`nodetrace profile --off-cpu`): where the target's
// threads waited, blocked, ranked by time. A stack is told by why it waited
// (the system call and the kernel function that put it to sleep: "read:
// anon_pipe_read", "futex: futex_do_wait") and by the user frames that made
// the call, JavaScript first. Pure: named stacks (counts in microseconds)
// in, a summary out, then text or JSON.
const { pct, threadRowText } = require('./report');
const { threadLabel, groupKey } = require('../threads/roles');
const { safeText, safeJson } = require('../terminal-safe');
const { NO_USER_STACK } = require('../render/map-full');

const JSON_VERSION = 1;
// The scheduler's own frames, above the function that decided to wait.
const SCHEDULER = /^(__schedule|schedule|schedule_\w+|io_schedule\w*|preempt_schedule\w*|__cond_resched|do_nanosleep|hrtimer_nanosleep)$/;
// The system call's entry (or, where that was inlined, its body: ksys_read).
const SYSCALL = /^(?:__(?:x64|ia32|arm64)_sys|__do_sys|ksys)_(\w+)$/;
// User frames shown under a stack in the text report.
const FRAMES_SHOWN = 6;

// "read: anon_pipe_read" from a stack's frames (root first).
function waitReason(frames) {
  const kernel = frames.filter((f) => f.category === 'kernel');
  const leafFirst = [...kernel].reverse();
  const where = leafFirst.find((f) => !SCHEDULER.test(f.name));
  const sys = kernel.map((f) => SYSCALL.exec(f.name)).find(Boolean);
  const parts = [sys ? sys[1] : null, where ? where.name : null].filter(Boolean);
  return parts.length ? parts.join(': ') : '[no kernel stack]';
}

// User frames leaf first, without V8's trampolines and builtins (they say
// nothing about which call waited).
function userFramesLeafFirst(frames) {
  return frames.filter((f) => f.category !== 'kernel' && f.category !== 'v8').reverse();
}

// A user stack walked by frame pointers stops in a C library function that
// keeps none (Debian's glibc): one or two frames, none of them the program's.
function cutShort(frames) {
  const user = frames.filter((f) => f.category !== 'kernel');
  return user.length > 0 && user.length <= 2 && user.every((f) => f.category === 'libc' || f.category === 'unknown');
}

// None at all: a thread blocked in a system call always has one (the
// call's own pc), so the tracer lost it (capabilities.userStackMap).
function lostUserStack(frames) {
  return !frames.some((f) => f.category !== 'kernel');
}

/**
 * @param {object} named nameStacks() of parseOffCpu(): counts are microseconds
 * @param {object} o { pid, who (lib/proc/container.js identityJson: host PID, PID inside, container), seconds,
 *   threads: from parseOffCpu, allThreads, top = 10, identityOf(tid): lib/threads/identify.js's identity or null }
 */
function summarizeOffCpu(named, { pid, who = null, seconds, threads = [], allThreads = false, top = 10, identityOf = (tid) => (tid === pid ? { role: 'main' } : null) } = {}) {
  const tracedUs = (seconds || 0) * 1e6;
  // Threads by what they are (lib/threads/roles.js): a row for the main
  // thread and each Worker, one for each other role.
  const roleOf = new Map();
  for (const s of named.stacks) {
    if (roleOf.has(s.tid)) continue;
    const identity = identityOf(s.tid);
    roleOf.set(s.tid, { key: groupKey(identity, s.tid), role: identity ? identity.role : 'exited', label: threadLabel(identity) });
  }
  const merged = new Map();
  let total = 0;
  for (const s of named.stacks) {
    total += s.count;
    const role = roleOf.get(s.tid).label;
    const key = roleOf.get(s.tid).key + '\0' + s.frames.map((f) => f.category + ':' + f.name).join('\0');
    if (!merged.has(key)) {
      merged.set(key, { us: 0, thread: role, tids: new Set(), reason: waitReason(s.frames), frames: s.frames,
        ongoing: false });
    }
    const m = merged.get(key);
    m.us += s.count;
    m.tids.add(s.tid);
    if (s.ongoing) m.ongoing = true;
  }
  const byRole = new Map();
  for (const s of named.stacks) {
    const { key, role, label } = roleOf.get(s.tid);
    if (!byRole.has(key)) byRole.set(key, { role, label, threads: new Set(), us: 0, blocks: 0 });
    byRole.get(key).threads.add(s.tid);
    byRole.get(key).us += s.count;
  }
  for (const t of threads) {
    const r = roleOf.has(t.tid) ? byRole.get(roleOf.get(t.tid).key) : null;
    if (r) r.blocks += t.blocks;
  }
  // A JavaScript function with every wait under it (V8 inlines, so one
  // function's waits may come from several stacks): counted once a stack.
  const jsTotal = new Map();
  for (const m of merged.values()) {
    for (const name of new Set(m.frames.filter((f) => f.category === 'js').map((f) => f.name))) jsTotal.set(name, (jsTotal.get(name) || 0) + m.us);
  }
  const stacks = [...merged.values()].sort((a, b) => b.us - a.us).slice(0, top).map((m) => {
    const user = userFramesLeafFirst(m.frames);
    return {
      us: m.us,
      share: total ? m.us / total : 0,
      // Of the time traced, per thread: 1 is a thread blocked there throughout.
      ofTrace: tracedUs ? m.us / tracedUs / m.tids.size : null,
      thread: m.thread,
      threads: m.tids.size,
      reason: m.reason,
      ...(m.ongoing ? { ongoing: true } : {}),
      ...(cutShort(m.frames) ? { cutShort: true } : {}),
      frames: lostUserStack(m.frames) ? [{ name: NO_USER_STACK, category: 'unknown' }]
        : user.map((f) => ({ name: f.name, category: f.category, ...(f.origin ? { origin: f.origin } : {}) })),
    };
  });
  return {
    version: JSON_VERSION,
    command: 'profile',
    kind: 'off-cpu',
    pid,
    ...(who ? { process: who } : {}),
    seconds: seconds == null ? null : seconds,
    threadsTraced: allThreads ? 'all' : 'main',
    blockedUs: total,
    blocks: threads.reduce((n, t) => n + t.blocks, 0),
    threads: [...byRole.values()].sort((a, b) => b.us - a.us)
      .map((r) => ({ role: r.role, label: r.label, threads: r.threads.size, tids: [...r.threads].sort((a, b) => a - b),
        us: r.us, blocks: r.blocks, ofTrace: tracedUs ? r.us / tracedUs / r.threads.size : null })),
    stacks,
    functions: [...jsTotal].sort((a, b) => b[1] - a[1]).slice(0, top)
      .map(([name, us]) => ({ name, us, share: total ? us / total : 0 })),
    perfMap: named.perfMap || null,
    v8: named.v8 || null,
  };
}

function time(us) {
  if (us >= 1e6) return `${(us / 1e6).toFixed(2)} s`;
  if (us >= 1e3) return `${(us / 1e3).toFixed(1)} ms`;
  return `${us} µs`;
}

const CATEGORY_SHORT = { js: 'JS', jit: 'JIT?', node: 'Node', addon: 'add-on', libc: 'libc', unknown: '?' };

function renderOffCpuText(s, { describe = '' } = {}) {
  const out = [];
  const who = s.threadsTraced === 'all' ? 'its threads' : 'its main thread';
  const secs = s.seconds == null ? '?' : s.seconds.toFixed(1);
  out.push(`Off-CPU time of ${describe ? safeText(describe, { oneLine: true }) : `PID ${s.pid}`}, ${who}: blocked ${time(s.blockedUs)} in ${s.blocks} waits over ${secs} s traced.`);
  if (!s.stacks.length) {
    out.push(`No waits: ${who === 'its threads' ? 'no thread' : 'the main thread'} blocked while traced (or it was blocked throughout, since before the trace began).`);
    return safeText(out.join('\n') + '\n');
  }
  out.push('', 'Threads:');
  for (const t of s.threads) {
    out.push(`  ${time(t.us).padStart(9)}  ${t.ofTrace == null ? '' : `${pct(t.ofTrace)} of the time`}  ${t.blocks} waits  ${threadRowText(t)}`);
  }
  out.push('', 'Where it waited, by time blocked (why: the system call and the kernel function; then the calls that led there, innermost first):');
  s.stacks.forEach((st, i) => {
    const of = st.ofTrace == null ? '' : ` ${pct(st.ofTrace).trim()} of the time`;
    out.push(`${String(i + 1).padStart(3)}. ${time(st.us)}${of}, ${st.thread}${st.threads > 1 ? ` (${st.threads} threads)` : ''}: ${safeText(st.reason, { oneLine: true })}${st.ongoing ? ' (still blocked at the end)' : ''}`);
    for (const f of st.frames.slice(0, FRAMES_SHOWN)) out.push(`       ${(CATEGORY_SHORT[f.category] || f.category).padEnd(6)} ${safeText(f.name, { oneLine: true })}`);
    if (st.frames.length > FRAMES_SHOWN) out.push(`       ... ${st.frames.length - FRAMES_SHOWN} more`);
    if (st.cutShort) out.push('       (the user stack stops in a C library function that keeps no frame pointer: its callers are unknown)');
  });
  if (s.functions.length) {
    out.push('', 'JavaScript functions by the time blocked under them (the function, or what it called, waited):');
    for (const f of s.functions) out.push(`  ${time(f.us).padStart(9)} ${pct(f.share)}  ${safeText(f.name, { oneLine: true })}`);
  }
  if (s.stacks.some((st) => st.frames.some((f) => f.category === 'jit'))) {
    out.push('', s.v8 && s.v8.used
      ? 'Some JavaScript frames have no names: they held no function (V8\'s stubs), or were deeper than the 64 frames walked.'
      : 'JavaScript frames have no names: start node with --perf-basic-prof (docs/performance.md).');
  }
  return safeText(out.join('\n') + '\n');
}

function renderOffCpuJson(s) {
  return safeJson(s) + '\n';
}

module.exports = { summarizeOffCpu, renderOffCpuText, renderOffCpuJson, waitReason, cutShort };
