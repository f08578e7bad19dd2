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
//
// A line break the text holds is not a separator: bpftrace prints a string
// key part raw, so a thread named "a\n@x[1, q]: 9" ended the key's line and
// printed a forged map line of its own. A thread's name is therefore keyed
// as buf(comm, 16), which bpftrace prints with every byte that is not
// printable ASCII escaped (`a\x0a@x[1, q]: 9\x00\x00\x00`, on 0.17, 0.23.2
// and 0.27.1 alike): such a part (`buf: true`) is found whole on its line,
// then read back as the name it stands for (textOf).

// One part, the whole key: a function's name.
const NAME = { parts: 1, at: 0 };
// [tid, buf(comm, 16)]
const THREAD = { parts: 2, at: 1, buf: true };

/** By program (its .bt and .d alike): map name -> { parts, at: the text's place }. */
const TEXT_KEYS = {
  'addon-latency': {
    total_us: NAME, max_us: NAME, queue_wait_us: NAME, run_us: NAME, loop_wait_us: NAME,
    // Never printed (cleared before the maps are); a name crosses as a NAME line of numbers.
    name_id: { parts: 2, at: 1 },
  },
  'addon-latency-every-function': { ns: NAME },
  // [tid, buf(comm, 16), kstack, ustack]
  profile: { samples: { parts: 4, at: 1, buf: true }, threads: THREAD },
  // [tid, buf(comm, 16), kstack, ustack, CHAIN, LEAF_RET]; its WALK slot
  // filled, [tid, buf(comm, 16), kstack, PC, FRAMES, CHAIN, LEAF_RET]
  'profile-js': {
    samples: { parts: 6, at: 1, buf: true },
    walked_samples: { parts: 7, at: 1, buf: true },
    threads: THREAD,
  },
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
  if (parts.length <= shape.parts) return parts.map((part, i) => (i === shape.at ? textOf(part, shape) : part));
  const after = shape.parts - shape.at - 1;
  const text = tokens.slice(2 * shape.at, tokens.length - 2 * after).join('');
  return [...parts.slice(0, shape.at), textOf(text, shape), ...parts.slice(parts.length - after)];
}

// A buf() part as the name it stands for: bpftrace printed its bytes with
// each one that is not printable ASCII as \xNN; those are bytes again, the
// name ends at its first NUL (comm is NUL-padded to 16 bytes), and it is
// read as UTF-8 (a byte that is not: U+FFFD). Decoded here, once the key is
// parsed, a line break in the name can no longer end a line, and every
// renderer escapes what it shows as for any other name (lib/terminal-safe.js),
// as a UTF-8 name ("café") is shown as itself. A backslash is printed raw,
// so a name holding the text "\x41" reads as "A": its own name, no one's
// record. Anything else as printed.
function textOf(part, shape) {
  if (!shape.buf) return part;
  const bytes = [];
  for (let i = 0; i < part.length; i++) {
    const hex = /^\\x([0-9a-fA-F]{2})/.exec(part.slice(i, i + 4));
    if (hex) {
      bytes.push(parseInt(hex[1], 16));
      i += 3;
    } else {
      bytes.push(...Buffer.from(part[i], 'utf8'));
    }
  }
  const end = bytes.indexOf(0);
  return Buffer.from(end >= 0 ? bytes.slice(0, end) : bytes).toString('utf8');
}

/** The shape of map `name` in `textKeys` (a TEXT_KEYS entry), or null. */
function shapeOf(textKeys, name) {
  return textKeys && Object.hasOwn(textKeys, name) ? textKeys[name] : null;
}

module.exports = { TEXT_KEYS, partsAroundText, shapeOf };
