'use strict';
// Threads by what they are (lib/threads/identify.js), on every Node build of
// the matrix, against what the target says of its own threads: each
// Worker's TID and threadId (worker_threads), the pool's size
// (UV_THREADPOOL_SIZE) and the V8 platform's (--v8-pool-size). Reading
// another process's memory needs root (or its user): no tracer.
const assert = require('assert');
const { startTarget, stopTarget, killStragglers } = require('./support/harness');
const { nodeBuilds, requireBuild } = require('./support/node-builds');
const { ThreadRoster } = require('../lib/threads/identify');
const { threadLabel } = require('../lib/threads/roles');

const POOL = 3;
const V8_POOL = 2;

describe('threads by what they are, read from the process', function () {
  this.timeout(60000);
  before(function () {
    if (process.getuid() !== 0) {
      if (process.env.CI) throw new Error('these tests read another process\'s memory: run them as root');
      this.skip();
    }
  });
  afterEach(killStragglers);

  for (const build of nodeBuilds('all')) {
    it(`${build.label}: main, each Worker by its thread id and name, the pool's ${POOL} threads, the platform's, named after it exited`, async function () {
      requireBuild(this, build);
      const target = await startTarget('threads-mix.js', { node: build.node, args: [`--v8-pool-size=${V8_POOL}`], env: { UV_THREADPOOL_SIZE: String(POOL) } });
      const roster = new ThreadRoster(target.pid);
      try {
        const workers = JSON.parse(/^workers (.*)$/m.exec(target.startOutput)[1]);
        roster.refresh();
        // Named once the process is gone, as a -c command's threads are at
        // its report: what names them was read, or held open, while it ran.
        const gone = new Promise((resolve) => target.once('exit', resolve));
        target.kill('SIGKILL');
        await gone;
        const all = roster.all();
        const summary = all.map((t) => `${t.tid} ${t.comm} ${threadLabel(t)} ${t.entry || ''}`).join('\n');
        const byRole = (role) => all.filter((t) => t.role === role);
        assert.deepStrictEqual(byRole('main').map((t) => t.tid), [target.pid], summary);
        // The first Worker ended before these started: ids 2, 3 and 4.
        assert.deepStrictEqual(workers.map((w) => w.threadId), [2, 3, 4]);
        // (Node 24+ names an unnamed Worker "WorkerThread", and no label shows that.)
        const named = (name) => (name === 'WorkerThread' || !name ? null : name);
        assert.deepStrictEqual(byRole('worker').map((t) => [t.tid, t.worker.threadId, named(t.worker.name), t.how]),
          workers.map((w) => [w.tid, w.threadId, w.name, 'entry']), summary);
        assert.deepStrictEqual(workers.map((w) => threadLabel(roster.identity(w.tid))), ['Worker 2 "alpha"', 'Worker 3', 'Worker 4 "a-worker-name-longer-than-comm"']);
        assert.strictEqual(byRole('libuv-pool').length, POOL, summary);
        // Debian's libnode keeps no symbol for the platform's threads but
        // the delayed-task one: the rest are "other" there, never another role.
        if (build.shared) {
          assert(byRole('v8-platform').length >= 1, summary);
          assert.strictEqual(byRole('v8-platform').length + byRole('other').length, V8_POOL + 2, summary);
        } else {
          assert.strictEqual(byRole('v8-platform').length, V8_POOL + 1, summary);
          assert.strictEqual(byRole('inspector').length, 1, summary);
          assert.deepStrictEqual(byRole('other'), [], summary);
        }
        assert.strictEqual(all.length, 1 + 3 + POOL + V8_POOL + 2, summary);
      } finally {
        roster.close();
        stopTarget(target);
      }
    });
  }
});
