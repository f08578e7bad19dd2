'use strict';
// The benches' command lines: `--name VALUE` and `--flag`, nothing more.
const argv = process.argv.slice(2);

function valueOf(name) {
  const i = argv.indexOf('--' + name);
  return i >= 0 ? argv[i + 1] : undefined;
}

// --name N as a number, or `dflt` when not given.
function number(name, dflt) {
  const v = valueOf(name);
  return v === undefined ? dflt : Number(v);
}

function string(name, dflt) {
  const v = valueOf(name);
  return v === undefined ? dflt : v;
}

function flag(name) {
  return argv.includes('--' + name);
}

module.exports = { number, string, flag };
