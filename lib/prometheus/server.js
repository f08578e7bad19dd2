'use strict';
// The endpoint a Prometheus server scrapes: GET /metrics, answered with the
// latest text the command rendered; nothing else. Whoever can reach the
// address can scrape it (it binds where asked, 127.0.0.1 unless told), so
// every request is bounded: its head in bytes and time, the connections at
// once, and a body is never read. (docs/security.md, "Live metrics".)
const http = require('http');
const { CONTENT_TYPE } = require('./exposition');

const LIMITS = {
  headerBytes: 8 * 1024,        // a scraper's request head is a few hundred bytes
  headersMs: 5000,              // the whole head within this long
  requestMs: 10000,             // the whole request within this long
  idleMs: 15000,                // a kept-alive connection left idle (Prometheus scrapes every 15 s by default)
  connections: 16,              // at once: a scraper or two, and a person with curl
};

function plain(res, status, text, extra = {}) {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text), ...extra });
  res.end(text);
}

/**
 * Listens on host:port (port 0: any free one) and answers GET /metrics with
 * render() (a string). Resolves once listening with { address: {host, port},
 * close() }; rejects with the listen error (EADDRINUSE, EACCES...).
 */
function serveMetrics({ host, port }, render) {
  const server = http.createServer({ maxHeaderSize: LIMITS.headerBytes }, (req, res) => {
    // A scrape carries no body: one that does is refused, unread, and its connection closed.
    if ((req.headers['content-length'] && req.headers['content-length'] !== '0') || req.headers['transfer-encoding']) {
      plain(res, 400, 'nodetrace takes no request body\n', { Connection: 'close' });
      res.on('finish', () => req.socket.destroy());
      return;
    }
    const url = req.url.split('?')[0];
    if (url !== '/metrics') {
      plain(res, 404, 'nodetrace serves GET /metrics only\n');
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      plain(res, 405, 'GET /metrics only\n', { Allow: 'GET, HEAD' });
    } else {
      let text;
      try {
        text = render();
      } catch {
        // A dump that could not be read is no reason to end the trace.
        plain(res, 500, 'nodetrace could not render its metrics\n');
        return;
      }
      res.writeHead(200, { 'Content-Type': CONTENT_TYPE, 'Content-Length': Buffer.byteLength(text) });
      res.end(req.method === 'HEAD' ? undefined : text);
    }
  });
  server.headersTimeout = LIMITS.headersMs;
  server.requestTimeout = LIMITS.requestMs;
  server.keepAliveTimeout = LIMITS.idleMs;
  server.maxConnections = LIMITS.connections;
  server.setTimeout(LIMITS.requestMs + LIMITS.idleMs, (socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.removeListener('error', reject);
      const a = server.address();
      resolve({
        address: { host: a.address, port: a.port },
        close: () => new Promise((done) => {
          server.close(() => done());
          server.closeAllConnections();
        }),
      });
    });
  });
}

module.exports = { serveMetrics, LIMITS };
