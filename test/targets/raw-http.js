'use strict';
// For the raw-socket clients of test/http-wire.test.js (http-wire-many.js,
// http-wire-slowloris.js, http-wire-attacks.js): a connection to the test
// server, and its HTTP/1.1 answers read off the socket, each a head with a
// Content-Length, as that server's are. Not a target of its own.
const net = require('net');

// A plain connection to PORT on 127.0.0.1, once connected.
function connect(port) {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

// The answer at the start of `buf` (the bytes read so far, as latin1 text)
// if it is whole: its status and the bytes after it; else null.
function takeAnswer(buf) {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const length = Number((/\r\ncontent-length: *(\d+)/i.exec(buf.slice(0, end + 2)) || [])[1] || 0);
  if (buf.length < end + 4 + length) return null;
  return { status: Number(buf.slice(9, 12)), rest: buf.slice(end + 4 + length) };
}

// GET `path` on the open socket `s`, its answer read whole: { status, ms
// from the write to the answer's last byte }. The socket stays open.
function getWhole(s, path) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const t = process.hrtime.bigint();
    const onData = (d) => {
      buf += d.toString('latin1');
      const answer = takeAnswer(buf);
      if (!answer) return;
      clearTimeout(timer);
      s.off('data', onData);
      resolve({ status: answer.status, ms: Number(process.hrtime.bigint() - t) / 1e6 });
    };
    const timer = setTimeout(() => { s.off('data', onData); reject(new Error(`${path}: no answer in 10 s`)); }, 10000);
    s.on('data', onData);
    s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

module.exports = { connect, takeAnswer, getWhole };
