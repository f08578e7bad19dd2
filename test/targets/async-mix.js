'use strict';
// Known counts of asynchronous operations, for `nodetrace async`'s tests.
// At start it listens on loopback (port PORT, default any) and prints
// "ready PORT" (an HTTP server: the test is its client). On SIGUSR2 it runs ROUNDS (default 100) rounds,
// each one fs.read of an open file, one dns.lookup, one zlib.gzip, one
// crypto.pbkdf2 and one setTimeout, IN_FLIGHT (default 2) rounds at a time,
// then prints what it did, counted by itself:
//   done {"fs.read":N,"dns.lookup":N,"zlib.gzip":N,"crypto.pbkdf2":N,"setTimeout":N,"http.connections":N,"http.requests":N}
// (the HTTP counts: connections accepted and requests answered so far), and
// with EXIT=1 exits then. BUSY_MS=N: the first pbkdf2 callback busy-waits
// N ms on the loop (and says so: "busy N"). KEEP_ALIVE=1: each round also
// makes one request to its own server through a keep-alive agent of one
// socket, which reuses it (each reuse gives the socket's TCPWRAP a new
// async ID): also counted, "http.client.requests" and "http.client.sockets"
// (the distinct sockets they went over).
// LEAK=N: instead, on SIGUSR2 it opens a loopback TCP connection to a plain
// net server of its own every 1000/N ms, from the function
// openLeakedConnection, and never closes one (both ends are TCPWRAPs that
// stay), and reads its own file each time (released: FSREQCALLBACKs that
// end; counted as made); it answers a second SIGUSR2 with
//   done {"opened":N,"fs.read":N}
const fs = require('fs');
const dns = require('dns');
const net = require('net');
const http = require('http');
const zlib = require('zlib');
const crypto = require('crypto');

const ROUNDS = Number(process.env.ROUNDS || 100);
const IN_FLIGHT = Number(process.env.IN_FLIGHT || 2);
const LEAK = Number(process.env.LEAK || 0);
const KEEP_ALIVE = process.env.KEEP_ALIVE === '1';
const done = {
  'fs.read': 0, 'dns.lookup': 0, 'zlib.gzip': 0, 'crypto.pbkdf2': 0, setTimeout: 0,
  'http.connections': 0, 'http.requests': 0,
  ...(KEEP_ALIVE ? { 'http.client.requests': 0, 'http.client.sockets': 0 } : {}),
};
const clientSockets = new WeakSet();
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const payload = Buffer.alloc(16 * 1024, 'nodetrace ');
const fd = fs.openSync(__filename, 'r');
const into = Buffer.alloc(512);
const BUSY_MS = Number(process.env.BUSY_MS || 0);
let busyDone = false;

// The first crypto.pbkdf2 callback holds the loop for BUSY_MS.
function maybeBusy() {
  if (!BUSY_MS || busyDone) return;
  busyDone = true;
  const t0 = process.hrtime.bigint();
  while (process.hrtime.bigint() - t0 < BigInt(BUSY_MS) * 1000000n);
  console.log(`busy ${Number(process.hrtime.bigint() - t0) / 1e6}`);
}

function count(kind, next) {
  return (err) => {
    if (err) throw err;
    done[kind]++;
    next();
  };
}

// One request through the keep-alive agent, counted when its response ends.
function keptAliveGet(next) {
  const req = http.get({ host: '127.0.0.1', port: server.address().port, path: '/', agent }, (res) => {
    res.resume();
    res.on('end', () => {
      done['http.client.requests']++;
      next();
    });
  });
  req.on('socket', (socket) => {
    if (clientSockets.has(socket)) return;
    clientSockets.add(socket);
    done['http.client.sockets']++;
  });
  req.on('error', (err) => { throw err; });
}

function round(next) {
  let left = KEEP_ALIVE ? 6 : 5;
  const one = () => { if (--left === 0) next(); };
  if (KEEP_ALIVE) keptAliveGet(one);
  fs.read(fd, into, 0, into.length, 0, count('fs.read', one));
  dns.lookup('localhost', count('dns.lookup', one));
  zlib.gzip(payload, count('zlib.gzip', one));
  crypto.pbkdf2('secret', 'salt', 1000, 32, 'sha256', (err) => { maybeBusy(); count('crypto.pbkdf2', one)(err); });
  setTimeout(count('setTimeout', one), 1);
}

function rounds() {
  let started = 0;
  let finished = 0;
  const lane = () => {
    if (started >= ROUNDS) return;
    started++;
    round(() => {
      finished++;
      if (finished === ROUNDS) {
        console.log('done ' + JSON.stringify(done));
        if (process.env.EXIT === '1') process.exit(0);
      } else lane();
    });
  };
  for (let i = 0; i < IN_FLIGHT; i++) lane();
}

const server = http.createServer((req, res) => {
  done['http.requests']++;
  res.end('ok\n');
});
server.on('connection', () => { done['http.connections']++; });

const kept = [];
const sink = net.createServer(() => {});
let leaking = null;
// The leak: a connection opened here is never closed (its name is what
// `nodetrace async --stacks` must find in the creation stack).
function openLeakedConnection() {
  kept.push(net.connect(sink.address().port, '127.0.0.1'));
}
function leak() {
  if (leaking) {
    clearInterval(leaking);
    console.log('done ' + JSON.stringify({ opened: kept.length, 'fs.read': done['fs.read'] }));
    return;
  }
  leaking = setInterval(() => {
    openLeakedConnection();
    // Counted when made: the last may still be on its way when "done" is said.
    done['fs.read']++;
    fs.read(fd, into, 0, into.length, 0, (err) => { if (err) throw err; });
  }, 1000 / LEAK);
}

server.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
  sink.listen(0, '127.0.0.1', () => {
    process.on('SIGUSR2', LEAK ? leak : rounds);
    console.log(`ready ${server.address().port}`);
  });
});
