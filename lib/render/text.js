'use strict';
// The small pieces of text every report and message shares, each said one
// way: a count with its noun, digits grouped, a time of day. Pure.

// The noun that goes with a count: `one` for 1 (a Number or a BigInt, as
// lib/aggregation's counts are), else `many`.
function noun(n, one, many = `${one}s`) {
  return n === 1 || n === 1n ? one : many;
}

// 12,345: digits grouped as in en-US whatever the machine's locale, so a
// figure reads the same in every log.
function grouped(n) {
  return n.toLocaleString('en-US');
}

// A count and its noun, digits grouped: "1 request", "12,345 requests".
function plural(n, one, many) {
  return `${grouped(n)} ${noun(n, one, many)}`;
}

// 14:03:12.345 in local time (the clock the user's logs are in).
function clockTime(ms) {
  const d = new Date(ms);
  const two = (n) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

module.exports = { noun, grouped, plural, clockTime };
