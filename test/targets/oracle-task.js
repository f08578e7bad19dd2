'use strict';
// The task test/targets/oracle-app.js runs in its piscina pool (worker
// threads): pure integer work in one named function, so that a profile of
// the Worker's CPU has one function to hold to the Worker's own --cpu-prof.
// Returns the result, and the CPU the Worker spent in poolCrunch (ms, this
// thread's sum_exec_runtime before and after) and when it ended
// (process.hrtime, the same clock in every thread), for the app to count.
const fs = require('fs');
const { threadId } = require('worker_threads');

function threadCpuMs() {
  return Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
}

function poolCrunch(rounds) {
  let s = rounds;
  for (let i = 0; i < rounds; i++) s = (s * 31 + i) % 1000003;
  return s;
}

module.exports = ({ rounds }) => {
  const cpu = threadCpuMs();
  const s = poolCrunch(rounds);
  return { s, threadId, cpuMs: threadCpuMs() - cpu, endedAt: process.hrtime.bigint() };
};
