#!/usr/bin/env node
'use strict';
// Makes the fixture of lib/v8/dispatch-table.js's unit tests: for each
// `LABEL=PATH` given (an official node binary), what readDispatchLocation
// reads of it: the ELF type, its PT_TLS segment, and the symbols it looks
// for (js_dispatch_table_address's first bytes, g_current_isolate_'s TLS
// offset, the names that carry the table's reservation), as one JSON object.
// Usage: node test/support/dispatch-capture.js node24=/path/to/node ... > FIXTURE.json
const fs = require('fs');
const { findElfData } = require('../../lib/symbolize');
const { PREFIXES } = require('../../lib/v8/dispatch-table');

const out = {};
for (const spec of process.argv.slice(2)) {
  const [label, file] = spec.split('=');
  const found = findElfData(file, PREFIXES, { followLinks: true, width: 32, any: true });
  if (!found) throw new Error(`${file}: not read`);
  const symbols = {};
  for (const [name, s] of found.found) symbols[name] = { value: s.value, type: s.type, bytes: s.bytes.toString('hex') };
  out[label] = { file, type: found.type, tls: found.tls, symbols };
}
fs.writeSync(1, JSON.stringify(out, null, 1) + '\n');
