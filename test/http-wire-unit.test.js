'use strict';
// Requests reassembled from what d-scripts/http-wire.bt prints (batches of
// the pieces of each call on the connections it follows, -f json) and what
// http-wire.d prints (the same pieces, length-prefixed): real captures
// (test/fixtures/*http-wire*.out, how made in their .cmd) and calls made as
// the programs print them. Pure: no tracer needed.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { WireReader, parseWire, wireLossLines, EVENT, MAX_PENDING, MAX_CONNECTIONS, REORDER_NS } = require('../lib/http/wire');
const { parseHead, CARRY_BYTES, HELD_CALLS } = require('../lib/http/wire-framing');
const { PIECE_BYTES, HEAD_BYTES, IOVECS, DTRACE_FDS } = require('../lib/http/wire-plan');
const { renderLine, renderJSONLine } = require('../lib/http/records');
const { LatencyStats, histogramsJSON } = require('../lib/http/histograms');
const { splitterFor } = require('../lib/tracer/output-formats');
const { dtraceLosses, dtraceLossLine } = require('../lib/tracer/dtrace-losses');

const fixture = (name) => fs.readFileSync(path.join(__dirname, 'fixtures', name), 'latin1');
const SLOW_US = 150000;   // test/targets/http-wire-server.js's /slow delay
const TIMER_EARLY_US = 2000;   // a timer may fire up to 2 ms early by a fresh clock (test/http.test.js)

// A call as http-wire.bt hands it over, in one batch (set 0) of PID 7: a
// read (R) or write (W) on `fd` at `ms` milliseconds of `bytes` (a string,
// one character a byte), that returned `ret` (default: all of them), its
// first `copied` bytes copied (default: as the program copies them: the
// first PIECE_BYTES, and up to HEAD_BYTES of a call that starts with a
// start word) in pieces of PIECE_BYTES; or given `pieces` [[off, bytes]].
// `first`: the connection's first call; `last`: its last read; `tls`: an
// SSL object's (fd: its address).
const START = /^(GET |POST|PUT |HEAD|DELE|PATC|OPTI|CONN|TRAC|HTTP|PRI )/;
function call(side, fd, ms, bytes, { ret = Buffer.byteLength(bytes, 'latin1'), first = false, last = false, tls = false, copied, pieces } = {}) {
  const kind = (side === 'R' ? EVENT.READ : EVENT.WRITE) | (first ? EVENT.FIRST : 0) | (last ? EVENT.LAST : 0) | (tls ? EVENT.TLS : 0);
  const upTo = Math.min(ret, bytes.length, copied !== undefined ? copied : START.test(bytes) ? HEAD_BYTES
    : PIECE_BYTES);
  const list = pieces || [];
  for (let off = 0; !pieces
    && off < upTo; off += PIECE_BYTES) list.push([off, bytes.slice(off, Math.min(upTo, off + PIECE_BYTES))]);
  const entries = {};
  for (const [off, b] of list) entries[`${kind},1,${ms * 1000000},${fd},${ret},${off},${b.length}`] = b;
  return { type: 'map', data: { '@ev0': entries } };
}
const R = (fd, ms, bytes, o) => call('R', fd, ms, bytes, o);
const W = (fd, ms, bytes, o) => call('W', fd, ms, bytes, o);
const close = (fd, ms, tls = false) => ({ type: 'map', data: { '@ev1': { [`${EVENT.CLOSE | (tls ? EVENT.TLS : 0)},1,${ms * 1000000},${fd},0,0,0`]: '' } } });
const before = (fd, ms) => ({ type: 'map', data: { '@ev0': { [`${EVENT.BEFORE},1,${ms * 1000000},${fd},20,0,20`]: 'GET /old HTTP/1.1\r\n' } } });
const OK = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';

function feed(items) {
  const reader = new WireReader({ pid: 7 });
  const records = [];
  for (const item of items) records.push(...reader.push(item));
  records.push(...reader.end());
  return { records, reader };
}
const brief = (recs) => recs.map((x) => (x.connection ? `${x.direction} ${x.connection} connection`
  : `${x.direction} ${x.method} ${x.url} ${x.status}${x.error ? ` ${x.error}` : ''}${x.upgrade ? ` -> ${x.upgrade}` : ''}`));
const said = (reader) => wireLossLines(reader, (pid) => `PID ${pid}`);

