'use strict';
// The measure the HTTP benches share (bench/http-overhead.js, bench/async.js):
// a server's CPU time per request at a fixed request rate over keep-alive.
// A fixed rate, not the most the server can do: on a 2-core host the load
// and the server share the CPUs, and throughput measures the scheduler as
// much as the server. CPU time is read in nanoseconds from
// /proc/PID/task/*/schedstat (every thread: the main one, libuv's pool,
// V8's helpers).
const fs = require('fs');
const http = require('http');
const https = require('https');

const TICK_MS = 2;

/** Nanoseconds on CPU of every thread of a process so far. */
function cpuNs(pid) {
  let total = 0;
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch { /* the thread ended */ }
  }
  return total;
}

/** GET /x at `rate` a second for `seconds` over `sockets` kept-alive sockets -> { done, secs }. */
function load({ port, seconds, rate, sockets, tls = false }) {
  const client = tls ? https : http;
  const agent = new client.Agent({ keepAlive: true, maxSockets: sockets, rejectUnauthorized: false });
  let sent = 0;
  let done = 0;
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const total = Math.round(rate * seconds);
    const finish = () => {
      clearInterval(timer);
      agent.destroy();
      resolve({ done, secs: Number(process.hrtime.bigint() - t0) / 1e9 });
    };
    const one = () => {
      sent++;
      client.get({ port, host: '127.0.0.1', path: '/x', agent }, (res) => {
        res.resume();
        res.on('end', () => { if (++done === total) finish(); });
      }).on('error', () => { if (++done === total) finish(); });
    };
    // Catch up to where the schedule says we should be (at most the
    // sockets' worth in flight: a slow server lowers the rate, visibly).
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor((Number(process.hrtime.bigint() - t0) / 1e9) * rate));
      while (sent < due && sent - done < sockets * 4) one();
    }, TICK_MS);
  });
}

/** One round on the server of `pid` -> { rps, cpuUsPerReq, done }. */
async function measure(pid, o) {
  const cpu0 = cpuNs(pid);
  const { done, secs } = await load(o);
  return { rps: done / secs, cpuUsPerReq: (cpuNs(pid) - cpu0) / 1e3 / done, done };
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

module.exports = { cpuNs, load, measure, median };
