'use strict';
// Asking a target program what it measured itself: it answers SIGUSR2 with
// one line, "LABEL n n n" (test/targets/profile-hot.js: "split", offcpu-wait.js:
// "waits", profile-kernel.js: "kernel", profile-worker.js: "threads"). Works for a target started by test/support/harness.js or
// test/support/containers.js alike (each has stdout and kill(signal)).

// Sends the target SIGUSR2 and resolves with the numbers of the line it
// answers with ("LABEL n n n"; `fields`: how many numbers).
function askTarget(target, label, { fields = 3 } = {}) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const re = new RegExp(`${label}${' (\\S+)'.repeat(fields)}\\n`);
    const timer = setTimeout(() => reject(new Error(`the target did not answer with "${label}"`)), 10000);
    const onData = (c) => {
      buf += c;
      const m = re.exec(buf);
      if (!m) return;
      clearTimeout(timer);
      target.stdout.off('data', onData);
      resolve(m.slice(1).map(Number));
    };
    target.stdout.on('data', onData);
    target.kill('SIGUSR2');
  });
}

// What profile-hot.js says it spent: { hot, warm, cpu } in ms so far.
async function askSplit(target) {
  const [hot, warm, cpu] = await askTarget(target, 'split');
  return { hot, warm, cpu };
}

// What offcpu-wait.js says it waited: { fifo, atomics, wall } in ms so far.
async function askWaits(target) {
  const [fifo, atomics, wall] = await askTarget(target, 'waits');
  return { fifo, atomics, wall };
}

// What profile-kernel.js says it spent: { call, cpu, system } in ms so far.
async function askKernel(target) {
  const [call, cpu, system] = await askTarget(target, 'kernel');
  return { call, cpu, system };
}

// What profile-worker.js says it spent: { worker, main, cpu } in ms so far
// (workerSpin's CPU, mainSpin's, the process's), and who its Worker is:
// { workerTid, workerThreadId }.
async function askThreads(target) {
  const asked = Promise.all([askTarget(target, 'threads'), waitLine(target, 'worker', 2)]);
  const [[worker, main, cpu], [workerTid, workerThreadId]] = await asked;
  return { worker, main, cpu, workerTid, workerThreadId };
}

// The numbers of the next line "LABEL n..." the target prints (after a SIGUSR2 sent by another ask).
function waitLine(target, label, fields) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const re = new RegExp(`${label}${' (\\S+)'.repeat(fields)}\\n`);
    const timer = setTimeout(() => reject(new Error(`the target did not answer with "${label}"`)), 10000);
    const onData = (c) => {
      buf += c;
      const m = re.exec(buf);
      if (!m) return;
      clearTimeout(timer);
      target.stdout.off('data', onData);
      resolve(m.slice(1).map(Number));
    };
    target.stdout.on('data', onData);
  });
}

module.exports = { askTarget, askSplit, askWaits, askKernel, askThreads };
