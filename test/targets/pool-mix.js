'use strict';
// A known mix of thread-pool work, for `nodetrace latency`'s test of the
// whole pool: ROUNDS rounds, each with one of every kind, a few rounds in
// flight at once; then it prints what it completed, counted by itself:
//   done {"fs.stat":N,"fs.readFile":N,"dns.lookup":N,"zlib.gzip":N,"crypto.pbkdf2":N,"sqlite3.exec":N}
// and exits; with DONE_FILE, it writes that line to that file too (dtrace -c
// gives the command dtrace's own stdout, which nodetrace reads and does not
// pass on). ROUNDS (default 200), IN_FLIGHT (default 4). It starts at once:
// run it under `nodetrace latency -c`, whose probes are in place before it runs.
const fs = require('fs');
const dns = require('dns');
const zlib = require('zlib');
const crypto = require('crypto');
const sqlite3 = require('sqlite3');

const ROUNDS = Number(process.env.ROUNDS || 200);
const IN_FLIGHT = Number(process.env.IN_FLIGHT || 4);
const done = { 'fs.stat': 0, 'fs.readFile': 0, 'dns.lookup': 0, 'zlib.gzip': 0, 'crypto.pbkdf2': 0, 'sqlite3.exec': 0 };
const db = new sqlite3.Database(':memory:');
const payload = Buffer.alloc(16 * 1024, 'nodetrace ');

function count(kind, next) {
  return (err) => {
    if (err) throw err;
    done[kind]++;
    next();
  };
}

function round(next) {
  let left = 6;
  const one = () => { if (--left === 0) next(); };
  fs.stat(__dirname, count('fs.stat', one));
  fs.readFile(__filename, count('fs.readFile', one));
  dns.lookup('localhost', count('dns.lookup', one));
  zlib.gzip(payload, count('zlib.gzip', one));
  crypto.pbkdf2('secret', 'salt', 1000, 32, 'sha256', count('crypto.pbkdf2', one));
  db.exec('SELECT 1', count('sqlite3.exec', one));
}

let started = 0;
let finished = 0;
function lane() {
  if (started >= ROUNDS) return;
  started++;
  round(() => {
    finished++;
    if (finished === ROUNDS) {
      db.close(() => {
        const line = 'done ' + JSON.stringify(done);
        if (process.env.DONE_FILE) fs.writeFileSync(process.env.DONE_FILE, line + '\n');
        console.log(line);
      });
    }
    else lane();
  });
}
for (let i = 0; i < IN_FLIGHT; i++) lane();
