// An ES module app using stock bunyan at level info, logging at debug: bunyan
// is CommonJS, so its require('dtrace-provider') still goes through the hook
// that `--import <repo>/register.js` (or -r) installs. Prints "ready <pid>".
import bunyan from 'bunyan';

const log = bunyan.createLogger({ name: process.env.NAME || 'esm-target', level: 'info', streams: [{ level: 'info', stream: { write() {} } }] });
let seq = 0;
setInterval(() => log.debug({ seq: seq++ }, 'debug from an ES module'), 100);
console.log('ready', process.pid);
