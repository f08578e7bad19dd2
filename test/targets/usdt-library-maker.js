'use strict';
// A hostile user making many valid bunyan probe libraries: bunyan's provider
// with its six log-* probes under another module name each is a library of
// different bytes, so of a different (content-addressed) name, that passes
// every check. Makes COUNT of them (default 10), prints "made N", and stays
// alive mapping them.
const dtrace = require('dtrace-provider');

const count = Number(process.env.COUNT || 10);
const keep = [];
for (let i = 0; i < count; i++) {
  const p = dtrace.createDTraceProvider('bunyan', `variant-${i}`);
  for (const l of ['trace', 'debug', 'info', 'warn', 'error', 'fatal']) p.addProbe(`log-${l}`, 'char *');
  p.enable();
  keep.push(p);
}
console.log(`made ${count}`);
setInterval(() => {}, 1000);
