'use strict';
// Whose operations they were: async.bt's (and async.d's) @thread_created
// and @thread_callbacks, keyed by the thread that created an AsyncWrap or
// ran its callback, and the register hook's kinds, which each thread's own
// hook counts (keyed by thread already: ./hook-kinds.js). A Worker runs its
// own event loop: its file reads, sockets and timers are its own, and the
// kinds of the report hold every thread's together. Pure: the model's
// aggregations in, threads out, and the threads as the text report's lines
// or the JSON report's list, named by role (lib/threads/roles.js).
const { jsonInteger } = require('../../render/json');
const { threadReportName, threadIdentityJson } = require('../../threads/roles');
const { grouped, plural } = require('../../render/text');
const { safeText } = require('../../terminal-safe');

const THREAD_MAPS = ['thread_created', 'thread_callbacks'];
// The kinds the text names on a thread's line (JSON keeps every one).
const KINDS_IN_TEXT = 4;

function cmp(a, b) { return a === b ? 0 : a > b ? 1 : -1; }

/**
 * threadsOf(model, { nameOf, hookKinds }) -> [{ tid, created, callbacks,
 *   kinds: [{ number, source, name, created, callbacks }] }], most created
 * first; or null where the program printed no per-thread map and counted
 * AsyncWraps (a capture older than the maps: `format`, fixtures).
 * nameOf(kind number as a decimal string): the provider's name;
 * hookKinds: the register hook's kinds as each thread counted them
 * ({ threads: [tid], name, created, callbacks }), before they are merged.
 */
function threadsOf(model, { nameOf, hookKinds = [] }) {
  const found = model.aggregations.filter((a) => THREAD_MAPS.includes(a.name));
  const byTid = new Map();
  const kindAt = (tid, key, make) => {
    if (!byTid.has(tid)) byTid.set(tid, new Map());
    const kinds = byTid.get(tid);
    if (!kinds.has(key)) kinds.set(key, { created: 0n, callbacks: 0n, ...make() });
    return kinds.get(key);
  };
  for (const a of found) {
    for (const e of a.entries) {
      if (typeof e.value !== 'bigint' || e.key.length !== 2 || !e.key.every((k) => /^[0-9]{1,20}$/.test(String(k)))) continue;
      const [tid, kind] = e.key.map(String);
      const k = kindAt(Number(tid), kind, () => ({ number: Number(kind), source: 'AsyncWrap', name: nameOf(kind) }));
      if (a.name === 'thread_created') k.created += e.value;
      else k.callbacks += e.value;
    }
  }
  // A capture older than the per-thread maps: its AsyncWraps are not told apart.
  if (!found.length && model.aggregations.some((a) => a.name === 'created')) return null;
  for (const h of hookKinds) {
    const [tid] = h.threads;
    // A capture made before the hook's keys held their thread (0): not one
    // thread's; a kind only named, or only alive: nothing of it counted.
    if (!tid || (h.created === 0n && h.callbacks === 0n)) continue;
    const k = kindAt(tid, `hook:${h.number}`, () => ({ number: h.number, source: 'async_hooks', name: h.name }));
    k.created += h.created;
    k.callbacks += h.callbacks;
  }
  return [...byTid].map(([tid, kinds]) => {
    const list = [...kinds.values()]
      .sort((a, b) => cmp(b.created, a.created) || cmp(b.callbacks, a.callbacks) || a.number - b.number);
    const sum = (field) => list.reduce((n, k) => n + k[field], 0n);
    return { tid, created: sum('created'), callbacks: sum('callbacks'), kinds: list };
  }).sort((a, b) => cmp(b.created, a.created) || a.tid - b.tid);
}

/** The threads as JSON: [{ tid, role, label, worker?, created, callbacks, kinds }] (docs/json-format.md). */
function threadsToJSON(threads, identityOf) {
  if (!threads) return null;
  return threads.map((t) => ({
    ...threadIdentityJson(t.tid, identityOf ? identityOf(t.tid) : null),
    created: jsonInteger(t.created),
    callbacks: jsonInteger(t.callbacks),
    kinds: t.kinds.map((k) => ({ name: k.name, source: k.source, provider: k.source === 'AsyncWrap' ? k.number : null,
      created: jsonInteger(k.created), callbacks: jsonInteger(k.callbacks) })),
  }));
}

/**
 * The text report's lines: said where a thread other than the main one
 * created or called back anything (the rows above hold every thread's).
 */
function threadLines(threads, identityOf) {
  // A capture without the maps: the heading says the rows are every thread's together.
  if (!threads) return [];
  // undefined where no identity was looked up (`format`): nothing is claimed.
  const identities = threads.map((t) => (identityOf ? identityOf(t.tid) : undefined));
  if (!threads.length || (threads.length === 1 && identities[0] && identities[0].role === 'main')) return [];
  const names = threads.map((t, i) => threadReportName(t.tid, identities[i]));
  const width = Math.max(...names.map((n) => n.length));
  const kinds = (t) => {
    const shown = t.kinds.filter((k) => k.created > 0n).slice(0, KINDS_IN_TEXT)
      .map((k) => `${safeText(k.name, { oneLine: true })} ${grouped(k.created)}`);
    const more = t.kinds.filter((k) => k.created > 0n).length - shown.length;
    return shown.length ? `: ${shown.join(', ')}${more > 0 ? `, ${more} more` : ''}` : '';
  };
  return ['By the thread that created them (each runs its own event loop; the rows above hold every thread\'s):',
    ...threads.map((t, i) => `  ${names[i].padEnd(width)}  ${grouped(t.created)} created, ${plural(t.callbacks, 'callback')}${kinds(t)}`)];
}

module.exports = { threadsOf, threadsToJSON, threadLines, THREAD_MAPS };
