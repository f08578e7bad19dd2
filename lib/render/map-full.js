'use strict';
// Maps a tracer filled, said. bpftrace's hash maps hold a fixed number of
// keys (its default 4,096; nodetrace asks for more, lib/tracer/capabilities.js
// mapKeysEnv), and an insert into a full one is dropped without a word, on
// 0.17 to 0.27 (the kernel's E2BIG from bpf_map_update_elem; bpftrace
// prints nothing). DTrace says its own drops (lib/tracer/dtrace-losses.js).
//
// A command names its bounded maps in its plan (details.boundedMaps), and
// its report learns they filled either from the keys the map printed (a
// map printed whole: it held its bound) or from the program's own count of
// inserts that did not take (a program reads the key back after writing it:
// `@full_born`, async.bt). One line per full map. Pure.

const { userStackMap } = require('../tracer/capabilities');
const { formatDuration } = require('./units');

// The frame every report shows for what bpftrace printed without a user
// stack (a thread of a user process always has one: the tracer lost it).
const NO_USER_STACK = '[no stack]';

function count(n) {
  return Number(n).toLocaleString('en-US');
}

/**
 * @param {Array<object>} bounded the plan's bounded maps:
 *   (or bpftrace's own map of user stacks: { stacks: true, map, keys, loses
 *   (capabilities.userStackMap), unit: 'sample', lost, raise }, seen as
 *   { refused: samples without a user stack })
 *   { map: '@born', keys: 65536, what: 'live operations' (what a key is),
 *     lost: 'their wait times were not measured' (what went uncounted past it),
 *     raise: 'trace for less time' | null (how to keep under it, besides
 *     NODETRACE_MAP_KEYS) }
 * @param {object} seen by map name: { held: keys printed, refused: inserts
 *   that did not take } (either may be missing)
 * @returns {string[]} lines for stderr, without "nodetrace: "
 */
function mapFullLines(bounded = [], seen = {}) {
  const out = [];
  for (const b of bounded) {
    const s = seen[b.map] || {};
    const refused = Number(s.refused || 0);
    if (b.stacks) {
      // The tracer's own map of stacks (capabilities.userStackMap): what it
      // lost shows as samples without a user stack; no NODETRACE_MAP_KEYS sizes it.
      if (refused > 0) out.push(stackMapLine(b, refused));
      continue;
    }
    const full = refused > 0 || Number(s.held || 0) >= b.keys;
    if (!full) continue;
    const past = refused > 0 ? `${count(refused)} more were not kept` : 'more were not kept';
    const raise = [b.raise, `raise the bound with NODETRACE_MAP_KEYS=N (now ${count(b.keys)})`].filter(Boolean).join(', or ');
    out.push(`warning: the tracer's map of ${b.what} (${b.map}) filled at ${count(b.keys)} keys: ${past}, ${b.lost}; ${raise}`);
  }
  return out;
}

function stackMapLine(b, refused) {
  // Off-CPU waits are summed by stack, so what was lost is their time.
  const one = b.unit === 'us' || refused === 1;
  const what = b.unit === 'us' ? `${formatDuration(refused, 'us')} of waiting` : `${count(refused)} ${b.unit}${one ? '' : 's'}`;
  return `warning: ${what} had no user stack: the tracer lost ${one ? 'it' : 'them'} `
    + `from its map of stacks (${count(b.keys)} places: ${b.loses}); ${b.lost}; ${b.raise}`;
}

/**
 * bpftrace's own map of user stacks as a bounded map (before 0.25: a stack
 * it lost is a sample printed without one, counted as "[no stack]"), or
 * null where nothing is lost (0.25 on, DTrace). `less`: how to keep under
 * it; `unit`: what a report counts without a stack ('sample', 'operation';
 * 'us': off-CPU waits' time, which the program sums by stack).
 */
function userStackBound(tracer, less, unit = 'sample') {
  const m = userStackMap(tracer);
  return m ? { stacks: true, map: 'ustack', keys: m.places, loses: m.loses, unit,
    lost: `${unit === 'us' ? 'it is' : 'they are'} counted, as "${NO_USER_STACK}"`,
    raise: `${less}, or use bpftrace 0.25 or later, which keeps each stack with its sample` } : null;
}

module.exports = { mapFullLines, userStackBound, NO_USER_STACK };
