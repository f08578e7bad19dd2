'use strict';
// Reassembling bunyan records from what d-scripts/log-snoop.bt (bpftrace 0.17,
// real captures in test/fixtures/snoop-bpftrace-*.out, commands in *.cmd) and
// log-snoop.d print. Pure: no tracer needed.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { LineSplitter, Reassembler, parseLine, PIECE_BYTES } = require('../lib/snoop/reassemble');

const FIXTURES = path.join(__dirname, 'fixtures');

function fixture(name) {
  return fs.readFileSync(path.join(FIXTURES, name), 'utf8');
}

// Feeds text in chunks of `size` characters (Infinity: at once) and returns
// every event plus the reassembler.
function run(text, { size = Infinity, staleMs } = {}) {
  const sp = new LineSplitter();
  const r = new Reassembler({ staleMs });
  const events = [];
  for (let i = 0; i < text.length; i += size === Infinity ? text.length : size) {
    for (const line of sp.push(text.slice(i, size === Infinity ? undefined : i + size))) events.push(...r.push(parseLine(line)));
  }
  for (const line of sp.end()) events.push(...r.push(parseLine(line)));
  events.push(...r.finish());
  return { events, r, of: (type) => events.filter((e) => e.type === type) };
}

// The blob test/targets/bunyan-debug-loop.js logs: BLOB repeated, n characters.
function blobOf(blob, n) {
  return Array.from(blob.repeat(n)).slice(0, n).join('');
}

// A piece line as log-snoop.bt prints it.
function S(pid, tid, id, idx, k, text) {
  return `S ${pid} ${tid} ${id} ${idx} ${k} ${text}\x1e\n`;
}

describe('snoop: reassembling records (bpftrace captures)', function () {
  describe('pieces with multi-byte UTF-8 at the cuts, from two processes', function () {
    const text = fixture('snoop-bpftrace-pieces.out');
    const { r, of } = run(text);

    it('rebuilds every record byte for byte, whatever the cuts split', function () {
      const records = of('record');
      assert(records.length >= 10, `only ${records.length} records`);
      let big = 0;
      for (const rec of records) {
        const o = JSON.parse(rec.text);
        assert.strictEqual(o.pid, rec.pid);
        assert(!rec.text.endsWith('\n'), 'bunyan\'s own newline is dropped');
        if (o.blob) {
          big++;
          const chars = Array.from(o.blob).length;
          assert([600, 1500].includes(chars), `a blob of ${chars} characters`);
          assert.strictEqual(o.blob, blobOf('é€😀x', chars), `record ${o.seq}: blob differs`);
          if (chars === 1500) assert(Buffer.byteLength(rec.text) > 3800, 'a record of nearly 4 KB');
        }
      }
      assert(big >= 4, 'the capture has records cut into pieces');
      assert(text.split('\n').some((l) => /^S \d+ \d+ \d+ \d+ [123] /.test(l)), 'and cuts inside UTF-8 characters');
    });

    it('marks the 10 KiB records as truncated, with what arrived', function () {
      const cut = of('truncated');
      assert(cut.length >= 3);
      for (const t of cut) {
        assert.strictEqual(t.complete, true);
        assert.strictEqual(t.level, 40);
        assert.strictEqual(t.bytesSeen, 21 * PIECE_BYTES);
        assert(t.prefix.startsWith('{"name":"huge","hostname":'), t.prefix);
        assert.strictEqual(Array.from(t.prefix).length, 200);
      }
    });

    it('accounts for every record the probes saw', function () {
      assert.strictEqual(r.stats.incomplete, 0);
      assert.strictEqual(r.stats.fired, r.stats.records + r.stats.truncated);
      assert.strictEqual(r.lostRecords(), 0);
      assert.strictEqual(r.stats.pids.size, 2);
    });

    it('gives the same events however the stream is chunked', function () {
      const whole = run(text).events;
      for (const size of [1, 7, 199, 4096]) {
        assert.deepStrictEqual(run(text, { size }).events, whole, `chunks of ${size}`);
      }
    });
  });

  describe('a capture where bpftrace\'s buffer overflowed', function () {
    const text = fixture('snoop-bpftrace-lost.out');
    const { r, of } = run(text);

    it('reads "Lost N events" and counts the records that did not arrive', function () {
      const lost = of('lost');
      assert(lost.length > 0);
      assert.strictEqual(r.stats.lostEvents, lost.reduce((n, e) => n + e.events, 0));
      assert(r.stats.incomplete > 0, 'some records lost pieces');
      assert.strictEqual(r.lostRecords(), r.stats.fired - r.stats.records - r.stats.truncated);
      assert(r.lostRecords() >= r.stats.incomplete);
    });

    it('never passes off a record that lost pieces as whole', function () {
      for (const rec of of('record')) JSON.parse(rec.text);
      for (const t of of('truncated')) {
        if (t.bytesSeen !== 21 * PIECE_BYTES) assert.strictEqual(t.complete, false);
      }
    });
  });
});

