'use strict';
// A CPU-bound Node workload for bench/profile-overhead.js: a loop of
// ordinary JavaScript work (JSON, strings, a regular expression, objects,
// arithmetic), counting rounds. On SIGUSR2 it prints "count ROUNDS NS CPU_US":
// the rounds done, process.hrtime.bigint() and the process's CPU time.
// With CHURN=1, each round also compiles a new function (new Function), the
// case in which --perf-basic-prof writes to its map all the time.
// With PINGPONG=N, each batch of 2,000 rounds also makes N round trips to a
// worker thread through two FIFOs, blocking the main thread in a
// synchronous read each time: the case that `profile --off-cpu` pays for
// (two stack walks each time the thread blocks).
// With STEADY=1, each round is arithmetic only, 20 calls deep: no allocation,
// so no garbage collection, whose pauses make the ordinary rounds vary by
// 10-30% from one second to the next and hide a 1% cost; the depth makes each
// sample walk a stack as deep as a real one.
const STEADY = process.env.STEADY === '1';
const CHURN = process.env.CHURN === '1';
const PINGPONG = Number(process.env.PINGPONG || 0);
let rounds = 0;
// eslint-disable-next-line no-unused-vars -- written so that V8 cannot drop the work as dead code
let sink = 0;
const doc = { id: 1, name: 'widget', tags: ['a', 'b', 'c'], nested: { x: 1.5, y: [1, 2, 3] } };

function spin(i) {
  let h = i;
  for (let k = 0; k < 2000; k++) h = (h * 31 + k) | 0;
  return h;
}
function deep(depth, i) { return depth === 0 ? spin(i) : deep(depth - 1, i) ^ depth; }

function oneRound(i) {
  if (STEADY) return deep(20, i);
  const s = JSON.stringify({ ...doc, id: i });
  const o = JSON.parse(s);
  let h = 0;
  for (let k = 0; k < s.length; k++) h = (h * 31 + s.charCodeAt(k)) | 0;
  if (/"name":"(\w+)"/.test(s)) h ^= o.nested.y.length;
  if (CHURN) h ^= new Function('x', `return x + ${i % 100000};`)(1);
  return h;
}

let pingpong = () => {};
if (PINGPONG) {
  const fs = require('fs');
  const os = require('os');
  const path = require('path');
  const { execFileSync } = require('child_process');
  const { Worker } = require('worker_threads');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodetrace-bench-'));
  const [ping, pong] = ['ping', 'pong'].map((n) => path.join(dir, n));
  execFileSync('mkfifo', [ping, pong]);
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  new Worker(`
    const fs = require('fs');
    const i = fs.openSync(${JSON.stringify(ping)}, 'r'), o = fs.openSync(${JSON.stringify(pong)}, 'w'), b = Buffer.alloc(1);
    for (;;) { fs.readSync(i, b, 0, 1, null); fs.writeSync(o, b); }
  `, { eval: true }).unref();
  const out = fs.openSync(ping, 'w');
  const back = fs.openSync(pong, 'r');
  const b = Buffer.from('x');
  pingpong = () => {
    for (let n = 0; n < PINGPONG; n++) { fs.writeSync(out, b); fs.readSync(back, b, 0, 1, null); }
  };
}

function batch() {
  for (let n = 0; n < 2000; n++) sink ^= oneRound(rounds++);
  pingpong();
  setImmediate(batch);
}

process.on('SIGUSR2', () => {
  const cpu = process.cpuUsage();
  console.log(`count ${rounds} ${process.hrtime.bigint()} ${cpu.user + cpu.system}`);
});
console.log('ready ' + process.pid);
batch();
