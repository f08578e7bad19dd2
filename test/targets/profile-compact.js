'use strict';
/* global gc -- given by --expose-gc */
// A main thread whose hot function is a new one in each phase, for the V8
// frame naming of `profile` under compaction (test/profile.test.js).
// Started with --expose-gc --stress-compaction, the only target started
// with flags: to make V8 move SharedFunctionInfos on cue (every other test
// target has none; an unflagged process compacts when V8 decides, which a
// test cannot wait for). Each phase drops the previous phase's function and
// collects twice (gc({ type: 'major', execution: 'sync' }): with
// --stress-compaction every other page is evacuated, so the SFIs of the
// functions still on the stack move, and the previous phase's code pages
// are freed), then compiles the same source with another name (hotA,
// hotB, ...) and file name (phase-A.js, ...). runPhase calls it until
// PHASE_MS of CPU (process.cpuUsage) are spent, then the thread idles
// IDLE_MS (1,500 by default): the profile program prints what it captured
// every second and nodetrace names it then, so every capture is named
// before the next compaction (docs/v8-frames.md says what one within that
// second does). Prints "ready PID"; SIGUSR2 starts the phases; at the end
// it prints "phases A:MS B:MS ...", the CPU time each phase's function ran.
const vm = require('vm');

const PHASES = Number(process.env.PHASES || 8);
const PHASE_MS = Number(process.env.PHASE_MS || 400);
const IDLE_MS = Number(process.env.IDLE_MS || 1500);
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
// Each phase's function is too big for TurboFan to inline into runPhase
// (50 statements: more bytecode than --max-inlined-bytecode-size, 460), so
// its samples are its own on every build (Node 26 inlined a small one).
const BODY = Array.from({ length: 50 }, (_, i) => `x = (x * 31 + k + ${i}) % 1000003;`).join('\n      ');

function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function runPhase(fn) {
  const start = cpuMs();
  let x = 1;
  while (cpuMs() < start + PHASE_MS) x = fn(x);
  globalThis.sink = x;
  return cpuMs() - start;
}

let hot = null;
const spent = [];

function phase(i) {
  hot = null;
  gc({ type: 'major', execution: 'sync' });
  gc({ type: 'major', execution: 'sync' });
  const letter = LETTERS[i];
  hot = vm.runInThisContext(`(function hot${letter}(x) {
    for (let k = 0; k < 4000; k++) {
      ${BODY}
    }
    return x;
  })`, { filename: `phase-${letter}.js` });
  spent.push(`${letter}:${runPhase(hot).toFixed(1)}`);
  if (i + 1 < PHASES) setTimeout(phase, IDLE_MS, i + 1);
  else setTimeout(() => console.log(`phases ${spent.join(' ')}`), IDLE_MS);
}

process.once('SIGUSR2', () => setImmediate(phase, 0));
setInterval(() => {}, 1 << 30);
console.log('ready ' + process.pid);
