'use strict';
// Reassembling bunyan records from what d-scripts/log-snoop.bt (bpftrace 0.17
// with -f json: batches of pieces, real captures in test/fixtures/snoop-bpftrace-*.json, commands
// in *.cmd) and log-snoop.d print. Pure: no tracer needed.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { Reassembler, parseItem, parseTextLine, PIECE_BYTES } = require('../lib/snoop/reassemble');
const { splitterFor } = require('../lib/tracer/output-formats');

const FIXTURES = path.join(__dirname, 'fixtures');

function fixture(name) {
  return fs.readFileSync(path.join(FIXTURES, name));
}

// Feeds bytes in chunks of `size` (Infinity: at once) through the plan's
// output format and returns every event plus the reassembler.
function run(bytes, { size = Infinity, staleMs, format = 'json', batchEntries, pieceBytes } = {}) {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes, 'latin1');
  const sp = splitterFor(format);
  const r = new Reassembler({ staleMs, batchEntries, ...(pieceBytes ? { pieceBytes } : {}) });
  const events = [];
  const step = size === Infinity ? buf.length || 1 : size;
  for (let i = 0; i < buf.length; i += step) {
    for (const item of sp.push(buf.subarray(i, i + step))) events.push(...r.push(parseItem(item)));
  }
  for (const item of sp.end()) events.push(...r.push(parseItem(item)));
  events.push(...r.finish());
  return { events, r, of: (type) => events.filter((e) => e.type === type) };
}

// The blob test/targets/bunyan-debug-loop.js logs: BLOB repeated, n characters.
function blobOf(blob, n) {
  return Array.from(blob.repeat(n)).slice(0, n).join('');
}

// A JSON string as bpftrace writes it: standard escapes, and each byte of
// 0x80 and up as \uffffffXX.
function bpftraceString(bytes) {
  let out = '"';
  for (const b of Buffer.from(bytes)) {
    if (b === 0x22) out += '\\"';
    else if (b === 0x5c) out += '\\\\';
    else if (b === 0x0a) out += '\\n';
    else if (b < 0x20) out += `\\u${b.toString(16).padStart(4, '0')}`;
    else if (b >= 0x80) out += `\\uffffff${b.toString(16)}`;
    else out += String.fromCharCode(b);
  }
  return out + '"';
}

function printf(text) {
  return `{"type": "printf", "data": ${bpftraceString(Buffer.concat([Buffer.from(text), Buffer.from('\n')]))}}\n`;
}

// A batch as log-snoop.bt prints it (-f json): the map of pieces
// [pid, tid, id, idx, text], in the order given (bpftrace's is its hash's).
function batch(pieces, name = '@pieces0') {
  const entries = pieces.map(([pid, tid, id, idx, text]) => `"${pid},${tid},${id},${idx}": ${bpftraceString(Buffer.from(text))}`);
  return `{"type": "map", "data": {"${name}": {${entries.join(', ')}}}}\n`;
}

// The map of cut records: [pid, tid, id, pieces].
function cuts(list, name = '@cut0') {
  return `{"type": "map", "data": {"${name}": {${list.map(([pid, tid, id, n]) => `"${pid},${tid},${id}": ${n}`).join(', ')}}}}\n`;
}

