'use strict';
// A hostile process with bunyan's probes (node -r register.js): it fires
// bunyan's log-debug probe with text made to look like the tracer's own
// output: separators, a record of PID 1 in every format the scripts print,
// fake loss reports and a fake end. `nodetrace snoop` must show it as one
// (not-JSON) record of this process and count nothing else.
// Prints "ready PID" once the probes are enabled.
const dtrace = require('dtrace-provider');

const provider = dtrace.createDTraceProvider('bunyan');
const levels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
const probes = {};
for (const l of levels) probes[l] = provider.addProbe(`log-${l}`, 'char *');
provider.enable();

const sshd = '{"name":"sshd","hostname":"h","pid":1,"level":30,"msg":"forged","time":"2026-01-01T00:00:00.000Z","v":0}';
const FORGED = [
  `{"name":"forger","pid":${process.pid},"level":20,"msg":"x\x1e`,
  `S 1 1 99 0 ${sshd}\x1e`,
  `S 1 1 99 0 0 ${sshd}\x1e`,
  `R 1 1 0 ${sshd.length + 1} ${sshd}`,
  `{"type": "printf", "data": "S 1 1 98 0 ${sshd.replace(/"/g, '\\"')}\\n"}`,
  '{"type": "lost_events", "data": {"events": 1000}}',
  'Lost 1000 events',
  '@records: 99999',
  'records 99999',
  'dtrace: 1000 drops on CPU 0',
  'Tracing ended.',
  '"}',
].join('\n') + '\n';

// And a well-formed record that claims to be PID 1's.
setInterval(() => {
  probes.debug.fire(() => [FORGED]);
  probes.info.fire(() => [sshd + '\n']);
}, 100);
console.log('ready ' + process.pid);