describe('snoop: reassembling records (edge cases)', function () {
  it('keeps records apart when two CPUs\' output interleaves', function () {
    const a = 'a'.repeat(199);
    const b = 'b'.repeat(199);
    const text = S(1, 1, 100, 0, 0, a) + S(2, 7, 100, 0, 0, b) + S(1, 1, 100, 1, 0, 'A\n') + S(2, 7, 100, 1, 0, 'B\n');
    const { of } = run(text);
    assert.deepStrictEqual(of('record').map((e) => [e.pid, e.tid, e.text]), [[1, 1, a + 'A'], [2, 7, b + 'B']]);
  });

  it('keeps two records of one thread apart by their id', function () {
    const text = S(1, 1, 100, 0, 0, 'x'.repeat(199)) + S(1, 1, 200, 0, 0, 'second\n') + S(1, 1, 100, 1, 0, 'first\n');
    assert.deepStrictEqual(run(text).of('record').map((e) => e.text), ['second', 'x'.repeat(199) + 'first']);
  });

  it('drops the repeated start of a character cut at a piece boundary', function () {
    // 197 ASCII bytes + the first two bytes of "€" (3 bytes): the decoder
    // turns those two into one U+FFFD; the next piece starts with "€" again.
    const first = 'x'.repeat(197) + '\ufffd';
    const { of } = run(S(1, 1, 5, 0, 2, first) + S(1, 1, 5, 1, 0, '€"}\n'));
    assert.deepStrictEqual(of('record').map((e) => e.text), ['x'.repeat(197) + '€"}']);
  });

  it('ends a record whose length is a multiple of 199 at its empty last piece', function () {
    const { of } = run(S(3, 3, 9, 0, 0, 'y'.repeat(199)) + S(3, 3, 9, 1, 0, ''));
    assert.deepStrictEqual(of('record').map((e) => e.text), ['y'.repeat(199)]);
  });

  it('reports a record that lost a middle piece as incomplete', function () {
    const { of } = run(S(1, 1, 1, 0, 0, 'a'.repeat(199)) + S(1, 1, 1, 2, 0, 'end\n'));
    assert.strictEqual(of('record').length, 0);
    assert.match(of('incomplete')[0].reason, /piece 1 .*lost/);
  });

  it('reports a record whose end never came once it is stale, or at the end', function () {
    const r = new Reassembler({ staleMs: 1000 });
    assert.deepStrictEqual(r.push(parseLine(S(1, 1, 1, 0, 0, 'a'.repeat(199)).trimEnd()), 0), []);
    assert.deepStrictEqual(r.expire(500), []);
    assert.strictEqual(r.expire(1500)[0].type, 'incomplete');
    r.push(parseLine(S(1, 1, 2, 0, 0, 'b'.repeat(199)).trimEnd()), 2000);
    assert.strictEqual(r.finish()[0].type, 'incomplete');
  });

  it('refuses pieces of the wrong size (bpftrace without BPFTRACE_STRLEN=200)', function () {
    const { of } = run(S(1, 1, 1, 0, 0, 'a'.repeat(63)) + S(1, 1, 1, 1, 0, 'b'.repeat(10)));
    // The first, short piece ends the record; the second is an orphan.
    assert.strictEqual(of('record').length, 1);
    const bad = run(S(1, 1, 1, 0, 1, 'a'.repeat(62) + '\ufffd') + S(1, 1, 1, 1, 0, 'b'));
    assert.match(bad.of('incomplete')[0].reason, /BPFTRACE_STRLEN=200/);
  });

  it('reads DTrace\'s whole records and its mark on cut ones', function () {
    const rec = '{"name":"api","hostname":"h","pid":4,"level":20,"msg":"m","time":"t","v":0}';
    const long = '{"name":"api","hostname":"h","pid":4,"level":50,"blob":"' + 'z'.repeat(5000);
    const text = `R 4 1 0 ${rec}\n\x1e\nR 4 1 1 ${long.slice(0, 4095)}\x1e\nrecords 3\n`;
    const { r, of } = run(text);
    assert.deepStrictEqual(of('record').map((e) => e.text), [rec]);
    const t = of('truncated')[0];
    assert.strictEqual(t.level, 50);
    assert.strictEqual(t.bytesSeen, 4095);
    assert.strictEqual(r.lostRecords(), 1);
  });

  it('recognises what else the tracers print', function () {
    assert.deepStrictEqual(parseLine('Lost 12 events'), { kind: 'lost', events: 12 });
    assert.deepStrictEqual(parseLine('dtrace: 3 drops on CPU 1'), { kind: 'lost', events: 3 });
    assert.deepStrictEqual(parseLine('@records: 40'), { kind: 'fired', records: 40 });
    assert.strictEqual(parseLine('ERROR: log-snoop.bt needs BPFTRACE_STRLEN=200 in its environment (it is 64)').kind, 'error');
    assert.strictEqual(parseLine('Attaching 7 probes...').kind, 'other');
    assert.strictEqual(parseLine('S 1 2 garbage').kind, 'garbled');
  });

  it('splits lines only where an S or R line really ends', function () {
    const sp = new LineSplitter();
    assert.deepStrictEqual(sp.push('Attaching 1 probe...\nS 1 1 1 0 0 {"a":1}\n'), ['Attaching 1 probe...']);
    assert.deepStrictEqual(sp.push('\x1e\nLost 1 events\nR 1 1 0 x'), ['S 1 1 1 0 0 {"a":1}\n\x1e', 'Lost 1 events']);
    assert.deepStrictEqual(sp.end(), ['R 1 1 0 x']);
  });
});
