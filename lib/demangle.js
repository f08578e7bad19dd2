'use strict';
// C++ names from DTrace for Linux arrive mangled (_ZN12node_sqlite3...).
// c++filt (binutils) is the well-kept demangler; run it once per report over
// every name, and leave names as they are when it is missing.
const { spawnSync } = require('child_process');

// Itanium-mangled symbol, possibly behind `module\`` and before `+0x1a`.
const MANGLED = /_Z[A-Za-z0-9_.$]+/;

function demangleNames(names, { cxxfilt = 'c++filt' } = {}) {
  const result = new Map();
  const symbols = [...new Set(names.map((n) => (MANGLED.exec(n) || [])[0]).filter(Boolean))];
  if (symbols.length === 0) return result;
  const out = spawnSync(cxxfilt, [], { input: symbols.join('\n') + '\n', encoding: 'utf8', timeout: 10000 });
  if (out.status !== 0 || typeof out.stdout !== 'string') return result;
  const lines = out.stdout.split('\n');
  const demangled = new Map(symbols.map((s, i) => [s, lines[i] || s]));
  for (const name of names) {
    const m = MANGLED.exec(name);
    if (m) result.set(name, name.replace(m[0], demangled.get(m[0])));
  }
  return result;
}

module.exports = { demangleNames, MANGLED };
