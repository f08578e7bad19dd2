'use strict';
// Numbers in the machine-readable reports (`--json`): the model's counts and
// values are BigInt (lib/aggregation/model.js), which JSON cannot carry.

/** A BigInt as a JSON number when exact, else as its decimal string; null stays null. */
function jsonInteger(value) {
  if (value === null || value === undefined) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) && BigInt(n) === value ? n : value.toString();
}

module.exports = { jsonInteger };
