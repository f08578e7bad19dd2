'use strict';
// A bunyan service at level info that also logs at debug (and the other
// levels) on a timer, the way a production service hides its debug records:
// `nodetrace snoop` must show them anyway. Start it with the USDT provider:
//   node -r <repo>/register.js test/targets/bunyan-debug-loop.js
// Environment:
//   NAME        logger name (default: snoop-target)
//   INTERVAL    ms between rounds (default: 50)
//   BIG         bytes of an extra field in one warn record per round (0: none)
//   SECONDS     exit after this long (default: run until killed)
// Each round logs, in order: trace, debug, info (to stdout: the logger's own
// stream), warn, error; `seq` counts rounds. It prints "ready <pid>" first.
const bunyan = require('bunyan');

const name = process.env.NAME || 'snoop-target';
const interval = Number(process.env.INTERVAL || 50);
const big = Number(process.env.BIG || 0);
// The logger's own output (info and above) goes nowhere: the snoop must be
// what shows the records, not this process's stdout.
const log = bunyan.createLogger({ name, level: 'info', streams: [{ level: 'info', stream: { write() {} } }] });

let seq = 0;
function round() {
  seq++;
  log.trace({ seq }, 'trace record %d', seq);
  log.debug({ seq }, 'something went wrong %d', seq);
  log.info({ seq }, 'info record %d', seq);
  if (big > 0) log.warn({ seq, blob: 'x'.repeat(big) }, 'big record %d', seq);
  else log.warn({ seq }, 'warn record %d', seq);
  log.error({ seq }, 'error record %d', seq);
}

console.log('ready ' + process.pid);
setInterval(round, interval);
if (process.env.SECONDS) setTimeout(() => process.exit(0), Number(process.env.SECONDS) * 1000);
