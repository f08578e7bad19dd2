'use strict';
// Threads of every kind, each saying who it is: a first Worker that ends
// at once (the thread ids after it are no longer in the order of the
// threads that live), then three that stay (one named "alpha", one
// unnamed, one with a name longer than a thread's comm holds), libuv's
// pool put to work (fs.stat), and V8's platform workers. Each Worker
// reports its TID (/proc/thread-self is /proc/PID/task/TID) and its
// threadId; the main thread prints them as one line, "workers
// [{tid, threadId, name}]" (JSON), then "ready PID".
// Run it with UV_THREADPOOL_SIZE and --v8-pool-size set: the test counts
// the pool's and the platform's threads against them.
const fs = require('fs');
const { Worker, isMainThread, parentPort, threadId } = require('worker_threads');

const tid = () => Number(fs.readlinkSync('/proc/thread-self').split('/').pop());

if (isMainThread) {
  const first = new Worker('process.exit(0)', { eval: true });
  first.on('exit', () => {
    const specs = [{ name: 'alpha' }, {}, { name: 'a-worker-name-longer-than-comm' }];
    const seen = [];
    for (const o of specs) {
      const w = new Worker(__filename, o);
      w.on('message', (m) => {
        seen.push({ ...m, name: o.name || null });
        if (seen.length < specs.length) return;
        fs.stat(__filename, () => {
          console.log('workers ' + JSON.stringify(seen.sort((a, b) => a.threadId - b.threadId)));
          console.log('ready ' + process.pid);
        });
      });
    }
  });
  setInterval(() => {}, 1000);
} else {
  parentPort.postMessage({ tid: tid(), threadId });
  setInterval(() => {}, 1000);
}
