'use strict';
// A --prometheus trace for the @tracer tests: bin/nodetrace started with
// it, its endpoint found on stderr once it is tracing, scraped with plain
// http.get; then Ctrl-C and its report.
const assert = require('assert');
const http = require('http');
const { nodetrace } = require('./harness');
const { readExposition, samplesOf } = require('./prometheus-text');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], body }));
    }).on('error', reject);
  });
}

// Polls `probe` (-> a value, or null for not yet) until it answers or the bound passes; -> the value or null.
async function waitFor(probe, boundMs) {
  const until = Date.now() + boundMs;
  do {
    const v = await probe().catch(() => null);
    if (v !== null) return v;
    await sleep(200);
  } while (Date.now() < until);
  return null;
}

/**
 * Starts `nodetrace ARGS --prometheus 127.0.0.1:0`; resolves once it is
 * tracing with { url, scrape() -> samples, stop() -> its result (code,
 * stdout, stderr) after Ctrl-C }.
 */
async function startLiveTrace(args, { timeoutMs }) {
  let tracer = null;
  let err = '';
  let tracing = null;
  const saidTracing = new Promise((resolve) => { tracing = resolve; });
  const run = nodetrace([...args, '--prometheus', '127.0.0.1:0'], {
    timeoutMs,
    onSpawn: (child) => {
      tracer = child;
      child.stderr.on('data', (c) => { err += c; if (/^nodetrace: tracing /m.test(err)) tracing(); });
    },
  });
  const early = await Promise.race([saidTracing.then(() => null), run]);
  assert.strictEqual(early, null, `nodetrace ended before tracing: ${early && early.stderr}`);
  const where = /^nodetrace: serving metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)$/m.exec(err);
  assert.ok(where, err);
  const url = where[1];
  return {
    url,
    scrape: async () => {
      const r = await get(url);
      assert.deepStrictEqual([r.status, r.type], [200, 'text/plain; version=0.0.4; charset=utf-8'], r.body);
      return readExposition(r.body);
    },
    stop: () => { tracer.kill('SIGINT'); return run; },
  };
}

/** The value of the one sample of `name` for `kind` (0 where there is none yet). */
function valueOf(samples, name, kind, extra) {
  const found = samplesOf(samples, name, kind, extra);
  assert.ok(found.length <= 1, `${name} ${kind}: ${found.length} samples`);
  return found.length ? found[0].value : 0;
}

/**
 * The loop every command's live test runs: `bursts` times, ask the target
 * for a burst (`start(n)`), wait until it says it is done (`finished(n)`:
 * its own count, or null for not yet), then until the endpoint shows it
 * (`shown(samples, n, counts)`: true once every burst so far is served),
 * and keep one scrape `settleMs` later. Ctrl-C at the end, whatever
 * happened. -> { counts: [the target's], scrapes: [...], report }.
 */
async function scrapeAfterBursts(live, { start, finished, shown, bursts = 2, waitMs, settleMs }) {
  const counts = [];
  const scrapes = [];
  let report;
  try {
    for (let n = 1; n <= bursts; n++) {
      start(n);
      const count = await waitFor(async () => finished(n), waitMs);
      assert.ok(count !== null, `the target did not finish burst ${n} within ${waitMs / 1000} s`);
      counts.push(count);
      const seen = await waitFor(async () => (shown(await live.scrape(), n, counts) ? true : null), waitMs);
      assert.ok(seen, `the endpoint did not show burst ${n} (the target's counts: ${JSON.stringify(counts)}) within ${waitMs / 1000} s`);
      await sleep(settleMs);
      scrapes.push(await live.scrape());
    }
  } finally {
    report = await live.stop();
  }
  return { counts, scrapes, report };
}

/** A target's stdout kept whole as it comes, in target.said. */
function keepSaid(target) {
  target.said = '';
  target.stdout.setEncoding('utf8');
  target.stdout.on('data', (c) => { target.said += c; });
  return target;
}

module.exports = { get, waitFor, sleep, startLiveTrace, valueOf, scrapeAfterBursts, keepSaid };
