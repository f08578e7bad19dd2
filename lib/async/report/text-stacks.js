'use strict';
// async --stacks in text: a kind's named creation stacks cut to where they
// say who created the operation, and merged where they then show alike.
// Pure: stacks in, stacks out (./text.js prints them).

// A frame named from V8's metadata (lib/profile/js-frames.js profileFrame):
// `name file:line:column`, where native ones read `symbol+offset`.
function isJsFrame(f) {
  return /\s\S+:\d+:\d+$/.test(f) && !/\+\d+$/.test(f);
}

// The frames that say nothing of who created it: AsyncReset and the
// constructors of the wrap's classes (`node::HandleWrap::HandleWrap(...)`).
function isConstructorFrame(f) {
  const m = /^node::(?:[\w<>, ]+::)*(\w+)(?:<[^(]*>)?::(\w+)\(/.exec(f);
  return Boolean(m && (m[1] === m[2] || /^node::AsyncWrap::AsyncReset\(/.test(f)));
}

/**
 * A kind's stacks as text shows them: from the first JavaScript frame where
 * there is one (node's and V8's way into the constructor above it), else
 * from the first frame past the constructors; stacks that show alike
 * (V8's tiers: a construct stub more or less) are one. Most first.
 * -> [{ count, frames, skipped (frames cut from the top) }]
 */
function textStacks(stacks) {
  const merged = new Map();
  for (const st of stacks) {
    const js = st.frames.findIndex(isJsFrame);
    let from = js;
    if (from < 0) {
      from = 0;
      while (from < st.frames.length - 1 && isConstructorFrame(st.frames[from])) from++;
    }
    const frames = st.frames.length ? st.frames.slice(from) : ['(no frame)'];
    const key = frames.join('\n');
    if (!merged.has(key)) merged.set(key, { count: 0, frames, skipped: from });
    merged.get(key).count += st.count;
  }
  return [...merged.values()].sort((a, b) => b.count - a.count);
}

module.exports = { textStacks };
