'use strict';
// Whose work it was: the latency program's @thread_ops and @thread_total_us
// (d-scripts/addon-latency.bt and .d), by the thread that ran each
// operation's done function. libuv runs it on the loop that queued the
// work, so the thread is the main thread or the worker_threads Worker that
// queued it (each has its own loop; all share the process's one pool).
// Pure: aggregations in, threads out, and the threads as the text report's
// lines or the JSON report's list, named by role (lib/threads/roles.js).
const { jsonInteger } = require('../../render/json');
const { threadLabel, threadReportName, threadIdentityJson } = require('../../threads/roles');
const { grouped, plural } = require('../../render/text');

const THREAD_MAPS = ['thread_ops', 'thread_total_us'];

/**
 * Splits the per-thread maps off a model's aggregations.
 * -> { threads: [{ tid, count, totalUs }] (most operations first) or null
 *      where the program printed none (an older capture, `format` of it),
 *      rest }
 */
function splitThreadMaps(aggregations) {
  const found = aggregations.filter((a) => THREAD_MAPS.includes(a.name));
  const rest = aggregations.filter((a) => !THREAD_MAPS.includes(a.name));
  if (!found.length) return { threads: null, rest };
  const byTid = new Map();
  const at = (tid) => {
    if (!byTid.has(tid)) byTid.set(tid, { tid, count: 0n, totalUs: 0n });
    return byTid.get(tid);
  };
  for (const a of found) {
    for (const e of a.entries) {
      if (e.value === undefined || e.key.length !== 1 || !/^[0-9]+$/.test(String(e.key[0]))) continue;
      const t = at(Number(e.key[0]));
      if (a.name === 'thread_ops') t.count += BigInt(e.value);
      else t.totalUs += BigInt(e.value);
    }
  }
  const threads = [...byTid.values()].filter((t) => t.count > 0n)
    .sort((a, b) => (a.count === b.count ? a.tid - b.tid : (b.count > a.count ? 1 : -1)));
  return { threads, rest };
}

/** The threads as JSON: [{ tid, role, label, worker?, count, total_us }] (docs/json-format.md). */
function threadsToJSON(threads, identityOf) {
  if (!threads) return null;
  return threads.map((t) => ({
    ...threadIdentityJson(t.tid, identityOf ? identityOf(t.tid) : null),
    count: jsonInteger(t.count),
    total_us: jsonInteger(t.totalUs),
  }));
}

/**
 * The text report's lines: said where a thread other than the main one
 * queued work (the kinds below hold every thread's), else none.
 */
function threadLines(threads, identityOf) {
  if (!threads || !threads.length) return [];
  // undefined where no identity was looked up (`format`): threadReportName
  // then claims nothing about the thread.
  const names = threads.map((t) => threadReportName(t.tid, identityOf ? identityOf(t.tid) : undefined));
  if (threads.length === 1 && names[0] === threadLabel({ role: 'main' })) return [];
  const width = Math.max(...names.map((n) => n.length));
  return ['By the thread whose event loop queued it (the kinds below hold every thread\'s):',
    ...threads.map((t, i) => `  ${names[i].padEnd(width)}  ${plural(t.count, 'operation')}, ${grouped((t.totalUs + 500n) / 1000n)} ms in all`), ''];
}

module.exports = { splitThreadMaps, threadsToJSON, threadLines, THREAD_MAPS };
