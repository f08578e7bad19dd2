'use strict';
// Searching sorted values. Pure.

/**
 * The index of the last of `values` (ascending: Numbers, or BigInts, an
 * array or a typed array) that is at most `x`, or -1 when none is: the
 * symbol, or table entry, in effect at an address or offset.
 */
function lastAtOrBelow(values, x) {
  let lo = 0;
  let hi = values.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid] <= x) { found = mid; lo = mid + 1; } else hi = mid - 1;
  }
  return found;
}

module.exports = { lastAtOrBelow };
