'use strict';
// A profile long enough for a share known to a few points: `nodetrace
// profile -p PID -F 299 --json --top 50` for 5 s, then 15, then 40, until
// it holds `minSamples` (a machine busy with other work runs the target
// less), the target asked what it measured itself around each run
// (test/support/ask-target.js).
const assert = require('assert');
const { nodetrace } = require('./harness');

/**
 * @param {object} target a target with pid, stdout and kill() (harness.js or containers.js)
 * @param {function(object): Promise<object>} ask what the target measured so far (askSplit...)
 * @param {object} o { minSamples, args: more options for nodetrace, slackS: the run's time bound beyond -d }
 * @returns {Promise<{json: object, before: object, after: object}>} the last run's report, the answers around it
 */
async function profileUntilSamples(target, ask, { minSamples, args = [], slackS = 120 }) {
  let last;
  for (const seconds of [5, 15, 40]) {
    const before = await ask(target);
    const r = await nodetrace(['profile', '-p', String(target.pid), '-F', '299', '-d', String(seconds), '--json', '--top', '50', ...args],
      { timeoutMs: (seconds + slackS) * 1000 });
    const after = await ask(target);
    assert.strictEqual(r.code, 0, r.stderr);
    last = { json: JSON.parse(r.stdout), before, after };
    if (last.json.samples >= minSamples) break;
  }
  return last;
}

module.exports = { profileUntilSamples };
