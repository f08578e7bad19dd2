'use strict';
// The article's sqlite-demo.js: open an in-memory database, create a table,
// insert ten rows through a prepared statement, select them, close, repeat.
// Every step is an asynchronous operation that node-sqlite3 queues on libuv's
// thread pool, so `nodetrace latency` sees Work_BeginOpen, Work_BeginExec,
// Work_BeginClose, Work_BeginPrepare and Work_BeginRun.
//
// Optional: SECONDS=N exits after N seconds; REPORT=1 prints loops/second on
// exit; SIGUSR2 prints "loops <count> <monotonic ns>" (benchmarks sample it).
const sqlite3 = require('sqlite3');

let loops = 0;
const started = process.hrtime.bigint();

function go() {
  const db = new sqlite3.Database(':memory:');
  db.serialize(function () {
    db.run('CREATE TABLE lorem (info TEXT)');
    const stmt = db.prepare('INSERT INTO lorem VALUES (?)');
    for (let i = 0; i < 10; i++) stmt.run('Ipsum ' + i);
    stmt.finalize();
    db.exec('SELECT rowid AS id, info FROM lorem', function () {
      db.close(function () {
        loops++;
        go();
      });
    });
  });
}

function report() {
  const secs = Number(process.hrtime.bigint() - started) / 1e9;
  if (process.env.REPORT) console.log(JSON.stringify({ loops, seconds: secs, loopsPerSecond: loops / secs }));
  process.exit(0);
}

if (process.env.SECONDS) setTimeout(report, Number(process.env.SECONDS) * 1000);
process.on('SIGTERM', report);
process.on('SIGUSR2', () => console.log(`loops ${loops} ${process.hrtime.bigint()}`));
console.log('ready ' + process.pid);
go();
