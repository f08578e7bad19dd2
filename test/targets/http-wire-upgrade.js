'use strict';
// For test/http-wire.test.js: an unprepared process (no hook, no flag) whose
// connections leave HTTP/1: an http server that also accepts upgrades
// (its 'upgrade' event, answered 101), and an h2c server
// (http2.createServer). Prints "ready PID HTTP_PORT H2_PORT"; on "go" on
// stdin it makes, against itself:
//   GET /plain/1, /plain/2 (http.get);
//   GET /chat with Upgrade: websocket, answered 101; then, on the upgraded
//     socket, bytes that look like HTTP/1 (a request one way, a response
//     the other): the wire must not read them as requests;
//   GET /h2c-upgrade with Upgrade: h2c, answered 101; the client then sends
//     HTTP/2's preface on it;
//   GET /h2/1, /h2/2 over one HTTP/2 connection (http2.connect, prior knowledge);
//   GET /plain/3;
// then prints what it counted itself, one JSON line, and "done":
// { served, made (HTTP/1 requests served and answered, by the server's
// 'request' event and the client's response), requests ([{ path, status }]),
// upgrades ([{ path, protocol }]), h2Streams }.
// With `--tls KEY CERT` (files): the HTTP/2 server and its client over TLS
// (ALPN h2; the certificate not checked: the caller makes a self-signed one).
const fs = require('fs');
const http = require('http');
const http2 = require('http2');

const tls = process.argv[2] === '--tls' ? { key: fs.readFileSync(process.argv[3]), cert: fs.readFileSync(process.argv[4]) } : null;

const counted = { served: 0, made: 0, requests: [], upgrades: [], h2Streams: 0 };
// Bytes after the upgrade that would be a request and its response, were they read as HTTP/1.
const AFTER_REQUEST = 'GET /after-upgrade HTTP/1.1\r\nHost: x\r\n\r\n';
const AFTER_RESPONSE = 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n';

const server = http.createServer((req, res) => {
  counted.served++;
  req.resume();
  res.end('ok');
});
server.on('upgrade', (req, socket) => {
  const protocol = String(req.headers.upgrade);
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${protocol}\r\nConnection: Upgrade\r\n\r\n`);
  socket.once('data', () => socket.end(AFTER_RESPONSE));
});

const h2 = tls ? http2.createSecureServer(tls) : http2.createServer();
h2.on('stream', (stream) => {
  counted.h2Streams++;
  stream.respond({ ':status': 200 });
  stream.end('ok');
});

function get(path) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: server.address().port, path }, (res) => {
      counted.made++;
      counted.requests.push({ path, status: res.statusCode });
      res.resume();
      res.on('end', resolve);
    }).on('error', reject);
  });
}

// An upgrade to `protocol`, then `after` written on the upgraded socket, and the server's answer read.
function upgrade(path, protocol, headers, after) {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port: server.address().port, path, agent: false,
      headers: { Connection: 'Upgrade', Upgrade: protocol, ...headers },
    });
    req.on('upgrade', (res, socket) => {
      counted.upgrades.push({ path, protocol: res.headers.upgrade, status: res.statusCode });
      socket.on('data', () => {});
      socket.on('end', () => { socket.destroy(); resolve(); });
      socket.write(after);
    });
    req.on('error', reject);
    req.end();
  });
}

function h2Requests(paths) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`${tls ? 'https' : 'http'}://127.0.0.1:${h2.address().port}`, { rejectUnauthorized: false });
    session.on('error', reject);
    let left = paths.length;
    for (const path of paths) {
      const stream = session.request({ ':path': path });
      stream.resume();
      stream.on('end', () => { if (--left === 0) { session.close(); resolve(); } });
      stream.on('error', reject);
    }
  });
}

async function go() {
  await get('/plain/1');
  await get('/plain/2');
  await upgrade('/chat', 'websocket', { 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' }, AFTER_REQUEST);
  await upgrade('/h2c-upgrade', 'h2c', { 'HTTP2-Settings': 'AAMAAABkAAQAoAAAAAIAAAAA' }, 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
  await h2Requests(['/h2/1', '/h2/2']);
  await get('/plain/3');
  process.stdout.write(JSON.stringify(counted) + '\ndone\n');
}

process.stdin.setEncoding('utf8');
let input = '';
process.stdin.on('data', (c) => {
  input += c;
  if (input.includes('go\n')) { input = ''; go().catch((err) => { process.stdout.write(`error ${err.message}\n`); }); }
});

server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => h2.listen(0, '127.0.0.1', () => {
  process.stdout.write(`ready ${process.pid} ${server.address().port} ${h2.address().port}\n`);
}));
