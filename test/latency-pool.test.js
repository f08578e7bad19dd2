'use strict';
// `nodetrace latency` sees the whole of libuv's thread pool @tracer: fs,
// dns.lookup, zlib, crypto and an add-on (sqlite3) in one process, each
// named as its users know it and counted as the process counted itself; and
// a pool kept saturated by one kind of work is reported so, naming it.
const { requireTracing, killStragglers } = require('./support/harness');
const { tracePoolMix, checkPoolMix, traceSaturatedPool, checkSaturatedJson, checkSaturatedText } = require('./support/pool-checks');
const { findProbePoints, POOL } = require('../lib/latency/probe-points');

// The official build's libuv keeps its symbols; a stripped one has no pool
// probes (test/node-builds.test.js checks that it says so).
function poolUnavailableReason(pid) {
  const found = findProbePoints(pid);
  const missing = POOL.filter((n) => !found.points[n]);
  return missing.length ? `this node's libuv has no symbols for ${missing.join(', ')}` : null;
}

describe('nodetrace latency: the whole thread pool @tracer', function () {
  this.timeout(180000);
  before(function () { requireTracing(this); });
  afterEach(killStragglers);

  it('names fs, dns.lookup, zlib, crypto and sqlite3 work as users know it, counted as the target counted @core', async function () {
    const { report, own } = await tracePoolMix();
    checkPoolMix(report, own);
  });

  describe('a pool of 2 threads kept busy by crypto.pbkdf2 while fs.stat waits behind it', function () {
    let reports;
    before(async function () {
      reports = await traceSaturatedPool({
        skipUnless: (pid) => {
          const reason = poolUnavailableReason(pid);
          if (!reason) return;
          if (process.env.CI) throw new Error(reason);
          this.skip(reason);
        },
      });
    });

    it('says the pool was saturated, by what, with 2 threads and a queue', function () {
      checkSaturatedJson(reports.json);
    });

    it('says so in one line of the text report', function () {
      checkSaturatedText(reports.text);
    });
  });
});
