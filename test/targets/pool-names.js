'use strict';
// Thread-pool work on known names, for `nodetrace latency --paths --hosts`:
// ROUNDS rounds (default 100), each with fs.stat of two paths (this file's
// directory and this file), fs.open + fs.close of this file, dns.lookup of
// two host names ('localhost' and this machine's own name, which resolve
// without a DNS server), and fs.stat of HOSTILE_PATHS (JSON, default none):
// paths that need not exist (a stat of a missing path still runs on the
// pool). DISTINCT (default 0) more stats, each of a path never used before
// ('/nonexistent/nodetrace-N'), flood the tracer with names. Then it prints
// what it did, counted by itself:
//   done {"stat":{PATH:N,...},"open":{PATH:N},"lookup":{HOST:N,...},"distinct":N}
// and exits. Run it under `nodetrace latency -c`, whose probes are in place
// before it runs.
const fs = require('fs');
const os = require('os');
const dns = require('dns');

const ROUNDS = Number(process.env.ROUNDS || 100);
const DISTINCT = Number(process.env.DISTINCT || 0);
const HOSTILE = JSON.parse(process.env.HOSTILE_PATHS || '[]');
const statPaths = [__dirname, __filename, ...HOSTILE];
const hosts = ['localhost', os.hostname()];
const done = { stat: {}, open: {}, lookup: {}, distinct: 0 };
const add = (table, name) => { table[name] = (table[name] || 0) + 1; };

function round(next) {
  let left = statPaths.length + 1 + hosts.length;
  const one = () => { if (--left === 0) next(); };
  // A missing path (ENOENT) or an unknown host counts: the work ran on the pool.
  for (const p of statPaths) fs.stat(p, () => { add(done.stat, p); one(); });
  fs.open(__filename, 'r', (err, fd) => {
    if (err) throw err;
    add(done.open, __filename);
    fs.close(fd, one);
  });
  for (const h of hosts) dns.lookup(h, () => { add(done.lookup, h); one(); });
}

function flood(i, next) {
  if (i >= DISTINCT) return next();
  fs.stat(`/nonexistent/nodetrace-${i}`, () => { done.distinct++; flood(i + 1, next); });
}

let rounds = 0;
const again = () => (++rounds < ROUNDS ? round(again) : flood(0, () => console.log('done ' + JSON.stringify(done))));
round(again);
