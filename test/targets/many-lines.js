'use strict';
// A target whose JavaScript runs from `vm` scripts of very many lines
// (issue 35.3): SCRIPTS scripts of LINES line breaks each, each ending in a
// function hotN that the event loop calls in turn. A profiler that names
// them counts lines through the whole of each source. Prints "ready PID".
const vm = require('vm');

const SCRIPTS = Number(process.env.SCRIPTS || 20);
const LINES = Number(process.env.LINES || 16 * 1024 * 1024);

const functions = [];
for (let i = 0; i < SCRIPTS; i++) {
  const source = '\n'.repeat(LINES) + `(function hot${i}() { let x = 1; for (let k = 0; k < 300000; k++) x = (x * 31 + k) % 1000003; return x; })`;
  functions.push(new vm.Script(source, { filename: `/srv/lines-${i}.js` }).runInThisContext());
}

let n = 0;
function turn() {
  globalThis.result = functions[n++ % functions.length]();
  setImmediate(turn);
}
turn();
console.log('ready ' + process.pid);
