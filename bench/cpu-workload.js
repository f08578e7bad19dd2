'use strict';
// A CPU-bound Node workload for bench/profile-overhead.js: a loop of
// ordinary JavaScript work (JSON, strings, a regular expression, objects,
// arithmetic), counting rounds. On SIGUSR2 it prints "count ROUNDS NS CPU_US":
// the rounds done, process.hrtime.bigint() and the process's CPU time.
// With CHURN=1, each round also compiles a new function (new Function), the
// case in which --perf-basic-prof writes to its map all the time.
const CHURN = process.env.CHURN === '1';
let rounds = 0;
let sink = 0;
const doc = { id: 1, name: 'widget', tags: ['a', 'b', 'c'], nested: { x: 1.5, y: [1, 2, 3] } };

function oneRound(i) {
  const s = JSON.stringify({ ...doc, id: i });
  const o = JSON.parse(s);
  let h = 0;
  for (let k = 0; k < s.length; k++) h = (h * 31 + s.charCodeAt(k)) | 0;
  if (/"name":"(\w+)"/.test(s)) h ^= o.nested.y.length;
  if (CHURN) h ^= new Function('x', `return x + ${i % 100000};`)(1);
  return h;
}

function batch() {
  for (let n = 0; n < 2000; n++) sink ^= oneRound(rounds++);
  setImmediate(batch);
}

process.on('SIGUSR2', () => {
  const cpu = process.cpuUsage();
  console.log(`count ${rounds} ${process.hrtime.bigint()} ${cpu.user + cpu.system}`);
});
console.log('ready ' + process.pid);
batch();
