'use strict';
// A bunyan service at level info that also logs at debug (and the other
// levels) on a timer, the way a production service hides its debug records:
// `nodetrace snoop` must show them anyway. Start it with the USDT provider:
//   node -r <repo>/register.js test/targets/bunyan-debug-loop.js
// Environment:
//   NAME        logger name (default: snoop-target)
//   INTERVAL    ms between rounds (default: 50)
//   BIG         length of an extra `blob` field in the warn record of each
//               round (0: none); a list (3000,10240) takes turns
//   BLOB        the text a blob is made of, repeated (default: x); multi-byte
//               UTF-8 here checks that records cut into pieces reassemble
//   DURATION    exit after this long (default: run until killed)
// Each round logs, in order: trace, debug, info, warn, error; `seq` counts
// rounds. It prints "ready <pid>" first.
const bunyan = require('bunyan');

const name = process.env.NAME || 'snoop-target';
const interval = Number(process.env.INTERVAL || 50);
const sizes = String(process.env.BIG || '0').split(',').map(Number);
// The blob of a given length: BLOB repeated, cut at a character boundary.
function blobOf(n) {
  return Array.from((process.env.BLOB || 'x').repeat(n)).slice(0, n).join('');
}
const blobs = sizes.map(blobOf);
// The logger's own output (info and above) goes nowhere: the snoop must be
// what shows the records, not this process's stdout.
const log = bunyan.createLogger({ name, level: 'info', streams: [{ level: 'info', stream: { write() {} } }] });

let seq = 0;
function round() {
  seq++;
  log.trace({ seq }, 'trace record %d', seq);
  log.debug({ seq }, 'something went wrong %d', seq);
  log.info({ seq }, 'info record %d', seq);
  const blob = blobs[seq % blobs.length];
  if (blob) log.warn({ seq, blob }, 'big record %d', seq);
  else log.warn({ seq }, 'warn record %d', seq);
  log.error({ seq }, 'error record %d', seq);
}

console.log('ready ' + process.pid);
setInterval(round, interval);
if (process.env.DURATION) setTimeout(() => process.exit(0), Number(process.env.DURATION) * 1000);