describe('snoop: reassembling records (bpftrace captures)', function () {
  describe('pieces with multi-byte UTF-8 at the cuts, from two processes', function () {
    const text = fixture('snoop-bpftrace-pieces.json');
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
      assert(/"\d+,\d+,\d+,[1-9]\d*": "\\uffffff[89ab]/.test(text.toString('latin1')),
        'and cuts inside UTF-8 characters (a piece begins with a continuation byte)');
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

  // log-snoop-whole.bt under bpftrace 0.27, one PID: bpftrace is ended at
  // once, and prints the last batch after "Tracing ended.", its maps in
  // order of name: the cut mark (@cut1) before its record (@pieces1).
  describe('bpftrace 0.27 ended at once: the last batch\'s cut mark comes before its record', function () {
    const text = fixture('snoop-bpftrace-0.27-exit.json');
    const { r, of } = run(text, { pieceBytes: 4179 });

    it('the capture has a cut mark before its record\'s piece', function () {
      const end = text.toString('latin1').split('Tracing ended.')[1];
      const cut = /"@cut1": \{"(\d+,\d+,\d+)": 1\}/.exec(end);
      assert(cut, 'a cut mark printed at exit');
      assert(end.indexOf(`"${cut[1]},0": `) > cut.index, 'its piece after it');
    });

    it('marks every 10 KiB record as truncated, with its level and its first bytes', function () {
      const cut = of('truncated');
      assert.strictEqual(cut.length, 12);
      for (const t of cut) {
        assert.deepStrictEqual([t.level, t.bytesSeen, t.complete], [40, 4179, true]);
        assert(t.prefix.startsWith('{"name":"snoop-huge","hostname":'), t.prefix);
      }
    });

    it('accounts for every record the probes saw, none incomplete', function () {
      assert.strictEqual(r.stats.incomplete, 0);
      assert.strictEqual(r.stats.fired, r.stats.records + r.stats.truncated);
      assert.strictEqual(r.lostRecords(), 0);
    });
  });

  describe('a capture where the batches\' maps filled up', function () {
    const text = fixture('snoop-bpftrace-lost.json');
    const { r, of } = run(text);

    it('counts the records that did not arrive, and shows none that lost pieces', function () {
      assert(r.stats.incomplete > 0, 'some records lost pieces');
      assert.strictEqual(r.lostRecords(), r.stats.fired - r.stats.records - r.stats.truncated);
      assert(r.lostRecords() >= r.stats.incomplete);
      for (const rec of of('record')) JSON.parse(rec.text);
      for (const t of of('truncated')) {
        if (t.bytesSeen !== 21 * PIECE_BYTES) assert.strictEqual(t.complete, false);
      }
    });

    it('tells full batches (the cause of the loss) from others, by the maps\' size', function () {
      // Captured with maps of 40 keys (the .cmd file): each of its 60 maps of pieces holds 40.
      const full = run(text, { batchEntries: 40 });
      assert.strictEqual(full.r.stats.fullBatches, 60);
      assert.strictEqual(full.of('full').length, 60);
      assert(full.of('full').every((e) => e.entries === 40));
      assert.strictEqual(run(text, { batchEntries: 4096 }).r.stats.fullBatches, 0);
      assert.strictEqual(r.stats.fullBatches, 0, 'no size given: no batch is called full');
    });
  });
});

describe('snoop: reassembling records (edge cases)', function () {
  it('keeps records apart when two threads\' pieces interleave', function () {
    const a = 'a'.repeat(199);
    const b = 'b'.repeat(199);
    const { of } = run(batch([[1, 1, 100, 1, 'A\n'], [2, 7, 100, 0, b], [1, 1, 100, 0, a], [2, 7, 100, 1, 'B\n']]));
    assert.deepStrictEqual(of('record').map((e) => [e.pid, e.tid, e.text]), [[1, 1, a + 'A'], [2, 7, b + 'B']]);
  });

  it('puts a batch\'s records in the order they were logged, by their id', function () {
    const { of } = run(batch([[1, 1, 200, 0, 'second\n'], [1, 1, 1000, 0, 'third\n'], [1, 1, 100, 1, 'first\n'], [1, 1, 100, 0, 'x'.repeat(199)]]));
    assert.deepStrictEqual(of('record').map((e) => e.text), ['x'.repeat(199) + 'first', 'second', 'third']);
  });

  it('shows a batch printed twice once (bpftrace prints what is left in the maps at exit)', function () {
    const one = batch([[1, 1, 100, 0, 'first\n'], [1, 1, 200, 0, 'second\n']]);
    const { of } = run(one + batch([[1, 1, 300, 0, 'third\n']], '@pieces1') + one);
    assert.deepStrictEqual(of('record').map((e) => e.text), ['first', 'second', 'third']);
  });

  it('joins a character cut between two pieces from their bytes', function () {
    const euro = Buffer.from('€');   // 3 bytes
    const bytes = Buffer.concat([Buffer.from('x'.repeat(197)), euro, Buffer.from('"}\n')]);
    const { of } = run(batch([[1, 1, 5, 0, bytes.subarray(0, 199)], [1, 1, 5, 1, bytes.subarray(199)]]));
    assert.deepStrictEqual(of('record').map((e) => e.text), ['x'.repeat(197) + '€"}']);
  });

  it('ends a record whose length is a multiple of 199 at its empty last piece', function () {
    const { of } = run(batch([[3, 3, 9, 0, 'y'.repeat(199)], [3, 3, 9, 1, '']]));
    assert.deepStrictEqual(of('record').map((e) => e.text), ['y'.repeat(199)]);
  });

  it('marks a record its cut map names as truncated, with its pieces', function () {
    const pieces = Array.from({ length: 21 }, (_, i) => [4, 4, 77, i, (i ? 'z' : '{"level":30,"z":"').padEnd(199, 'z')]);
    const { of } = run(batch(pieces) + cuts([[4, 4, 77, 21]]));
    const t = of('truncated');
    assert.strictEqual(t.length, 1);
    assert.deepStrictEqual([t[0].pid, t[0].level, t[0].bytesSeen, t[0].complete], [4, 30, 21 * 199, true]);
  });

  it('marks a record whose cut mark came before its pieces (as bpftrace prints at exit)', function () {
    const pieces = Array.from({ length: 21 }, (_, i) => [4, 4, 77, i, (i ? 'z' : '{"level":30,"z":"').padEnd(199, 'z')]);
    const { of } = run(cuts([[4, 4, 77, 21]], '@cut1') + batch(pieces, '@pieces1'));
    assert.deepStrictEqual(of('truncated').map((t) => [t.pid, t.level, t.bytesSeen, t.complete]),
      [[4, 30, 21 * 199, true]]);
    assert.strictEqual(of('incomplete').length, 0);
  });

  it('shows no mark for a cut record none of whose pieces came, once stale or at the end', function () {
    const r = new Reassembler({ staleMs: 1000 });
    const item = (text) => splitterFor('json').push(Buffer.from(text, 'latin1'))[0];
    assert.deepStrictEqual(r.push(parseItem(item(cuts([[4, 4, 77, 21]]))), 0), []);
    assert.deepStrictEqual(r.expire(500), []);
    assert.deepStrictEqual(r.expire(1500).map((e) => [e.type, e.bytesSeen]), [['incomplete', 0]]);
    r.push(parseItem(item(cuts([[4, 4, 78, 21]]))), 2000);
    assert.deepStrictEqual(r.finish().map((e) => e.type), ['incomplete']);
    assert.strictEqual(r.stats.truncated, 0);
  });

  it('takes a cut record\'s level and prefix only from its beginning', function () {
    const piece = (i) => (i === 1 ? '","ctx":{"level":60,"z":"' : i ? '' : '{"level":40,"z":"').padEnd(199, 'z');
    const all = Array.from({ length: 21 }, (_, i) => [4, 4, 77, i, piece(i)]);
    // Its first piece lost: no mark (another part would say its level).
    const headless = run(batch(all.filter((p) => p[3] !== 0)) + cuts([[4, 4, 77, 21]]));
    assert.strictEqual(headless.of('truncated').length, 0);
    assert.strictEqual(headless.of('incomplete').length, 1);
    // Its second lost: a mark, not complete, its prefix the first piece alone.
    const gap = run(batch(all.filter((p) => p[3] !== 1)) + cuts([[4, 4, 77, 21]])).of('truncated');
    assert.deepStrictEqual(gap.map((t) => [t.level, t.bytesSeen, t.complete, t.prefix]),
      [[40, 20 * 199, false, piece(0)]]);
  });

  it('reports a record that lost a middle piece as incomplete', function () {
    const { of } = run(batch([[1, 1, 1, 0, 'a'.repeat(199)], [1, 1, 1, 2, 'end\n']]));
    assert.strictEqual(of('record').length, 0);
    assert.match(of('incomplete')[0].reason, /piece 1 .*lost/);
  });

  it('reports a record whose end never came once it is stale, or at the end', function () {
    const r = new Reassembler({ staleMs: 1000 });
    const item = (text) => splitterFor('json').push(Buffer.from(text, 'latin1'))[0];
    assert.deepStrictEqual(r.push(parseItem(item(batch([[1, 1, 1, 0, 'a'.repeat(199)]]))), 0), []);
    assert.deepStrictEqual(r.expire(500), []);
    assert.strictEqual(r.expire(1500)[0].type, 'incomplete');
    r.push(parseItem(item(batch([[1, 1, 2, 0, 'b'.repeat(199)]]))), 2000);
    assert.strictEqual(r.finish()[0].type, 'incomplete');
  });

  it('refuses pieces longer than a piece can be', function () {
    const bad = run(batch([[1, 1, 1, 0, 'a'.repeat(250)]]));
    assert.match(bad.of('incomplete')[0].reason, /BPFTRACE_STRLEN=200/);
  });

  it('reads DTrace\'s length-prefixed records and its mark on cut ones', function () {
    const rec = '{"name":"api","hostname":"h","pid":4,"level":20,"msg":"m","time":"t","v":0}\n';
    const long = ('{"name":"api","hostname":"h","pid":4,"level":50,"blob":"' + 'z'.repeat(5000)).slice(0, 4095);
    const text = `Snooping bunyan records... Hit Ctrl-C to end.\nR 4 1 0 ${rec.length} ${rec}\nR 4 1 1 4095 ${long}\nrecords 3\nTracing ended.\n`;
    for (const size of [Infinity, 1, 13]) {
      const { r, of } = run(text, { format: 'records', size });
      assert.deepStrictEqual(of('record').map((e) => e.text), [rec.trimEnd()]);
      const t = of('truncated')[0];
      assert.strictEqual(t.level, 50);
      assert.strictEqual(t.bytesSeen, 4095);
      assert.strictEqual(r.lostRecords(), 1);
    }
  });

  it('recognises what else the tracers print', function () {
    assert.deepStrictEqual(parseItem({ type: 'lost_events', data: { events: 12 } }), { kind: 'lost', events: 12 });
    assert.deepStrictEqual(parseTextLine('dtrace: 3 drops on CPU 1'), { kind: 'lost', events: 3 });
    assert.deepStrictEqual(parseItem({ type: 'map', data: { '@records': 40 } }), { kind: 'fired', records: 40 });
    assert.deepStrictEqual(parseItem('records 40'), { kind: 'fired', records: 40 });
    assert.strictEqual(parseItem({ type: 'printf', data: 'ERROR: log-snoop.bt needs BPFTRACE_STRLEN=200 in its environment (it is 64)\n' }).kind, 'error');
    assert.strictEqual(parseItem({ type: 'text', line: 'Attaching 7 probes...' }).kind, 'other');
    assert.strictEqual(parseItem({ type: 'map', data: { '@pieces1': { '1,2,garbage': 'x' } } }).kind, 'garbled');
    assert.strictEqual(parseItem({ type: 'map', data: { '@cut1': { '1,2,3': 'x' } } }).kind, 'garbled');
    assert.strictEqual(parseItem({ type: 'text', line: '{"type": "map", "data": {"@pieces1": {' + 'x'.repeat(5000) }).kind, 'garbled',
      'a batch cut at nodetrace\'s line limit is not news to print');
  });
});

describe('snoop: what a traced process writes in a record cannot forge anything', function () {
  // A hostile record: it holds the old separators, newlines, a fake record of
  // PID 1 in every format the scripts print, and fake loss reports.
  const forged = [
    '{"name":"evil","pid":666,"level":20,"msg":"x\x1e',
    'S 1 1 99 0 {"name":"sshd","hostname":"h","pid":1,"level":30,"msg":"forged","time":"t","v":0}\x1e',
    'R 1 1 0 80 {"name":"sshd","hostname":"h","pid":1,"level":30,"msg":"forged","time":"t","v":0}',
    '{"type": "printf", "data": "S 1 1 98 0 forged\\n"}',
    '{"type": "lost_events", "data": {"events": 1000}}',
    'Lost 1000 events',
    '@records: 99999',
    'records 99999',
    'Tracing ended.',
    '"}',
  ].join('\n') + '\n';

  it('bpftrace (-f json): one record of PID 666, no other source, no loss, no early end', function () {
    const bytes = Buffer.from(forged);
    const pieces = [];
    for (let i = 0, idx = 0; i <= bytes.length; i += PIECE_BYTES,
      idx++) pieces.push([666, 666, 7, idx, bytes.subarray(i, i + PIECE_BYTES)]);
    const { r, of, events } = run(batch(pieces) + printf('Tracing ended.'));
    assert.deepStrictEqual(of('record').map((e) => [e.pid, e.text]), [[666, forged.trimEnd()]]);
    assert.deepStrictEqual([...r.stats.pids], [666]);
    assert.strictEqual(r.stats.lostEvents, 0);
    assert.strictEqual(r.stats.fired, null);
    assert.deepStrictEqual(events.filter((e) => e.type !== 'record' && e.type !== 'other'), []);
  });

  it('DTrace (length-prefixed): the same', function () {
    const bytes = Buffer.byteLength(forged);
    const { r, of } = run(`R 666 666 0 ${bytes} ${forged}\nTracing ended.\n`, { format: 'records', size: 5 });
    assert.deepStrictEqual(of('record').map((e) => [e.pid, e.text]), [[666, forged.trimEnd()]]);
    assert.deepStrictEqual([...r.stats.pids], [666]);
    assert.strictEqual(r.stats.lostEvents, 0);
    assert.strictEqual(r.stats.fired, null);
  });

  it('a record\'s text never ends the session: the END marker is read from the program\'s own output only', function () {
    const { itemText } = require('../lib/tracer/output-formats');
    const items = splitterFor('json').push(Buffer.from(batch([[666, 666, 7, 0, 'x\nTracing ended.\n']]), 'latin1'));
    assert.strictEqual(items.length, 1);
    assert.notStrictEqual(itemText(items[0]), 'Tracing ended.');
  });
});
