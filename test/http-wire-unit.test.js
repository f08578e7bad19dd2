'use strict';
// Requests reassembled from what d-scripts/http-wire.bt prints (batches of
// the first bytes of socket reads and writes, -f json): a real capture
// (test/fixtures/bpftrace-http-wire.out, how made in its .cmd) and batches
// made as the program prints them; and from http-wire.d's length-prefixed
// events (test/fixtures/dtrace-http-wire.out). Pure: no tracer needed.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { WireReader, parseWire, wireLossLines, MAX_PENDING, REORDER_NS } = require('../lib/http/wire');
const { renderLine, renderJSONLine } = require('../lib/http/records');
const { LatencyStats, histogramsJSON } = require('../lib/http/histograms');
const { splitterFor } = require('../lib/tracer/output-formats');
const { dtraceLosses, dtraceLossLine } = require('../lib/tracer/dtrace-losses');

const capture = fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-http-wire.out'), 'utf8');
const SLOW_US = 150000;   // test/targets/http-wire-server.js's /slow delay
const TIMER_EARLY_US = 2000;   // a timer may fire up to 2 ms early by a fresh clock (test/http.test.js)

// A batch entry as the program makes it: a read (R) or write (W) on fd FD
// of PID 7 at MS milliseconds, of a call that returned `ret` bytes (default:
// all of them, all copied); the bytes as bpftrace's JSON gives them (one
// character a byte).
function line(tag, fd, ms, bytes, ret = Buffer.byteLength(bytes, 'latin1')) {
  const copied = Math.min(ret, 200);
  return { type: 'map', data: { [tag === 'R' ? '@rd0' : '@wr1']: { [`7,${ms * 1000000},${fd},${ret},${copied}`]: bytes } } };
}
const closeLine = (fd, ms) => ({ type: 'map', data: { '@cl0': { [`7,${ms * 1000000},${fd}`]: 1 } } });
const OK = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';

function feed(items) {
  const reader = new WireReader({ pid: 7 });
  const records = [];
  for (const item of items) records.push(...reader.push(item));
  records.push(...reader.end());
  return { records, reader };
}
const brief = (recs) => recs.map((x) => `${x.direction} ${x.method} ${x.url} ${x.status}${x.error ? ` ${x.error}` : ''}`);