describe('http on the wire: reassembly (lib/http/wire.js)', function () {
  describe('a real capture (bpftrace 0.17, node 20, an unprepared server)', function () {
    // test/fixtures/bpftrace-http-wire.out: curl, the server's own keep-alive
    // client, test/targets/http-wire-clients.js (pipelined, split, a literal \x0d\x0a).
    const { records, reader } = parseWire(fixture('bpftrace-http-wire.out'), { pid: 1 });
    const served = records.filter((x) => x.direction === 'server');

    it('reports each request once, with its method, path, status and direction', function () {
      assert.deepStrictEqual(served.map((x) => `${x.method} ${x.url} ${x.status}`).sort(), [
        'GET /fake\\x0d\\x0aHTTP/1.1 200', 'GET /fast/c1 200', 'GET /fast/c3 200', 'GET /fast/curl 200', 'GET /missing/curl 404',
        'GET /missing/p3 404', 'GET /p1 200', 'GET /slow/c2 200', 'GET /slow/c4 200', 'GET /slow/curl 200', 'GET /slow/p2 200', 'GET /split/s1 200',
      ]);
      assert.deepStrictEqual(records.filter((x) => x.direction === 'client').map((x) => x.url.replace(/^http:\/\/127\.0\.0\.1:\d+/, '')),
        ['/fast/c1', '/slow/c2', '/fast/c3', '/slow/c4']);
      assert.ok(records.every((x) => x.error === null));
    });

    it('times a served request from its first read to its response, a made one from its write to the response read', function () {
      for (const x of records.filter((r) => r.url.includes('/slow/'))) assert.ok(x.us >= SLOW_US - TIMER_EARLY_US, `${x.url}: ${x.us}`);
      assert.ok(served.find((x) => x.url === '/split/s1').us >= 100000 - TIMER_EARLY_US, 'from the first of its three reads');
      // Pipelined behind /slow/p2: answered after it, so timed past 150 ms from the read that brought all three.
      assert.ok(served.find((x) => x.url === '/missing/p3').us >= SLOW_US - TIMER_EARLY_US);
    });

    it('reads every call the program counted, refuses none, follows every connection', function () {
      assert.ok(reader.arrivedBy.get(1) > 0);
      assert.strictEqual(reader.firedBy.get(1), reader.arrivedBy.get(1));
      assert.deepStrictEqual(said(reader), []);
    });

    it('renders as the hook\'s records do: lines, JSON, histograms', function () {
      const text = records.map((x) => renderLine(x)).join('');
      assert.strictEqual(text.split('\n').length, records.length + 1);
      for (const x of records) assert.strictEqual(JSON.parse(renderJSONLine(x)).url, x.url);
      const stats = new LatencyStats({ by: 'route', identify: () => ({ pid: 1 }) });
      for (const x of records) stats.add(x);
      assert.match(histogramsJSON(stats), /\/split\/s1/);
    });
  });

  describe('a real capture of what a remote client sends to fool a trace (issue 35, 6 and 7)', function () {
    // test/fixtures/bpftrace-http-wire-attacks.out and its TLS twin:
    // test/targets/http-wire-attacks.js against the server, each body in a
    // read of its own; what the client was answered, and when, beside each
    // (.client, one JSON line a request, from the same run: its .cmd).
    for (const [name, scheme] of [['bpftrace-http-wire-attacks.out', 'HTTP'], ['bpftrace-http-wire-attacks-tls.out', 'HTTPS']]) {
      it(`${scheme}: no request forged from a body, each latency on its route, later requests read, the one head too long counted`, function () {
        const { records, reader } = parseWire(fixture(name), { pid: 1 });
        const answered = fixture(`${name}.client`).split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
        const followed = answered.filter((a) => a.attack !== 'huge-head');
        assert.deepStrictEqual(brief(records).sort(), followed.map((a) => `server ${a.method} ${a.path} ${a.status}`).sort());
        assert.strictEqual(records.length, 10);
        for (const a of followed) {
          // The client's time (its head's write to its answer) encloses the server's (its head's read to its answer's write).
          const us = records.find((x) => x.url === a.path).us;
          assert.ok(us <= a.ms * 1000 + 1000, `${a.path}: traced ${us} us, the client measured ${a.ms} ms`);
        }
        assert.ok(records.find((x) => x.url === '/slow/report').us >= SLOW_US - TIMER_EARLY_US, 'its own 150 ms');
        assert.deepStrictEqual(said(reader), ['PID 1: 1 connection could not be followed after a point (a head longer than the bytes copied of it: 1); '
          + '2 requests on it from then on are not reported.']);
      });
    }
  });

  describe('a cluster\'s worker forked while traced (http-wire.bt\'s PARENT)', function () {
    // test/fixtures/bpftrace-http-wire-cluster.out (its .cmd): the primary
    // and 2 workers named, worker 1 killed and replaced by worker 3 once
    // attached, then 8 requests; beside it (.client) what each worker counted.
    it('a real capture: the new worker asked about once, at its exec, and its requests read as it counted them', function () {
      const client = fixture('bpftrace-http-wire-cluster.out.client');
      const [primary, , killed, kept] = /^ready (\d+) (\d+) (\d+) (\d+)$/m.exec(client).slice(1).map(Number);
      const forked = Number(/^respawned \d+ (\d+)$/m.exec(client)[1]);
      const asked = [];
      const { records, reader } = parseWire(fixture('bpftrace-http-wire-cluster.out'),
        { pids: [primary, killed, kept], follow: (pid) => { asked.push(pid); return pid === forked; } });
      assert.deepStrictEqual(asked, [forked]);
      const routeOf = (url) => url.replace(/\/\d+$/, '').replace(/^\/missing$/, '(none)');
      for (const line of client.split('\n').filter((l) => l.startsWith('{'))) {
        const { worker, served } = JSON.parse(line);
        const traced = {};
        for (const r of records.filter((x) => x.pid === worker && x.direction === 'server')) {
          const key = `${r.method} ${routeOf(r.url)} ${r.status}`;
          traced[key] = (traced[key] || 0) + 1;
        }
        assert.deepStrictEqual(traced, served, `worker ${worker}`);
      }
      assert.strictEqual(records.filter((x) => x.pid === forked).length, 4);
      assert.strictEqual(records.filter((x) => x.pid === killed).length, 0);
      assert.deepStrictEqual(said(reader), [], 'nothing lost or refused');
    });

    it('another child of the primary (follow() says no): its calls dropped, not refused, the batch\'s count still whole', function () {
      const child = (item) => JSON.parse(JSON.stringify(item).replace(/"(\d+,1,\d+,-?\d+,-?\d+,\d+,\d+)"/g, '"$1,9"'));
      const asked = [];
      const reader = new WireReader({ pids: [7], follow: (pid) => { asked.push(pid); return false; } });
      const items = [
        { type: 'map', data: { '@ev0': { [`${EVENT.EXEC},9,1000000,0,0,0,0,9`]: '' } } },
        child(R(5, 2, 'GET /not-a-worker HTTP/1.1\r\n\r\n', { first: true })), child(W(5, 3, OK)),
        { type: 'map', data: { '@n0': 3 } },
      ];
      const records = items.flatMap((i) => reader.push(i)).concat(reader.end());
      assert.deepStrictEqual([records, asked], [[], [9]]);
      assert.deepStrictEqual(said(reader), []);
    });
  });

  describe('bodies are counted off the calls\' lengths, never read as messages', function () {
    const smuggled = 'GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n';

    it('a Content-Length body in calls of its own, whatever it holds (a request, a response, a 101, HTTP/2\'s preface)', function () {
      const bodies = [smuggled, 'HTTP/1.1 500 Fake\r\nContent-Length: 0\r\n\r\n', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n',
        'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'];
      for (const body of bodies) {
        const { records, reader } = feed([
          R(5, 1, `POST /p HTTP/1.1\r\nContent-Length: ${body.length}\r\n\r\n`, { first: true }), R(5, 2, body), W(5, 3, OK),
          R(5, 4, 'GET /next HTTP/1.1\r\n\r\n'), W(5, 5, 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n'), close(5, 6),
        ]);
        assert.deepStrictEqual(brief(records), ['server POST /p 200', 'server GET /next 404'], body);
        assert.deepStrictEqual(said(reader), []);
      }
    });

    it('an answer before the body is read: the request\'s, timed to it; the body still counted, the next request read', function () {
      const { records } = feed([
        R(5, 1, `POST /early HTTP/1.1\r\nContent-Length: ${smuggled.length}\r\n\r\n`, { first: true }), W(5, 2, OK),
        R(5, 100, smuggled), R(5, 200, 'GET /slow HTTP/1.1\r\n\r\n'), W(5, 350, OK), close(5, 400),
      ]);
      assert.deepStrictEqual(brief(records), ['server POST /early 200', 'server GET /slow 200']);
      assert.deepStrictEqual(records.map((x) => x.us), [1000, 150000]);
    });

    it('pipelined requests in one read, bodies skipped by their Content-Length', function () {
      const { records } = feed([
        R(5, 1, 'POST /1 HTTP/1.1\r\nContent-Length: 27\r\n\r\nGET /not-a-request HTTP/1.1GET /2 HTTP/1.1\r\n\r\nDELETE /3 HTTP/1.0\r\n\r\n', { first: true }),
        W(5, 2, OK), W(5, 3, 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n'), W(5, 4, 'HTTP/1.1 204 No Content\r\n\r\n'),
      ]);
      assert.deepStrictEqual(brief(records), ['server POST /1 200', 'server GET /2 404', 'server DELETE /3 204']);
      assert.deepStrictEqual(records.map((x) => x.us), [1000, 2000, 3000], 'each from the read that brought it');
    });

    it('a chunked body: its data counted by each size line, a request inside a chunk is data', function () {
      const data = `${smuggled.length.toString(16)}\r\n${smuggled}\r\n`;
      const { records, reader } = feed([
        R(6, 1, 'POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n', { first: true }), R(6, 2, data), R(6, 3, '0\r\n'), R(6, 4, '\r\n'),
        W(6, 5, OK), R(6, 6, 'GET /after HTTP/1.1\r\n\r\n'), W(6, 7, OK),
      ]);
      assert.deepStrictEqual(brief(records), ['server POST /c 200', 'server GET /after 200']);
      assert.deepStrictEqual(said(reader), []);
    });

    it('a chunk\'s size line past the bytes copied: the connection is not guessed at, its later requests counted', function () {
      const chunk = 'x'.repeat(HEAD_BYTES);   // the next size line past what is copied of the call
      const { records, reader } = feed([
        R(6, 1, `POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n${chunk.length.toString(16)}\r\n${chunk}\r\n1\r\nx\r\n0\r\n\r\n`, { first: true }),
        W(6, 2, OK), R(6, 3, smuggled), W(6, 4, OK), close(6, 5),
      ]);
      assert.deepStrictEqual(brief(records), ['server POST /c 200']);
      assert.deepStrictEqual(said(reader), ['PID 7: 1 connection could not be followed after a point (bytes the framing needs were not copied: 1); '
        + '1 request on it from then on is not reported.']);
    });

    it('a head longer than the bytes copied: its own answer and the later ones counted, none reported or guessed', function () {
      const head = `POST /long HTTP/1.1\r\nX-Pad: ${'a'.repeat(HEAD_BYTES)}\r\nContent-Length: ${smuggled.length}\r\n\r\n`;
      const { records, reader } = feed([R(5, 1, 'GET /a HTTP/1.1\r\n\r\n', { first: true }), W(5, 2, OK),
        R(5, 3, head), R(5, 4, smuggled), W(5, 5, OK), R(5, 6, 'GET /b HTTP/1.1\r\n\r\n'), W(5, 7, OK), close(5, 8)]);
      assert.deepStrictEqual(brief(records), ['server GET /a 200']);
      assert.deepStrictEqual(said(reader), ['PID 7: 1 connection could not be followed after a point (a head longer than the bytes copied of it: 1); '
        + '2 requests on it from then on are not reported.']);
    });

    it('a head split across reads, timed from its first byte; one carried past the bound is given up', function () {
      const { records } = feed([R(5, 1, 'GET /lo', { first: true }), R(5, 2, 'ng/path HTTP/1.1\r\nHo'), R(5, 3, 'st: x\r\n\r\n'), W(5, 9, OK)]);
      assert.deepStrictEqual(brief(records), ['server GET /long/path 200']);
      assert.strictEqual(records[0].us, 8000);
      const items = [R(6, 1, `GET /x HTTP/1.1\r\nX: ${'a'.repeat(100)}`, { first: true })];
      for (let i = 0; i < CARRY_BYTES / 100 + 1; i++) items.push(R(6, 2 + i, 'a'.repeat(100)));
      const bounded = feed(items);
      assert.match(said(bounded.reader)[0], /a head longer than 16,384 bytes: 1/);
      assert.ok(bounded.reader.connections.get('7:6').framers.read.carry === null, 'nothing kept');
    });

    it('what node refuses is not followed: Content-Length beside Transfer-Encoding, two lengths, a folded line, a coding not chunked', function () {
      for (const head of ['Content-Length: 3\r\nTransfer-Encoding: chunked', 'Content-Length: 3\r\nContent-Length: 4', 'X: a\r\n b', 'Transfer-Encoding: gzip']) {
        const { records, reader } = feed([R(5, 1, `POST /x HTTP/1.1\r\n${head}\r\n\r\nabc`, { first: true }), W(5, 2, OK), close(5, 3)]);
        assert.deepStrictEqual(records, [], head);
        assert.match(said(reader)[0],
          /1 connection could not be followed after a point \((a head node would refuse|a transfer coding nodetrace does not follow): 1\); 1 request/,
          head);
      }
    });

    it('responses: none after HEAD, a 204 or a 304; a body until close without a length; 100 Continue is not the answer', function () {
      const { records, reader } = feed([
        W(6, 1, 'HEAD /h HTTP/1.1\r\nHost: api\r\n\r\n', { first: true }), R(6, 2, 'HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n'),
        W(6, 3, 'PUT /up HTTP/1.1\r\nHost: api\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n'), R(6, 4, 'HTTP/1.1 100 Continue\r\n\r\n'),
        W(6, 5, 'ok'), R(6, 6, 'HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n'),
        W(6, 7, 'GET /stream HTTP/1.1\r\nHost: api\r\n\r\n'), R(6, 8, 'HTTP/1.0 200 OK\r\n\r\nHTTP/1.1 200 OK\r\n\r\n'), R(6, 9, OK), close(6, 10),
      ]);
      assert.deepStrictEqual(brief(records), ['client HEAD http://api/h 200', 'client PUT http://api/up 304', 'client GET http://api/stream 200']);
      assert.deepStrictEqual(said(reader), []);
    });

    it('node\'s chunked answers, writev\'s iovecs copied each: the next answer found after the last chunk', function () {
      const head = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';
      const { records } = feed([
        R(5, 1, 'GET /a HTTP/1.1\r\n\r\n', { first: true }),
        W(5, 2, '', { ret: head.length + 10, pieces: [[0, `${head}5`], [head.length + 1, '\r\n'], [head.length + 3, 'hello'], [head.length + 8, '\r\n']] }),
        W(5, 3, '', { ret: 5, pieces: [[0, '0'], [1, '\r\n'], [3, '\r\n']] }),
        R(5, 4, 'GET /b HTTP/1.1\r\n\r\n'), W(5, 5, OK),
      ]);
      assert.deepStrictEqual(brief(records), ['server GET /a 200', 'server GET /b 200']);
    });
  });

  describe('connections: from their start only, and what they become', function () {
    it('keep-alive, one request after another; a client\'s request named by its URL', function () {
      const { records } = feed([
        R(5, 1, 'GET /a HTTP/1.1\r\nHost: x\r\n\r\n', { first: true }), W(5, 3, OK),
        R(5, 10, 'POST /b HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc'), W(5, 15, 'HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n'),
        W(6, 20, 'GET /c HTTP/1.1\r\nHost: api:8080\r\n\r\n', { first: true }), R(6, 23, OK),
      ]);
      assert.deepStrictEqual(brief(records), ['server GET /a 200', 'server POST /b 201', 'client GET http://api:8080/c 200']);
      assert.deepStrictEqual(records.map((x) => x.us), [2000, 5000, 3000]);
    });

    it('one the program says it stopped following (its state lost) is given up, counted, not said opened before', function () {
      const { records, reader } = feed([R(5, 1, 'GET /a HTTP/1.1\r\n\r\n', { first: true }), before(5, 2), W(5, 3, OK)]);
      assert.deepStrictEqual(records, []);
      assert.deepStrictEqual(said(reader), ['PID 7: 1 connection could not be followed after a point (the tracer lost track of it: 1); '
        + '1 request on it from then on is not reported.']);
    });

    it('a connection opened before the trace began is said, not read; one whose start was lost is counted, not read', function () {
      const { records, reader } = feed([before(5, 1), W(8, 2, OK), R(8, 3, 'GET /mid HTTP/1.1\r\n\r\n'), W(8, 4, OK)]);
      assert.deepStrictEqual(records, []);
      assert.deepStrictEqual(said(reader), [
        'PID 7: 1 connection could not be followed after a point (events lost: 1).',
        'PID 7: 1 connection opened before tracing began was not read (where a message starts inside a connection cannot be known): '
        + 'trace longer, or from before its clients connect.',
      ]);
    });

    it('a connection closed with a request unanswered: reported as closed; its fd used again is a new connection', function () {
      const { records } = feed([
        R(5, 1, 'GET /gone HTTP/1.1\r\n\r\n', { first: true }), close(5, 4),
        R(5, 5, 'GET /new HTTP/1.1\r\n\r\n', { first: true }), W(5, 6, OK),
      ]);
      assert.deepStrictEqual(brief(records), ['server GET /gone 0 closed', 'server GET /new 200']);
      assert.strictEqual(records[0].us, 3000);
    });

    it('TLS: the SSL object is the connection, SSL_free ends it; a request made is https', function () {
      const ssl = '140737488355328';   // above 2^32: an address, not an fd
      const { records } = feed([
        W(ssl, 1, 'GET /a HTTP/1.1\r\nHost: api:443\r\n\r\n', { first: true, tls: true }), R(ssl, 3, 'HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n', { tls: true }),
        W(ssl, 4, 'GET /b HTTP/1.1\r\nHost: api:443\r\n\r\n', { tls: true }), close(ssl, 6, true),
        R(5, 7, 'GET /plain HTTP/1.1\r\n\r\n', { first: true }), W(5, 8, OK),
      ]);
      assert.deepStrictEqual(brief(records), ['client GET https://api:443/a 201', 'client GET https://api:443/b 0 closed', 'server GET /plain 200']);
    });

    it('upgrades: answered 101 it leaves HTTP/1 (the program reads no more); refused, what came after the request is read', function () {
      const { records } = feed([
        R(5, 1, 'GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n', { first: true }),
        W(5, 2, 'HTTP/1.1 426 Upgrade Required\r\nContent-Length: 0\r\n\r\n'), R(5, 3, 'GET /next HTTP/1.1\r\n\r\n'), W(5, 4, OK),
        R(6, 5, 'GET /ws HTTP/1.1\r\nUpgrade: WebSocket, foo/2\r\nConnection: upgrade\r\n\r\nGET /frame HTTP/1.1\r\n\r\n', { first: true }),
        W(6, 6, 'HTTP/1.1 101 Switching Protocols\r\n\r\nHTTP/1.1 200 OK\r\n\r\n', { last: true }),
        R(6, 10, 'GET /fd-reused HTTP/1.1\r\n\r\n', { first: true }), W(6, 11, OK),
      ]);
      assert.deepStrictEqual(brief(records), ['server GET /ws 426', 'server GET /next 200', 'server GET /ws 101 -> WebSocket', 'server GET /fd-reused 200']);
    });

    it('a 101 the program stopped at that is a body\'s bytes: the connection counted, not guessed at', function () {
      const body = 'HTTP/1.1 101 Switching Protocols\r\n\r\n';
      const { records, reader } = feed([
        R(5, 1, 'GET /echo HTTP/1.1\r\n\r\n', { first: true }), W(5, 2, `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`),
        R(5, 3, 'GET /next HTTP/1.1\r\n\r\n'), W(5, 4, body, { last: true }),
      ]);
      assert.deepStrictEqual(brief(records), ['server GET /echo 200']);
      assert.match(said(reader)[0],
        /1 connection could not be followed after a point \(an upgrade's answer inside a body: 1\); 1 request on it/);
    });

    it('a CONNECT answered 2xx is a tunnel; an Upgrade naming no protocol token is "unknown", never text of the peer\'s', function () {
      const { records } = feed([
        W(5, 1, 'CONNECT db:5432 HTTP/1.1\r\nHost: db:5432\r\n\r\n', { first: true }), R(5, 2, 'HTTP/1.1 200 Connection Established\r\n\r\n'),
        W(5, 3, 'GET /inside HTTP/1.1\r\n\r\n'), R(5, 4, OK),
        R(6, 5, 'GET /x HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: \x1b[31mred\r\n\r\n', { first: true }),
        W(6, 6, 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: \x1b]0;x\r\n\r\n', { last: true }),
      ]);
      assert.deepStrictEqual(brief(records), ['client CONNECT db:5432 200 -> tunnel', 'server GET /x 101 -> unknown']);
      assert.match(renderLine(records[0]), /db:5432 {2}\(a tunnel: not read further\)\n$/);
      assert.ok(!renderLine(records[1]).includes('\x1b'));
    });

    it('HTTP/2: its preface as a connection\'s first bytes, in plain text or TLS, is said once; its frames are not read', function () {
      const ssl = '140737488355328';
      const { records, reader } = feed([
        R(ssl, 1, 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x12\x04', { first: true, last: true, tls: true }),
        W(6, 4, 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', { first: true, last: true }),
      ]);
      assert.deepStrictEqual(brief(records), ['server HTTP/2 connection', 'client HTTP/2 connection']);
      assert.deepStrictEqual(records.map((x) => x.tls), [true, false]);
      assert.match(renderLine(records[0]), /an HTTP\/2 connection over TLS/);
      assert.deepStrictEqual(said(reader), ['PID 7: 2 HTTP/2 connections (1 served, 1 made): HTTP/2 is not decoded, their requests are not reported.']);
    });

    it('events out of order (a batch\'s entries have none) are handled in the order of their times', function () {
      const reader = new WireReader({ pid: 7 });
      const out = [...reader.push(W(5, 3, OK)), ...reader.push(R(5, 1, 'GET /a HTTP/1.1\r\n\r\n', { first: true }))];
      assert.deepStrictEqual(out, [], 'held for the reorder time');
      out.push(...reader.flush(BigInt(3 * 1000000) + REORDER_NS));
      assert.deepStrictEqual(brief(out), ['server GET /a 200']);
    });

    it('calls a batch lost (its count above what came): every connection then open is given up, its requests counted', function () {
      const { records, reader } = feed([
        R(5, 1, 'GET /a HTTP/1.1\r\n\r\n', { first: true }), { type: 'map', data: { '@n0': 1 } },
        R(5, 2, 'GET /b HTTP/1.1\r\n\r\n'), { type: 'map', data: { '@n0': 3 } },
        W(5, 3, OK), W(5, 4, OK), R(6, 5, 'GET /new HTTP/1.1\r\n\r\n', { first: true }), W(6, 6, OK), { type: 'map', data: { '@n0': 4 } },
      ]);
      assert.deepStrictEqual(brief(records), ['server GET /new 200']);
      const lines = said(reader);
      assert.match(lines[0], /^PID 7: 2 of 8 socket calls seen by the probes but not reported \(the batch was full/);
      assert.strictEqual(lines[1], 'PID 7: 1 connection could not be followed after a point (events lost: 1); 2 requests on it from then on are not reported.');
    });
  });

  describe('what a peer or the process controls', function () {
    it('refuses pieces not as the program writes them, and counts them', function () {
      const bad = { type: 'map', data: { '@ev0': { '1,1,5,6,10,0,20': 'GET / HTTP/1.1', '1,1,5,6,3,0,3': 'GET /', '9,1,5,6,3,0,3': 'GET', '1,1,5,6,5,0,5': 5, '3,1,5,6,1,0,0': '' } } };
      const { records, reader } = feed([bad]);
      assert.deepStrictEqual(records, []);
      assert.strictEqual(reader.malformedBy.get(7), 5);
      assert.match(reader.malformedWhy.get(7), /not as the program writes it/);
    });

    it('a request line holding control bytes cannot make a line or a field of its own', function () {
      const { records } = feed([R(5, 1, 'GET /a\x1b[31mb HTTP/1.1\r\n\r\n', { first: true }), W(5, 2, OK)]);
      assert.strictEqual(records.length, 1);
      const text = renderLine(records[0]);
      assert.strictEqual(text.split('\n').length, 2);
      assert.ok(!text.includes('\x1b'), text);
    });

    it('items that are no batch are no events', function () {
      const { records, reader } = feed(['W 1 7 5 1 10 0 10 10 GET', { type: 'printf', data: 'GET / HTTP/1.1\r\n' }, { type: 'map', data: { '@ev7': { '1,1,5,6,3,0,3': 'GET' } } }]);
      assert.deepStrictEqual(records, []);
      assert.strictEqual(reader.arrivedBy.size, 0);
    });

    it('bounded: a connection keeps at most MAX_PENDING unanswered requests, the rest counted and said', function () {
      const items = [];
      for (let i = 0; i < MAX_PENDING + 5; i++) items.push(R(5, i + 1, `GET /${i} HTTP/1.1\r\n\r\n`, { first: i === 0 }));
      const { reader } = feed(items);
      assert.strictEqual(reader.droppedBy.get(7), 5);
      assert.strictEqual(reader.connections.get('7:5').pending.length, MAX_PENDING);
      assert.deepStrictEqual(said(reader), [`PID 7: 5 requests given up (more than ${MAX_PENDING} unanswered on a connection, `
        + `or more than ${MAX_CONNECTIONS.toLocaleString('en-US')} connections).`]);
    });

    it('bounded: 16,384 connections; the oldest given up, its later calls counted, not read', function () {
      const items = [];
      for (let fd = 0; fd <= MAX_CONNECTIONS; fd++) items.push(R(fd, 1, 'GET /a HTTP/1.1\r\n\r\n', { first: true }));
      items.push(W(MAX_CONNECTIONS, 2, OK), W(0, 3, OK));
      const { records, reader } = feed(items);
      assert.deepStrictEqual(brief(records), ['server GET /a 200']);
      assert.strictEqual(reader.connections.size, MAX_CONNECTIONS);
      assert.strictEqual(reader.droppedBy.get(7), 2, 'the oldest two: one for the newcomer, one for the connection given up');
      assert.match(said(reader)[0], /1 connection could not be followed after a point \(events lost: 1\)\./);
    });

    it('bounded: calls held after a request to leave HTTP/1 until its answer', function () {
      const items = [R(5, 1, 'GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n', { first: true })];
      for (let i = 0; i <= HELD_CALLS; i++) items.push(R(5, 2 + i, 'x'));
      const { reader } = feed(items);
      assert.match(said(reader)[0], /more than 64 calls before the answer to an upgrade: 1/);
    });

    it('a head: its start line, fields and framing as node reads them', function () {
      const head = (s) => parseHead(Buffer.from(`${s}\r\n\r\n`, 'latin1'));
      assert.deepStrictEqual(head('GET /a?b HTTP/1.1\r\nHost: x:1\r\nConnection: keep-alive'),
        { kind: 'request', method: 'GET', url: '/a?b', host: 'x:1', upgrade: null, connect: false, length: 0 });
      assert.deepStrictEqual(head('HTTP/1.1 200 OK\r\ntransfer-encoding:  Chunked '), { kind: 'response', status: 200, upgrade: null, chunked: true });
      assert.deepStrictEqual(head('HTTP/1.0 200'), { kind: 'response', status: 200, upgrade: null, untilClose: true });
      assert.deepStrictEqual(head('PRI * HTTP/2.0'), { kind: 'http2' });
      for (const bad of ['GET / HTTP/2.0', 'GET  / HTTP/1.1', 'GET / HTTP/1.1\r\nBad Name: x', 'GET / HTTP/1.1\r\nContent-Length: -1']) {
        assert.ok(head(bad).lost, bad);
      }
    });
  });

  describe('http-wire.d\'s pieces: what a peer sends cannot forge one', function () {
    // A request whose body holds newlines, a whole fake record and the end
    // marker: within LEN, they are bytes of the record.
    const body = '\nW 3 1 2 20 0 0 0 0 \nTracing ended.\n';
    const forged = `POST /a HTTP/1.1\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const piece = (kind, ns, bytes) => `W ${kind} 7 ${ns} 20 ${bytes.length} 0 ${bytes.length} ${bytes.length} ${bytes}\n`;
    const text = `Tracing HTTP on the wire... Hit Ctrl-C to end.\n${piece(EVENT.READ | EVENT.FIRST, 1000000, forged)}${piece(EVENT.WRITE, 2000000, OK)}Tracing ended.\n`;

    it('one request, its path as sent, no close of another fd, one end marker', function () {
      const { records, reader } = parseWire(text, { pid: 7, format: 'wire' });
      assert.deepStrictEqual(brief(records), ['server POST /a 200']);
      assert.strictEqual(reader.arrivedBy.get(7), 2);
      const items = splitterFor('wire').push(Buffer.from(text, 'latin1'));
      assert.deepStrictEqual(items.filter((i) => typeof i === 'string'), ['Tracing HTTP on the wire... Hit Ctrl-C to end.', 'Tracing ended.']);
    });

    it('a real capture (DTrace for Linux 2.0, node 20): the requests the bpftrace capture gives for the same clients', function () {
      const { records, reader } = parseWire(fixture('dtrace-http-wire.out'), { pid: 1, format: 'wire' });
      assert.deepStrictEqual(records.filter((x) => x.direction === 'server').map((x) => `${x.method} ${x.url} ${x.status}`).sort(),
        parseWire(fixture('bpftrace-http-wire.out'), { pid: 1 }).records.filter((x) => x.direction === 'server').map((x) => `${x.method} ${x.url} ${x.status}`).sort());
      assert.strictEqual(records.filter((x) => x.direction === 'client').length, 4);
      assert.strictEqual(reader.malformedBy.size, 0);
      assert.deepStrictEqual(said(reader), []);
    });

    it('sockets at a descriptor past those it follows: not read, counted, said in the closing line (a real capture, its bound lowered)', function () {
      const { records, reader } = parseWire(fixture('dtrace-http-wire-high-fd.out'), { pid: 1, format: 'wire' });
      // The requests on the sockets below the bound, each once; none of the others.
      assert.deepStrictEqual(brief(records), ['server GET /low/curl1 200', 'server GET /low/curl2 200']);
      assert.strictEqual(reader.malformedBy.size, 0);
      assert.deepStrictEqual(said(reader), ['PID 1: 5 sockets accepted or connected at a descriptor of 65,536 or more were not read '
        + '(DTrace\'s program follows the descriptors below it; bpftrace\'s follows every one).']);
      // One is said in the singular; an UNFOLLOWED record carries nothing else.
      const one = parseWire('W 5 7 1000 70000 0 0 0 0 \n', { pid: 7, format: 'wire' });
      assert.match(said(one.reader)[0], /^PID 7: 1 socket accepted or connected at a descriptor of 65,536 or more was not read /);
      const bad = parseWire('W 5 7 1000 70000 3 0 3 3 GET\n', { pid: 7, format: 'wire' });
      assert.strictEqual(bad.reader.unfollowedBy.size, 0);
      assert.strictEqual(bad.reader.malformedBy.get(7), 1);
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

    it('refuses a piece whose bytes are more than were asked for, or asked past what the call returned', function () {
      const { records, reader } = parseWire('W 17 7 1000 20 5 0 2 4 GET \nW 17 7 2000 20 2 0 3 2 GE\n', { pid: 7, format: 'wire' });
      assert.deepStrictEqual(records, []);
      assert.strictEqual(reader.malformedBy.get(7), 2);
    });
  });

  describe('connections that leave HTTP/1: real captures', function () {
    // test/fixtures/bpftrace-http-wire-upgrade.out (how made in its .cmd):
    // after each 101 the client wrote "GET /after-upgrade HTTP/1.1..." or
    // HTTP/2's preface, the server "HTTP/1.1 200 OK...": none is a request.
    const real = parseWire(fixture('bpftrace-http-wire-upgrade.out'), { pid: 1 });

    it('each HTTP/1 request once, each upgrade said, HTTP/2 said once per side, nothing after an upgrade read', function () {
      const base = /^http:\/\/127\.0\.0\.1:\d+/;
      assert.deepStrictEqual(brief(real.records).map((x) => x.replace(base, '')).map((x) => x.replace(/http:\/\/127\.0\.0\.1:\d+/, '')).sort(), [
        'client GET /chat 101 -> websocket', 'client GET /h2c-upgrade 101 -> h2c', 'client GET /plain/1 200', 'client GET /plain/2 200', 'client GET /plain/3 200',
        'client HTTP/2 connection',
        'server GET /chat 101 -> websocket', 'server GET /h2c-upgrade 101 -> h2c', 'server GET /plain/1 200', 'server GET /plain/2 200', 'server GET /plain/3 200',
        'server HTTP/2 connection',
      ]);
      assert.deepStrictEqual(said(real.reader), ['PID 1: 2 HTTP/2 connections (1 served, 1 made): HTTP/2 is not decoded, their requests are not reported.']);
    });

    it('renders an upgrade and an HTTP/2 connection as such, in lines and JSON', function () {
      const chat = real.records.find((x) => x.url === '/chat');
      assert.match(renderLine(chat),
        / server GET +101 +\d+\.\d {2}\/chat {2}\(upgraded to websocket: not read further\)\n$/);
      assert.strictEqual(JSON.parse(renderJSONLine(chat)).upgrade, 'websocket');
      assert.ok(!('upgrade' in JSON.parse(renderJSONLine(real.records.find((x) => x.url === '/plain/1')))), 'a request that stays HTTP/1 has no upgrade field');
      const h2 = real.records.find((x) => x.connection && x.direction === 'client');
      assert.match(renderLine(h2), / client - +HTTP\/2 +- {2}\(an HTTP\/2 connection: its requests are not read\)\n$/);
      const j = JSON.parse(renderJSONLine(h2));
      assert.deepStrictEqual([j.direction, j.connection, j.method, j.url, j.status, j.ms], ['client', 'HTTP/2', null, null, null, null]);
    });

    it('over TLS (ALPN h2, node\'s own OpenSSL): the HTTP/2 connection said once per end, over TLS', function () {
      const { records } = parseWire(fixture('bpftrace-http-wire-h2-tls.out'), { pid: 1 });
      const h2 = records.filter((x) => x.connection);
      assert.deepStrictEqual(h2.map((x) => `${x.direction} ${x.connection} ${x.tls}`).sort(), ['client HTTP/2 true', 'server HTTP/2 true']);
      assert.strictEqual(records.length, 6 + 4 + 2, brief(records).join('\n'));
      assert.match(renderLine(h2[0]), /\(an HTTP\/2 connection over TLS: its requests are not read\)/);
    });
  });
});

describe('http on the wire: the programs\' constants are the reader\'s', function () {
  const read = (name) => fs.readFileSync(path.join(__dirname, '..', 'd-scripts', name), 'utf8');
  const constants = (text) => Object.fromEntries([
    ...[...text.matchAll(/^#define ([A-Z][A-Z0-9_]*) (0x[0-9a-f]+|\d+)$/gm)],
    ...[...text.matchAll(/^inline (?:int|uint32_t|uint64_t) ([A-Z][A-Z0-9_]*) = (0x[0-9a-f]+|\d+);$/gm)],
  ].map((m) => [m[1], BigInt(m[2])]));
  const expected = { PIECE: PIECE_BYTES, HEAD_BYTES, IOVECS, ...EVENT };
  // Only http-wire.d has descriptors it does not follow (bpftrace keys its map by any).
  const dtraceOnly = { FDS: DTRACE_FDS, UNFOLLOWED: EVENT.UNFOLLOWED };

  for (const file of ['http-wire.bt', 'http-wire.d']) {
    it(`${file}: PIECE, HEAD_BYTES, IOVECS and every KIND as lib/http/wire-plan.js and wire.js have them; the twins agree on the rest`, function () {
      const defined = constants(read(file));
      for (const [name, value] of Object.entries(expected)) {
        // EXEC: a cluster primary's child, http-wire.bt's only (http-wire.d reads one process).
        if ((file === 'http-wire.bt' && name in dtraceOnly) || (file === 'http-wire.d' && name === 'EXEC')) {
          assert.strictEqual(defined[name], undefined, `${name} in ${file}`);
        } else assert.strictEqual(defined[name], BigInt(value), `${name} in ${file}`);
      }
      if (file === 'http-wire.d') for (const [name, value] of Object.entries(dtraceOnly)) assert.strictEqual(defined[name], BigInt(value), name);
      const other = constants(read(file === 'http-wire.bt' ? 'http-wire.d' : 'http-wire.bt'));
      for (const name of ['NEW', 'SERVER', 'CLIENT', 'OTHER', 'OPENED_BEFORE', 'W_GET', 'W_HTTP', 'W_PRI', 'STATUS_101', 'STATUS_101_1_0']) {
        assert.strictEqual(defined[name], other[name], name);
      }
      // The start words are the bytes they name.
      for (const [name, word] of [['W_GET', 'GET '], ['W_POST', 'POST'], ['W_HTTP', 'HTTP'], ['W_PRI', 'PRI ']]) assert.strictEqual(defined[name], BigInt(Buffer.from(word).readUInt32LE(0)));
      assert.strictEqual(defined.STATUS_101, Buffer.from('1.1 101 ').readBigUInt64LE(0));
    });
  }

  it('http-wire.d copies each of IOVECS - 1 iovecs after the first in one clause of its own, all alike', function () {
    const clauses = read('http-wire.d').match(/syscall::writev:return\n\/pid == \$1 && this->go && this->k != 0 && this->more[^]*?\n}\n/g);
    assert.strictEqual(clauses.length, IOVECS - 1);
    assert.strictEqual(new Set(clauses).size, 1);
  });
});

describe('http on the wire: where a process\'s OpenSSL is (lib/http/tls-object.js)', function () {
  const { locateTls, TLS_FUNCTIONS } = require('../lib/http/tls-object');
  const maps = [
    { start: 0x400000, end: 0x500000, offset: 0, perms: 'r-xp', inode: '1', path: '/usr/bin/node', range: '400000-500000' },
    { start: 0x7f0000, end: 0x7f1000, offset: 0, perms: 'r-xp', inode: '2', path: '/usr/lib/libssl.so.3', range: '7f0000-7f1000' },
  ];
  const symbols = (defs) => (file, names) => {
    const [, range] = /map_files\/(.*)$/.exec(typeof file === 'string' ? file : '') || [];
    const found = defs[range] || [];
    return { loads: [],
      found: new Map(names.filter((n) => found.includes(n)).map((n) => [n, { value: 0x100 + n.length, size: 1 }])) };
  };

  it('takes the first object that defines SSL_read, SSL_write, SSL_free and SSL_set_bio, through map_files, with their starts', function () {
    const r = locateTls({ pid: 9, maps, exePath: '/usr/bin/node', findSymbols: symbols({ '7f0000-7f1000': [...TLS_FUNCTIONS] }) });
    assert.deepStrictEqual(r, { object: '/usr/lib/libssl.so.3', file: '/proc/9/map_files/7f0000-7f1000',
      addresses: new Map(TLS_FUNCTIONS.map((n) => [n, 0x100 + n.length])) });
  });

  it('says why when none defines all four', function () {
    const r = locateTls({ pid: 9, maps, exePath: '/usr/bin/node', findSymbols: symbols({ '400000-500000': ['SSL_read', 'SSL_write', 'SSL_free'] }) });
    assert.match(r.why, /none of the \d+ objects it maps with code defines SSL_read, SSL_write, SSL_free, SSL_set_bio/);
  });
});

describe('http on the wire: the plan (lib/http/wire-plan.js)', function () {
  const { planWire, MAP_KEYS } = require('../lib/http/wire-plan');
  const { bpftraceOf } = require('./support/program-variants');
  const argsOf = (plan) => Object.fromEntries(plan.arguments.map((a, i) => [a.name,
    plan.argv[plan.argv.length - plan.arguments.length + i]]));

  it('asks str() for one byte more where it copies n - 1 and a NUL (0.23+), with room for the NUL on every tier', function () {
    const old = planWire(bpftraceOf('0.17.0'), 42, { file: '/proc/42/map_files/1-2' });
    assert.deepStrictEqual(argsOf(old), { PID: '42', NUL_BYTE: '0', PID2: '0', PID3: '0', PID4: '0', PID5: '0', PID6: '0', PID7: '0', PID8: '0', PARENT: '0', TLS_FILE: '/proc/42/map_files/1-2' });
    assert.strictEqual(old.env.BPFTRACE_STRLEN, String(PIECE_BYTES + 1));
    assert.strictEqual(old.env.BPFTRACE_MAP_KEYS_MAX, String(MAP_KEYS));
    const now = planWire(bpftraceOf('0.23.2'), 42, { file: '/proc/42/map_files/1-2' });
    assert.strictEqual(argsOf(now).NUL_BYTE, '1');
    assert.strictEqual(now.env.BPFTRACE_MAX_STRLEN, String(PIECE_BYTES + 1));
    assert.deepStrictEqual([now.env.BPFTRACE_MAX_MAP_KEYS, now.env.BPFTRACE_MAP_KEYS_MAX], [String(MAP_KEYS), undefined], 'the map size by the name 0.20+ reads (0.24+ ignores the old)');
    assert.strictEqual(now.env.BPFTRACE_STR_TRUNC_TRAILER, '');
  });

  it('reads a set of processes (a cluster): the first as PID, the others in PID2-PID8, at most 8; PARENT its primary', function () {
    const plan = planWire(bpftraceOf('0.17.0'), [42, 43, 44], { file: '/proc/42/map_files/1-2' }, { parent: 42 });
    const a = argsOf(plan);
    assert.deepStrictEqual([a.PID, a.PID2, a.PID3, a.PID4, a.PID8, a.PARENT], ['42', '43', '44', '0', '0', '42']);
    assert.strictEqual(plan.target, null, 'no one process whose exit ends the trace');
    assert.throws(() => planWire(bpftraceOf('0.17.0'), [1, 2, 3, 4, 5, 6, 7, 8, 9], {}), /at most 8/);
  });

  it('gives bpftrace OpenSSL\'s functions by address in TLS_FILE where their starts are known, saying which is which', function () {
    const { TLS_FUNCTIONS } = require('../lib/http/tls-object');
    const addresses = new Map(TLS_FUNCTIONS.map((n, i) => [n, 0x1a6a000 + 0x100 * i]));
    const probes = (plan) => plan.programText.split('\n').filter((l) => /^u(ret)?probe:/.test(l));
    const plan = planWire(bpftraceOf('0.17.0'), 42, { file: '/proc/42/map_files/1-2', addresses });
    assert.strictEqual(argsOf(plan).TLS_FILE, '/proc/42/map_files/1-2');
    assert.deepStrictEqual(probes(plan).filter((l) => !/^u(ret)?probe:\$11:0x[0-9a-f]+,?$/.test(l)), [], 'no probe by name');
    assert.strictEqual(probes(plan).length, 6, 'four entries and two returns');
    for (const [name, value] of addresses) assert(plan.programText.includes(`/* 0x${value.toString(16)} is ${name} */`), name);
    // Without their starts, by name: the script as it is.
    const byName = planWire(bpftraceOf('0.17.0'), 42, { file: '/proc/42/map_files/1-2', addresses: null });
    assert.strictEqual(byName.programText, null);
  });

  it('leaves the @tls part and TLS_FILE out where the process has no OpenSSL', function () {
    const plan = planWire(bpftraceOf('0.17.0'), 42, { why: 'none' });
    assert.deepStrictEqual(Object.keys(argsOf(plan)), ['PID', 'NUL_BYTE', 'PID2', 'PID3', 'PID4', 'PID5', 'PID6', 'PID7', 'PID8', 'PARENT']);
    assert.ok(!/SSL_read/.test(plan.programText.replace(/\/\*[^]*?\*\//g, '')), 'no TLS probe left');
    assert.ok(plan.argv.includes('-f') && plan.quiesce && plan.quiesce.line === 'Tracing stopped.');
  });

  it('NODETRACE_MAP_KEYS sets its maps\' bound, and the bounded maps it names (lib/render/map-full.js)', function () {
    const before = process.env.NODETRACE_MAP_KEYS;
    try {
      delete process.env.NODETRACE_MAP_KEYS;
      const usual = planWire(bpftraceOf('0.27.1'), 42, {});
      assert.strictEqual(usual.env.BPFTRACE_MAX_MAP_KEYS, String(MAP_KEYS));
      assert.deepStrictEqual(usual.details.boundedMaps.map((b) => `${b.map} ${b.keys}`), ['@conn 16384', '@call 16384', '@ev0/@ev1 16384']);
      process.env.NODETRACE_MAP_KEYS = '1024';
      const small = planWire(bpftraceOf('0.17.0'), 42, {});
      assert.strictEqual(small.env.BPFTRACE_MAP_KEYS_MAX, '1024');
      assert.strictEqual(small.details.mapKeys, 1024);
      assert.ok(small.details.boundedMaps.every((b) => b.keys === 1024));
    } finally {
      if (before === undefined) delete process.env.NODETRACE_MAP_KEYS; else process.env.NODETRACE_MAP_KEYS = before;
    }
  });
});

// Issue 35: a map of http-wire.bt that fills is said (lib/render/map-full.js),
// on a real capture: 1,200 connections held open against a @conn of 1,024
// keys, a request on each of the first 10 and the last 10.
describe('http on the wire: a full map of connections, said', function () {
  const { wireBoundedMaps } = require('../lib/http/wire-plan');
  const { mapFullLines } = require('../lib/render/map-full');
  const { records, reader } = parseWire(fixture('bpftrace-http-wire-full.out'), { pid: 9190, maxConnections: 1024 });
  const answered = fixture('bpftrace-http-wire-full.out.client').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));

  it('reads what @conn did not keep, and says it in one line naming the bound and how to raise it', function () {
    assert.deepStrictEqual(reader.mapsSeen()['@conn'], { refused: 176 });
    assert.deepStrictEqual(mapFullLines(wireBoundedMaps(1024), reader.mapsSeen()), [
      'warning: the tracer\'s map of connections followed at once (@conn) filled at 1,024 keys: 176 more were not kept, '
        + 'their requests were not read; raise the bound with NODETRACE_MAP_KEYS=N (now 1,024)',
    ]);
  });

  it('the requests on connections kept, each once as answered; those past the bound neither read nor blamed on anything else', function () {
    const kept = answered.filter((a) => a.path.includes('/kept-'));
    assert.strictEqual(kept.length, 10);
    assert.deepStrictEqual(brief(records).sort(), kept.map((a) => `server GET ${a.path} ${a.status}`).sort());
    assert.ok(records.find((r) => r.url === '/slow/kept-0').us >= SLOW_US - TIMER_EARLY_US);
    assert.deepStrictEqual(said(reader), [], 'no connection said opened before the trace or lost');
  });

  it('says nothing where no map filled (a capture of the usual bound)', function () {
    const usual = parseWire(fixture('bpftrace-http-wire-attacks.out'), { pid: 1 }).reader;
    assert.deepStrictEqual(mapFullLines(wireBoundedMaps(16384), usual.mapsSeen()), []);
  });
});
