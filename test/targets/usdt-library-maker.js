'use strict';
// A hostile user making many valid bunyan probe libraries: each provider
// named bunyan with the six log-* probes plus one extra probe is a library
// of different bytes, so of a different (content-addressed) name. Makes
// COUNT of them (default 10), prints "made N", and stays alive mapping them.
const dtrace = require('dtrace-provider');

const count = Number(process.env.COUNT || 10);
const keep = [];
for (let i = 0; i < count; i++) {
  const p = dtrace.createDTraceProvider('bunyan');
  for (const l of ['trace', 'debug', 'info', 'warn', 'error', 'fatal']) p.addProbe(`log-${l}`, 'char *');
  p.addProbe(`extra-${i}`, 'int');
  p.enable();
  keep.push(p);
}
console.log(`made ${count}`);
setInterval(() => {}, 1000);
