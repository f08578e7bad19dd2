'use strict';
// --thread (lib/commands/common-options.js parseThread) found in one
// process: the thread whose event loop a command measures, and the Workers
// it runs, by what they are (lib/threads/identify.js).
const { UserError, EXIT } = require('../errors');
const { ThreadRoster } = require('./identify');
const { threadLabel } = require('./roles');

// "1 \"alpha\" (TID 4250), 2 (TID 4251)": the Workers a message can offer.
function workerList(workers) {
  return workers.map((t) => `${threadLabel(t).replace(/^Worker /, '')} (TID ${t.tid})`).join(', ');
}

/**
 * The thread `want` names in process `pid`: -> { tid, identity, workers }
 * (workers: every Worker identified, by thread id), or a UserError saying
 * which there are. `roster`: a ThreadRoster (tests), else one is made.
 */
function selectThread(pid, want, { roster = null } = {}) {
  const r = roster || new ThreadRoster(pid);
  try {
    r.refresh();
    const all = r.all();
    const workers = all.filter((t) => t.role === 'worker')
      .sort((a, b) => (a.worker.threadId || 0) - (b.worker.threadId || 0));
    const main = all.find((t) => t.tid === pid) || { tid: pid, role: 'main' };
    if (!want || want.main) return { tid: pid, identity: main, workers };
    let found = [];
    if (want.tid !== undefined) found = all.filter((t) => t.tid === want.tid && (t.role === 'main' || t.role === 'worker'));
    else if (want.threadId !== undefined) found = workers.filter((t) => t.worker.threadId === want.threadId);
    else found = workers.filter((t) => t.worker.name === want.name);
    if (found.length === 1) return { tid: found[0].tid, identity: found[0], workers };
    const asked = want.tid !== undefined ? `thread with TID ${want.tid} that runs an event loop (the main thread or a Worker)`
      : want.threadId !== undefined ? `Worker with thread id ${want.threadId}` : `Worker named "${want.name}"`;
    const has = workers.length ? `; its Workers: ${workerList(workers)}` : ': it runs no worker_threads Worker';
    if (found.length > 1) {
      throw new UserError(`PID ${pid} has ${found.length} Workers named "${want.name}": ${workerList(found)}.`,
        { hint: 'Choose one by its thread id (--thread N) or TID (--thread tid:N).' });
    }
    throw new UserError(`PID ${pid} has no ${asked}${has}.`,
      { hint: 'Choose the main thread (--thread main), a Worker by its thread id or name, or tid:TID.', exitCode: EXIT.NOT_FOUND });
  } finally {
    if (!roster) r.close();
  }
}

module.exports = { selectThread, workerList };