describe('http on the wire: reassembly (lib/http/wire.js)', function () {
  describe('a real capture (bpftrace 0.17, node 20, an unprepared server)', function () {
    const { records, reader } = parseWire(capture, { pid: 1953 });

    it('reports each request once, with its method, path, status and direction', function () {
      assert.deepStrictEqual(brief(records), [
        'server GET /fast/curl 200', 'server GET /missing/curl 404', 'server GET /slow/curl 200',
        'server GET /fast/c1 200', 'client GET http://127.0.0.1:37373/fast/c1 200', 'server GET /slow/c2 200', 'client GET http://127.0.0.1:37373/slow/c2 200',
        'server GET /fast/c3 200', 'client GET http://127.0.0.1:37373/fast/c3 200', 'server GET /slow/c4 200', 'client GET http://127.0.0.1:37373/slow/c4 200',
        'server GET /p1 200', 'server GET /slow/p2 200', 'server GET /missing/p3 404', 'server GET /split/s1 200',
        'server GET /fake\\x0d\\x0aHTTP/1.1 200',
      ]);
    });

    it('times a served request from its first read to its response, a made one from its write to the response read', function () {
      for (const x of records) {
        const p = x.url.replace(/^http:\/\/[^/]*/, '');
        if (p.startsWith('/slow') || x.url === '/missing/p3') assert.ok(x.us >= SLOW_US - TIMER_EARLY_US && x.us < SLOW_US + 20000, `${x.url}: ${x.us} µs`);
        else if (p === '/split/s1') assert.ok(x.us >= 100000 - TIMER_EARLY_US, `two 50 ms pauses between the pieces: ${x.us} µs`);
        else if (p.startsWith('/fake')) continue;
        else assert.ok(x.us < 20000, `${x.url}: ${x.us} µs`);
      }
    });

    it('counts every event: as many read as the program saw, none refused', function () {
      assert.strictEqual(reader.firedBy.get(1953), 38);
      assert.strictEqual(reader.arrivedBy.get(1953), 38);
      assert.deepStrictEqual([...reader.malformedBy], []);
      assert.deepStrictEqual([...reader.fullBy], [[1953, 0]]);
    });

    it('renders as the hook\'s records do: lines, JSON, histograms', function () {
      const text = records.map((x) => renderLine(x)).join('');
      assert.strictEqual(text.split('\n').length, records.length + 1);
      assert.match(text, / server GET +404 +\d+\.\d {2}\/missing\/curl\n/);
      const j = JSON.parse(renderJSONLine(records[2]));
      assert.deepStrictEqual([j.direction, j.method, j.url, j.status, j.error], ['server', 'GET', '/slow/curl', 200, null]);
      const stats = new LatencyStats({ by: 'route', identify: () => ({ pid: 1953 }) });
      for (const x of records) stats.add(x);
      assert.match(histogramsJSON(stats), /\/slow/);
    });
  });

  describe('a real capture of the D twin (DTrace for Linux 2.0, node 20): length-prefixed events', function () {
    const text = fs.readFileSync(path.join(__dirname, 'fixtures', 'dtrace-http-wire.out'), 'latin1');
    const { records, reader } = parseWire(text, { pid: 27254, format: 'wire' });

    it('gives the records the bpftrace capture gives for the same clients', function () {
      const port = (x) => x.replace(/127\.0\.0\.1:\d+/, 'HOST');
      assert.deepStrictEqual(brief(records).map(port), brief(parseWire(capture, { pid: 1953 }).records).map(port));
      for (const x of records) {
        if (x.url.replace(/^http:\/\/[^/]*/, '').startsWith('/slow')) assert.ok(x.us >= SLOW_US - TIMER_EARLY_US && x.us < SLOW_US + 20000, `${x.url}: ${x.us} µs`);
      }
    });

    it('reads every event, refuses none', function () {
      assert.strictEqual(reader.arrivedBy.get(27254), (text.match(/^W (rd|wr|cl) /gm) || []).length);
      assert.deepStrictEqual([...reader.malformedBy], []);
    });
  });

  describe('http-wire.d\'s events: what a peer sends cannot forge one', function () {
    // A request line whose bytes hold a newline and a whole fake event, and
    // the end marker: within LEN, they are bytes of the record.
    const forged = 'GET /a HTTP/1.1\r\nX: 1\nW cl 1 2 20 0 0 0 \nTracing ended.\n\r\n\r\n';
    const event = (kind, ns, bytes) => `W ${kind} 7 ${ns} 20 ${Buffer.byteLength(bytes)} ${Buffer.byteLength(bytes)} ${Buffer.byteLength(bytes)} ${bytes}\n`;
    const text = `Tracing HTTP on the wire... Hit Ctrl-C to end.\n${event('rd', 1000000, forged)}${event('wr', 2000000, OK)}Tracing ended.\n`;

    it('one request, its path as sent, no close of another fd, one end marker', function () {
      const { records, reader } = parseWire(text, { pid: 7, format: 'wire' });
      assert.deepStrictEqual(brief(records), ['server GET /a 200']);
      assert.strictEqual(reader.arrivedBy.get(7), 2);
      const items = splitterFor('wire').push(Buffer.from(text, 'latin1'));
      assert.deepStrictEqual(items.filter((i) => typeof i === 'string'), ['Tracing HTTP on the wire... Hit Ctrl-C to end.', 'Tracing ended.']);
    });

    it('what DTrace lost (its stderr: drops, probe errors) is counted and said in one line; nothing lost, nothing said', function () {
      const losses = dtraceLosses([
        'dtrace: 12 drops on CPU 0', 'dtrace: 1 drop on CPU 1', 'dtrace: 3 aggregation drops on CPU 0', 'dtrace: 2 dynamic variable drops',
        'dtrace: error in dt_clause_8 for probe ID 3623 (syscall:vmlinux:write:return): invalid address (0x3641bd60) at BPF pc 1431',
        'dtrace: some other line',
      ]);
      assert.deepStrictEqual(losses, { drops: 13, aggregationDrops: 3, variableDrops: 2, probeErrors: 1 });
      assert.match(dtraceLossLine(losses, { events: 'socket events' }), /^DTrace lost data: 13 socket events dropped \(its output buffers were full\); 3 aggregation updates dropped; 2 variable updates dropped .*; 1 probe firings cut short/);
      assert.strictEqual(dtraceLossLine(dtraceLosses(['dtrace: description \'x\' matched 3 probes'])), null);
    });

    it('refuses an event whose bytes are more than were copied, or copied more than returned', function () {
      const { records, reader } = parseWire('W rd 7 1000 20 5 2 4 GET \nW rd 7 2000 20 2 3 2 GE\n', { pid: 7, format: 'wire' });
      assert.deepStrictEqual(records, []);
      assert.strictEqual(reader.malformedBy.get(7), 2);
    });
  });

  describe('made lines', function () {
    it('keep-alive: one request after another on a connection', function () {
      const { records } = feed([
        line('R', 5, 1, 'GET /a HTTP/1.1\r\nHost: x\r\n\r\n'), line('W', 5, 3, OK),
        line('R', 5, 10, 'POST /b HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc'), line('W', 5, 15, 'HTTP/1.1 201 Created\r\n\r\n'),
      ]);
      assert.deepStrictEqual(brief(records), ['server GET /a 200', 'server POST /b 201']);
      assert.deepStrictEqual(records.map((x) => x.us), [2000, 5000]);
    });

    it('pipelined requests in one read, bodies skipped by their Content-Length', function () {
      const { records } = feed([
        line('R', 5, 1, 'POST /1 HTTP/1.1\r\nContent-Length: 27\r\n\r\nGET /not-a-request HTTP/1.1GET /2 HTTP/1.1\r\n\r\nDELETE /3 HTTP/1.0\r\n\r\n'),
        line('W', 5, 2, OK), line('W', 5, 3, 'HTTP/1.1 404 Not Found\r\n\r\n'), line('W', 5, 4, 'HTTP/1.1 204 No Content\r\n\r\n'),
      ]);
      assert.deepStrictEqual(brief(records), ['server POST /1 200', 'server GET /2 404', 'server DELETE /3 204']);
      assert.deepStrictEqual(records.map((x) => x.us), [1000, 2000, 3000], 'each from the read that brought it');
    });

    it('a request line split across reads, timed from its first byte', function () {
      const { records } = feed([
        line('R', 5, 1, 'GET /lo'), line('R', 5, 2, 'ng/path HTTP/1.1\r\nHo'), line('R', 5, 3, 'st: x\r\n\r\n'), line('W', 5, 9, OK),
      ]);
      assert.deepStrictEqual(brief(records), ['server GET /long/path 200']);
      assert.strictEqual(records[0].us, 8000);
    });

    it('a request line longer than the bytes copied: its URL as far as copied, marked cut', function () {
      const long = `GET /q?${'a'.repeat(300)} HTTP/1.1\r\nHost: x\r\n\r\n`;
      const { records } = feed([line('R', 5, 1, long.slice(0, 200), long.length), line('W', 5, 2, OK)]);
      assert.deepStrictEqual(records.map((x) => [x.method, x.url.length, x.url.slice(-2), x.status]), [['GET', 197, 'a…', 200]]);
    });

    it('a client: request written, response head read; a 100 Continue is not the response', function () {
      const { records } = feed([
        line('W', 6, 1, 'PUT /up HTTP/1.1\r\nHost: api:8080\r\nExpect: 100-continue\r\n\r\n'), line('R', 6, 2, 'HTTP/1.1 100 Continue\r\n\r\n'),
        line('R', 6, 4, 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n'),
      ]);
      assert.deepStrictEqual(brief(records), ['client PUT http://api:8080/up 200']);
      assert.strictEqual(records[0].us, 3000);
    });

    it('TLS: the SSL object is the connection, SSL_free ends it; a request made is https', function () {
      const ssl = '140737488355328';   // above 2^32: an address, not an fd
      const tls = (map, ms, bytes) => ({ type: 'map', data: { [map]: { [`7,${ms * 1000000},${ssl},${bytes.length},${bytes.length}`]: bytes } } });
      const { records } = feed([
        tls('@tw0', 1, 'GET /a HTTP/1.1\r\nHost: api:443\r\n\r\n'), tls('@tr1', 3, 'HTTP/1.1 201 Created\r\n\r\n'),
        tls('@tw0', 4, 'GET /b HTTP/1.1\r\nHost: api:443\r\n\r\n'), { type: 'map', data: { '@tf0': { [`7,${6 * 1000000},${ssl}`]: 1 } } },
        line('R', 5, 7, 'GET /plain HTTP/1.1\r\n\r\n'), line('W', 5, 8, OK),
      ]);
      assert.deepStrictEqual(brief(records), ['client GET https://api:443/a 201', 'client GET https://api:443/b 0 closed', 'server GET /plain 200']);
    });

    it('events out of order (a batch\'s entries have none) are handled in the order of their times', function () {
      const reader = new WireReader({ pid: 7 });
      const out = [...reader.push(line('W', 5, 3, OK)), ...reader.push(line('R', 5, 1, 'GET /a HTTP/1.1\r\n\r\n'))];
      assert.deepStrictEqual(out, [], 'held for the reorder time');
      out.push(...reader.flush(BigInt(3 * 1000000) + REORDER_NS));
      assert.deepStrictEqual(brief(out), ['server GET /a 200']);
    });

    it('a connection closed with a request unanswered: reported as closed; its fd reused is a new connection', function () {
      const { records } = feed([
        line('R', 5, 1, 'GET /gone HTTP/1.1\r\n\r\n'), closeLine(5, 4),
        line('R', 5, 5, 'GET /new HTTP/1.1\r\n\r\n'), line('W', 5, 6, OK),
      ]);
      assert.deepStrictEqual(brief(records), ['server GET /gone 0 closed', 'server GET /new 200']);
      assert.strictEqual(records[0].us, 3000);
    });

    it('a response with no request seen (the trace began mid-request) is no record', function () {
      const { records } = feed([line('W', 5, 1, OK), line('R', 8, 2, 'HTTP/1.1 200 OK\r\n\r\n')]);
      assert.deepStrictEqual(records, []);
    });
  });

  describe('connections that leave HTTP/1: upgrades and HTTP/2', function () {
    // test/fixtures/bpftrace-http-wire-upgrade.out (how made in its .cmd):
    // after each 101 the client wrote "GET /after-upgrade HTTP/1.1..." or
    // HTTP/2's preface, the server "HTTP/1.1 200 OK...": none is a request.
    const real = parseWire(fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-http-wire-upgrade.out'), 'utf8'), { pid: 14321 });
    const said = (recs) => recs.map((x) => (x.connection ? `${x.direction} ${x.connection} connection`
      : `${x.direction} ${x.method} ${x.url} ${x.status}${x.error ? ` ${x.error}` : ''}${x.upgrade ? ` -> ${x.upgrade}` : ''}`));

    it('a real capture: each HTTP/1 request once, each upgrade said, HTTP/2 said once per side, nothing after an upgrade read', function () {
      const base = 'http://127.0.0.1:34053';
      assert.deepStrictEqual(said(real.records), [
        'server GET /plain/1 200', `client GET ${base}/plain/1 200`, 'server GET /plain/2 200', `client GET ${base}/plain/2 200`,
        'server GET /chat 101 -> websocket', `client GET ${base}/chat 101 -> websocket`,
        'server GET /h2c-upgrade 101 -> h2c', `client GET ${base}/h2c-upgrade 101 -> h2c`,
        'client HTTP/2 connection', 'server HTTP/2 connection',
        'server GET /plain/3 200', `client GET ${base}/plain/3 200`,
      ]);
      assert.strictEqual(real.reader.arrivedBy.get(14321), 39);
      assert.strictEqual(real.reader.firedBy.get(14321), 39);
      assert.deepStrictEqual(wireLossLines(real.reader, (pid) => `PID ${pid}`),
        ['PID 14321: 2 HTTP/2 connections (1 served, 1 made): HTTP/2 is not decoded, their requests are not reported.']);
    });

    it('renders an upgrade and an HTTP/2 connection as such, in lines and JSON', function () {
      const chat = real.records.find((x) => x.url === '/chat');
      assert.match(renderLine(chat), / server GET +101 +\d+\.\d {2}\/chat {2}\(upgraded to websocket: not read further\)\n$/);
      assert.strictEqual(JSON.parse(renderJSONLine(chat)).upgrade, 'websocket');
      assert.ok(!('upgrade' in JSON.parse(renderJSONLine(real.records[0]))), 'a request that stays HTTP/1 has no upgrade field');
      const h2 = real.records.find((x) => x.connection);
      assert.match(renderLine(h2), / client - +HTTP\/2 +- {2}\(an HTTP\/2 connection: its requests are not read\)\n$/);
      const j = JSON.parse(renderJSONLine(h2));
      assert.deepStrictEqual([j.direction, j.connection, j.method, j.url, j.status, j.ms], ['client', 'HTTP/2', null, null, null, null]);
      const stats = new LatencyStats({ by: 'route', identify: () => ({ pid: 14321 }) });
      for (const x of real.records.filter((r) => !r.connection)) stats.add(x);
      assert.match(histogramsJSON(stats), /\/chat/);
    });

    it('a real capture over TLS (ALPN h2, node\'s own OpenSSL): the HTTP/2 connection said once per end, over TLS', function () {
      // test/fixtures/bpftrace-http-wire-h2-tls.out (how made in its .cmd).
      const { records, reader } = parseWire(fs.readFileSync(path.join(__dirname, 'fixtures', 'bpftrace-http-wire-h2-tls.out'), 'utf8'), { pid: 19123 });
      const h2 = records.filter((x) => x.connection);
      assert.deepStrictEqual(h2.map((x) => `${x.direction} ${x.connection} ${x.tls}`), ['client HTTP/2 true', 'server HTTP/2 true']);
      assert.strictEqual(records.length, 6 + 4 + 2, said(records).join('\n'));
      assert.strictEqual(reader.arrivedBy.get(19123), 40);
      assert.match(renderLine(h2[0]), /\(an HTTP\/2 connection over TLS: its requests are not read\)/);
    });

    it('HTTP/2 over TLS (ALPN h2): the preface in SSL_read\'s plaintext, the preface split across reads', function () {
      const ssl = '140737488355328';
      const tls = (map, ms, bytes) => ({ type: 'map', data: { [map]: { [`7,${ms * 1000000},${ssl},${bytes.length},${bytes.length}`]: bytes } } });
      const { records } = feed([
        tls('@tr0', 1, 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x12\x04'), tls('@tr0', 2, 'GET /in-a-frame HTTP/1.1\r\n\r\n'), tls('@tw1', 3, OK),
        line('R', 5, 4, 'PRI * HTTP/2'), line('R', 5, 5, '.0\r\n\r\nSM\r\n\r\n'), line('R', 5, 6, 'GET /x HTTP/1.1\r\n\r\n'), line('W', 5, 7, OK),
      ]);
      assert.deepStrictEqual(said(records), ['server HTTP/2 connection', 'server HTTP/2 connection']);
      assert.deepStrictEqual(records.map((x) => x.tls), [true, false]);
      assert.match(renderLine(records[0]), /an HTTP\/2 connection over TLS/);
    });

    it('an upgrade refused (200) stays HTTP/1; asked and answered 101 in one read each, the rest of the read is not read', function () {
      const { records } = feed([
        line('R', 5, 1, 'GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'), line('W', 5, 2, 'HTTP/1.1 426 Upgrade Required\r\nContent-Length: 0\r\n\r\n'),
        line('R', 5, 3, 'GET /next HTTP/1.1\r\n\r\n'), line('W', 5, 4, OK),
        line('R', 6, 5, 'GET /ws HTTP/1.1\r\nUpgrade: WebSocket, foo/2\r\n\r\nGET /frame HTTP/1.1\r\n\r\n'),
        line('W', 6, 6, 'HTTP/1.1 101 Switching Protocols\r\n\r\nHTTP/1.1 200 OK\r\n\r\n'),
        line('R', 6, 7, 'GET /later HTTP/1.1\r\n\r\n'), line('W', 6, 8, OK), closeLine(6, 9),
        line('R', 6, 10, 'GET /fd-reused HTTP/1.1\r\n\r\n'), line('W', 6, 11, OK),
      ]);
      assert.deepStrictEqual(said(records), ['server GET /ws 426', 'server GET /next 200', 'server GET /ws 101 -> WebSocket', 'server GET /fd-reused 200']);
    });

    it('a CONNECT answered 2xx is a tunnel; an Upgrade naming no protocol token is "unknown", never text of the peer\'s', function () {
      const { records } = feed([
        line('W', 5, 1, 'CONNECT db:5432 HTTP/1.1\r\nHost: db:5432\r\n\r\n'), line('R', 5, 2, 'HTTP/1.1 200 Connection Established\r\n\r\n'),
        line('W', 5, 3, 'GET /inside HTTP/1.1\r\n\r\n'), line('R', 5, 4, OK),
        line('R', 6, 5, 'GET /x HTTP/1.1\r\nUpgrade: \x1b[31mred\r\n\r\n'), line('W', 6, 6, 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: \x1b]0;x\r\n\r\n'),
      ]);
      assert.deepStrictEqual(said(records), ['client CONNECT db:5432 200 -> tunnel', 'server GET /x 101 -> unknown']);
      assert.match(renderLine(records[0]), /db:5432 {2}\(a tunnel: not read further\)\n$/);
      assert.ok(!renderLine(records[1]).includes('\x1b'));
    });
  });

  describe('what a peer or the process controls', function () {
    it('refuses entries not as the program writes them, and counts them', function () {
      const bad = { type: 'map', data: { '@rd0': { '7,1,5,10,20': 'GET / HTTP/1.1\r\n\r\n', '7,1,5,3,3': 'GET /', 'x,1,5,3,3': 'GET', '7,2,5,5,5': 5 } } };
      const { records, reader } = feed([bad]);
      assert.deepStrictEqual(records, []);
      assert.strictEqual(reader.malformedBy.get(7), 4);
      assert.match(reader.malformedWhy.get(7), /not as the program writes it/);
    });

    it('a request line holding control bytes cannot make a line or a field of its own', function () {
      const { records } = feed([line('R', 5, 1, 'GET /a\x1b[31m\x00b HTTP/1.1\r\n\r\n'), line('W', 5, 2, OK)]);
      assert.strictEqual(records.length, 1);
      const text = renderLine(records[0]);
      assert.strictEqual(text.split('\n').length, 2);
      assert.ok(!text.includes('\x1b'), text);
    });

    it('a fake status line inside a request body is not a response; a newline in a path ends no line of ours', function () {
      const { records } = feed([
        line('R', 5, 1, 'POST /p HTTP/1.1\r\nContent-Length: 19\r\n\r\nHTTP/1.1 500 Fake\r\n'),
        line('W', 5, 2, OK),
      ]);
      assert.deepStrictEqual(brief(records), ['server POST /p 200']);
    });

    it('a request line in a body that comes in calls of its own is body, not a request; the next one after the answer is read', function () {
      const smuggled = 'GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n';
      // By its length: 100 bytes, 36 of them in a later read of their own.
      const byLength = feed([
        line('R', 5, 1, 'POST /p HTTP/1.1\r\nContent-Length: 100\r\n\r\n'),
        line('R', 5, 2, smuggled),
        line('W', 5, 3, OK),
        line('R', 5, 4, 'GET /next HTTP/1.1\r\n\r\n'),
        line('W', 5, 5, OK),
        closeLine(5, 6),
      ]);
      assert.deepStrictEqual(brief(byLength.records), ['server POST /p 200', 'server GET /next 200']);
      // Chunked, its head and first chunk cut at the prefix: the body goes on.
      const chunked = feed([
        line('R', 6, 1, `POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n${'x'.repeat(150)}`, 400),
        line('R', 6, 2, smuggled),
        line('W', 6, 3, OK),
        closeLine(6, 4),
      ]);
      assert.deepStrictEqual(brief(chunked.records), ['server POST /c 200']);
      // Expect: 100-continue: the 100 is no answer, the body still comes.
      const continued = feed([
        line('R', 7, 1, 'PUT /e HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 36\r\n\r\n'),
        line('W', 7, 2, 'HTTP/1.1 100 Continue\r\n\r\n'),
        line('R', 7, 3, smuggled),
        line('W', 7, 4, OK),
        closeLine(7, 5),
      ]);
      assert.deepStrictEqual(brief(continued.records), ['server PUT /e 200']);
      // A chunked body ended in its own call, and a length within it: the next request is read.
      const ended = feed([
        line('R', 8, 1, 'POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n'),
        line('W', 8, 2, OK),
        line('R', 8, 3, 'POST /b HTTP/1.1\r\nContent-Length: 2\r\n\r\nok'),
        line('R', 8, 4, 'GET /pipelined HTTP/1.1\r\n\r\n'),
        line('W', 8, 5, OK),
        line('W', 8, 6, OK),
      ]);
      assert.deepStrictEqual(brief(ended.records), ['server POST /a 200', 'server POST /b 200', 'server GET /pipelined 200']);
    });

    it('items that are no batch are no events; the counts at exit are taken, the larger when printed twice', function () {
      const { records, reader } = feed(['R 7 5 1 10 10 GET', { type: 'printf', data: 'GET / HTTP/1.1\r\n' }, { type: 'map', data: { '@events': 3 } },
        { type: 'map', data: { '@full': 2 } }, { type: 'map', data: { '@events': 0 } }, { type: 'map', data: { '@rd7': { '7,1,5,3,3': 'GET' } } }]);
      assert.deepStrictEqual(records, []);
      assert.strictEqual(reader.firedBy.get(7), 3);
      assert.strictEqual(reader.fullBy.get(7), 2);
    });

    it('bounded: a connection keeps at most MAX_PENDING unanswered requests, the rest counted and said', function () {
      const lines = [];
      for (let i = 0; i < MAX_PENDING + 5; i++) lines.push(line('R', 5, i + 1, `GET /${i} HTTP/1.1\r\n\r\n`));
      const { reader } = feed(lines);
      assert.strictEqual(reader.droppedBy.get(7), 5);
      assert.strictEqual(reader.connections.get('7:5').served.length, MAX_PENDING);
      assert.deepStrictEqual(wireLossLines(reader, (pid) => `PID ${pid}`),
        [`PID 7: 5 requests given up (more than ${MAX_PENDING} unanswered on a connection, or more than 4,096 connections).`]);
    });

    it('says per process what was left out of a full batch, refused or lost', function () {
      const { reader } = feed([line('R', 5, 1, 'GET / HTTP/1.1\r\n\r\n'), { type: 'map', data: { '@rd0': { 'x,1,5,3,3': 'GET' } } },
        { type: 'map', data: { '@events': 10 } }, { type: 'map', data: { '@full': 4 } }]);
      const [text] = wireLossLines(reader, (pid) => `PID ${pid}`);
      assert.match(text, /^PID 7: 4 of 10 socket events left out: the batch was full/);
      assert.match(text, /1 socket event refused as malformed \(an entry not as the program writes it\)/);
      assert.match(text, /4 of 10 socket events seen by the probes but not reported \(nodetrace could not read them/);
    });
  });
});

describe('http on the wire: where a process\'s OpenSSL is (lib/http/tls-object.js)', function () {
  const { locateTls } = require('../lib/http/tls-object');
  const maps = [
    { start: 0x400000, end: 0x500000, offset: 0, perms: 'r-xp', inode: '1', path: '/usr/bin/node', range: '400000-500000' },
    { start: 0x7f0000, end: 0x7f1000, offset: 0, perms: 'r-xp', inode: '2', path: '/usr/lib/libssl.so.3', range: '7f0000-7f1000' },
  ];
  const symbols = (defs) => (file, names) => {
    const [, range] = /map_files\/(.*)$/.exec(typeof file === 'string' ? file : '') || [];
    const found = defs[range] || [];
    return { loads: [], found: new Map(names.filter((n) => found.includes(n)).map((n) => [n, { value: 1, size: 1 }])) };
  };

  it('takes the first object that defines SSL_read, SSL_write and SSL_free, through map_files', function () {
    const r = locateTls({ pid: 9, maps, exePath: '/usr/bin/node', findSymbols: symbols({ '7f0000-7f1000': ['SSL_read', 'SSL_write', 'SSL_free'] }) });
    assert.deepStrictEqual(r, { object: '/usr/lib/libssl.so.3', file: '/proc/9/map_files/7f0000-7f1000' });
  });

  it('says why when none defines all three', function () {
    const r = locateTls({ pid: 9, maps, exePath: '/usr/bin/node', findSymbols: symbols({ '400000-500000': ['SSL_read'] }) });
    assert.match(r.why, /none of the \d+ objects it maps with code defines SSL_read, SSL_write, SSL_free/);
  });
});

describe('http on the wire: the plan (lib/http/wire-plan.js)', function () {
  const { planWire } = require('../lib/http/wire-plan');
  const { bpftraceOf } = require('./support/program-variants');
  const argsOf = (plan) => Object.fromEntries(plan.arguments.map((a, i) => [a.name, plan.argv[plan.argv.length - plan.arguments.length + i]]));

  it('asks str() for one byte more where it copies n - 1 and a NUL (0.23+), with the limit to match', function () {
    const old = planWire(bpftraceOf('0.17.0'), 42, { file: '/proc/42/map_files/1-2' });
    assert.deepStrictEqual(argsOf(old), { PID: '42', NUL_BYTE: '0', TLS_FILE: '/proc/42/map_files/1-2' });
    assert.strictEqual(old.env.BPFTRACE_STRLEN, '200');
    const now = planWire(bpftraceOf('0.23.2'), 42, { file: '/proc/42/map_files/1-2' });
    assert.strictEqual(argsOf(now).NUL_BYTE, '1');
    assert.strictEqual(now.env.BPFTRACE_MAX_STRLEN, '201');
    assert.strictEqual(now.env.BPFTRACE_STR_TRUNC_TRAILER, '');
  });

  it('leaves the @tls part and TLS_FILE out where the process has no OpenSSL', function () {
    const plan = planWire(bpftraceOf('0.17.0'), 42, { why: 'none' });
    assert.deepStrictEqual(Object.keys(argsOf(plan)), ['PID', 'NUL_BYTE']);
    assert.ok(!/SSL_read/.test(plan.programText.replace(/\/\*[^]*?\*\//g, '')), 'no TLS probe left');
    assert.ok(plan.argv.includes('-f') && plan.quiesce && plan.quiesce.line === 'Tracing stopped.');
  });
});
