'use strict';
// Map keys that hold a traced process's own text: a thread's name (comm), a
// function's name (usym(), ufunc()). The tracer prints a key's parts joined
// by a separator (bpftrace ", ", its JSON ",", DTrace's padding of two or
// more spaces) and never escapes one inside a part, so such a text holding
// the separator ("a, b", a symbol with two tabs) reads as more parts than
// the map has: every part after it shifted (a forged frame), or the entry
// dropped as the wrong shape. The programs are ours: each map below has a
// known number of parts and exactly one of them is text, so the parts
// before it are read from the start, those after it from the end (numbers,
// raw stacks, kernel frames: never the separator) and the text keeps
// everything between, separators and all. test/text-keys.test.js holds
// this table to the programs' text (d-scripts/), every map keyed by such a
// text listed.

// One part, the whole key: a function's name.
const NAME = { parts: 1, at: 0 };
// [tid, comm]
const THREAD = { parts: 2, at: 1 };

/** By program (its .bt and .d alike): map name -> { parts, at: the text's place }. */
const TEXT_KEYS = {
  'addon-latency': {
    total_us: NAME, max_us: NAME, queue_wait_us: NAME, run_us: NAME, loop_wait_us: NAME,
    // Never printed (cleared before the maps are); a name crosses as a NAME line of numbers.
    name_id: { parts: 2, at: 1 },
  },
  'addon-latency-every-function': { ns: NAME },
  // [tid, comm, kstack, ustack]
  profile: { samples: { parts: 4, at: 1 }, threads: THREAD },
  // [tid, comm, kstack, ustack, CHAIN, LEAF_RET]; its WALK slot filled,
  // [tid, comm, kstack, PC, FRAMES, CHAIN, LEAF_RET]
  'profile-js': { samples: { parts: 6, at: 1 }, walked_samples: { parts: 7, at: 1 }, threads: THREAD },
  offcpu: { blocks: THREAD },
};

/**
 * The parts of a key of `shape` ({ parts, at }) from `tokens`: its text
 * split with the separator kept (text.split(/(SEPARATOR)/): part,
 * separator, part, ...). Where the key has no more parts than the shape,
 * they are its parts as they are.
 */
function partsAroundText(tokens, shape) {
  const parts = tokens.filter((_, i) => i % 2 === 0);
  if (parts.length <= shape.parts) return parts;
  const after = shape.parts - shape.at - 1;
  const text = tokens.slice(2 * shape.at, tokens.length - 2 * after).join('');
  return [...parts.slice(0, shape.at), text, ...parts.slice(parts.length - after)];
}

/** The shape of map `name` in `textKeys` (a TEXT_KEYS entry), or null. */
function shapeOf(textKeys, name) {
  return textKeys && Object.hasOwn(textKeys, name) ? textKeys[name] : null;
}

module.exports = { TEXT_KEYS, partsAroundText, shapeOf };
