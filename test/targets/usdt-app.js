'use strict';
// Target for test/probes.test.js: an application with USDT probes of its
// own, made with the dtrace-provider API as docs/probes.md's recipe says,
// and run unprepared (no -r nodetrace/register):
//
//   myapp:request-start   int id, char * url
//   myapp:request-done    int id, char * url, json info, int status
//   myapp:cache-miss      char * key   (only after `late`: added, and the
//                            provider enabled again, once a trace has begun)
//   laterapp:tick         int n        (only after `second`: a provider
//                            made once a trace waits for it, --wait)
//
// It counts what it fired while traced (a fire's callback runs only while a
// tracer has the probe on): the truth the test holds nodetrace's counts to.
// Driven over fork()'s IPC by usdt-harness.js's Target: { id, cmd, ... };
// started without IPC (test/examples.test.js's `target app`, a container of
// test/containers.test.js), it says "ready PID" and waits; each SIGUSR2
// makes it fire three requests (ids going on from 1) and print
// "fired {...}", its counts so far, as JSON on one line. (Not SIGUSR1:
// node opens its inspector on that.)
const usdt = require('../../lib/usdt');

const provider = usdt.createDTraceProvider('myapp');
provider.addProbe('request-start', 'int', 'char *');
provider.addProbe('request-done', 'int', 'char *', 'json', 'int');
provider.enable();

let later = null;   // provider laterapp, once `second` made it
const fired = {};   // probe -> callbacks run (while a tracer had it on)
function count(name) {
  fired[name] = (fired[name] || 0) + 1;
}

// What a request carries: a URL with the characters a terminal must not
// obey, and JSON with a quote in a string.
const urlOf = (id) => `/orders/${id}?q="a b"\n\u001b[31m\u202e`;

const handlers = {
  // `n` requests: each one's start, then (`gapMs` later) its done; with
  // the time from each start to its done as the application measures it
  // (around the two fires), mean and longest, in microseconds.
  requests({ n = 1, from = 1, gapMs = 0 }) {
    const ids = Array.from({ length: n }, (_, i) => from + i);
    const began = new Map();
    for (const id of ids) {
      began.set(id, process.hrtime.bigint());
      provider.fire('request-start', () => { count('request-start'); return [id, urlOf(id)]; });
    }
    const done = () => {
      let total = 0;
      let max = 0;
      for (const id of ids) {
        provider.fire('request-done', () => { count('request-done'); return [id, urlOf(id), { id, user: 'o"brien', ms: 12.5 }, 200]; });
        const us = Number(process.hrtime.bigint() - began.get(id)) / 1000;
        total += us;
        max = Math.max(max, us);
      }
      return { fired, meanUs: total / n, maxUs: max };
    };
    return gapMs ? new Promise((resolve) => setTimeout(() => resolve(done()), gapMs)) : done();
  },
  // A probe added once tracing began: lib/usdt makes a new probe library
  // for the new definition when the provider is enabled again.
  late() {
    provider.disable();
    provider.addProbe('cache-miss', 'char *');
    provider.enable();
    return { libraries: usdt.status().libraries };
  },
  misses({ n = 1 }) {
    for (let i = 0; i < n; i++) provider.fire('cache-miss', () => { count('cache-miss'); return [`user:${i}`]; });
    return { fired };
  },
  second() {
    later = usdt.createDTraceProvider('laterapp');
    later.addProbe('tick', 'int');
    later.enable();
    return {};
  },
  ticks({ n = 1 }) {
    for (let i = 1; i <= n; i++) later.fire('tick', () => { count('tick'); return [i]; });
    return { fired };
  },
  counts() {
    return { fired, status: usdt.status() };
  },
  exit() {
    setImmediate(() => process.exit(0));
    return {};
  },
};

if (!process.send) {
  let from = 1;
  process.on('SIGUSR2', () => {
    handlers.requests({ n: 3, from });
    from += 3;
    console.log(`fired ${JSON.stringify(fired)}`);
  });
  console.log(`ready ${process.pid}`);
  setInterval(() => {}, 3600000);
  return;
}

process.on('message', async (m) => {
  try {
    process.send({ id: m.id, ok: true, ...(await handlers[m.cmd](m)) });
  } catch (err) {
    process.send({ id: m.id, ok: false, error: err.stack || String(err) });
  }
});
process.on('disconnect', () => process.exit(0));
process.send({ ready: true, pid: process.pid });
