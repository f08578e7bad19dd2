'use strict';
// Target for test/usdt-bunyan.test.js, run as `node -r <repo>/register.js`:
// stock bunyan at level info, logging when the test asks (IPC). Reports how
// often bunyan built a record for its probes, i.e. how often the probe
// callback ran (bunyan's mkProbeArgs calls log._emit(rec, true)).
const bunyan = require('bunyan');

const log = bunyan.createLogger({ name: 'usdt-test', level: 'info', streams: [{ stream: process.stdout }] });
let probeRecords = 0;
const emit = bunyan.prototype._emit;
bunyan.prototype._emit = function (rec, noemit) {
  if (noemit) probeRecords++;
  return emit.apply(this, arguments);
};

// The same definition as bunyan's, so the same probe library and semaphores:
// lets the test wait until a tracer really enabled log-debug.
const dtrace = require('dtrace-provider');
const mine = dtrace.createDTraceProvider('bunyan');
for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal']) mine.addProbe('log-' + level, 'char *');
mine.enable();

process.on('message', async (m) => {
  let result = {};
  if (m.cmd === 'debug') log.debug({ n: m.n }, m.msg);
  if (m.cmd === 'info') log.info({ n: m.n }, m.msg);
  if (m.cmd === 'waitEnabled') {
    while (!mine['log-debug']._enabled()) await new Promise((r) => setTimeout(r, 10));
  }
  if (m.cmd === 'status') {
    result = {
      status: require('../../lib/usdt').status(),
      resolved: require.resolve('dtrace-provider'),
    };
  }
  if (m.cmd === 'exit') setImmediate(() => process.exit(0));
  process.send({ id: m.id, ok: true, probeRecords, ...result });
});
process.on('disconnect', () => process.exit(0));
process.send({ ready: true, pid: process.pid });
