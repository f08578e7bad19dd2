'use strict';
// node -r nodetrace/register app.js
// NODE_OPTIONS="--require nodetrace/register" node app.js
//
// Makes every require('dtrace-provider') in the program resolve to
// nodetrace's USDT provider, so libraries written for DTrace (bunyan's
// log-trace ... log-fatal probes, restify's, ...) fire real USDT probes on
// Linux, where the dtrace-provider package only hands out no-op stubs.
//
// Only on Linux: elsewhere the real dtrace-provider is what we would load
// anyway (and lib/usdt requires it there, which must not loop back to us).
// Only CommonJS require() is redirected, not ESM import.

const Module = require('module');
const path = require('path');

const KEY = Symbol.for('nodetrace.register');
const target = path.join(__dirname, 'lib', 'usdt', 'index.js');

if (process.platform === 'linux' && !globalThis[KEY]) {
  globalThis[KEY] = true;   // per thread: -r runs again in each worker
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (request, parent, isMain, options) {
    if (request === 'dtrace-provider') return target;
    return resolve.apply(this, arguments);
  };
}

module.exports = { target };

// HTTP requests as USDT probes (lib/http/hook.js, `nodetrace http`): once per
// thread, on every platform (elsewhere lib/usdt is dtrace-provider itself).
const HTTP_KEY = Symbol.for('nodetrace.register.http');
if (!globalThis[HTTP_KEY] && process.env.NODETRACE_HTTP !== 'off') {
  globalThis[HTTP_KEY] = true;
  require('./lib/http/hook').install(require('./lib/usdt'));
}

// Promises, timers, immediates and AsyncResources as USDT probes
// (lib/async/hook.js, `nodetrace async`): async_hooks enabled only while a
// tracer is attached. The handle (active(), uninstall()) is kept on the
// thread's global for tests and tools.
const ASYNC_KEY = Symbol.for('nodetrace.register.async');
if (!(ASYNC_KEY in globalThis) && process.env.NODETRACE_ASYNC !== 'off') {
  globalThis[ASYNC_KEY] = null;
  globalThis[ASYNC_KEY] = require('./lib/async/hook').install(require('./lib/usdt'));
}
