'use strict';
// For the V8 frame namer (lib/v8/): a main thread that ends up spinning
// forever in hotLoop, reached through one of each kind of JavaScript
// function, none started with any flag:
//   main -> new Spinner (class constructor) -> Worker#run (class method)
//   -> arrow (arrow function) -> Array.prototype.map -> an anonymous function
//   -> handlers.onTick (anonymous, named by V8's inference) -> 計算 (a name
//   of two-byte characters) -> manyLocals (80 captured variables) -> outer
//   -> hotLoop (spins)
// Before spinning it prints, as its own truth, where V8 says each function
// starts (the inspector's [[FunctionLocation]], 0-based line and column) as
// "at NAME LINE COLUMN", then "spinning PID" (written synchronously, from
// inside hotLoop, which never returns).
const inspector = require('inspector');
const fs = require('fs');

function hotLoop(n) {
  fs.writeSync(1, `spinning ${process.pid}\n`);
  let x = n;
  for (let i = 0; ; i++) {
    x = (x * 31 + i) % 1000003;
    if (x === -1) break;   // never: keeps the loop from being folded away
  }
  return x;
}

function outer(n) {
  return hotLoop(n + 1);
}

// 80 variables a closure captures: V8 keeps their names in a hash table
// (75 or more), which moves where the function's own name is.
function manyLocals(n) {
  let v0 = n + 0, v1 = n + 1, v2 = n + 2, v3 = n + 3, v4 = n + 4, v5 = n + 5, v6 = n + 6, v7 = n + 7,
    v8 = n + 8, v9 = n + 9, v10 = n + 10, v11 = n + 11, v12 = n + 12, v13 = n + 13, v14 = n + 14,
    v15 = n + 15, v16 = n + 16, v17 = n + 17, v18 = n + 18, v19 = n + 19, v20 = n + 20, v21 = n + 21,
    v22 = n + 22, v23 = n + 23, v24 = n + 24, v25 = n + 25, v26 = n + 26, v27 = n + 27, v28 = n + 28,
    v29 = n + 29, v30 = n + 30, v31 = n + 31, v32 = n + 32, v33 = n + 33, v34 = n + 34, v35 = n + 35,
    v36 = n + 36, v37 = n + 37, v38 = n + 38, v39 = n + 39, v40 = n + 40, v41 = n + 41, v42 = n + 42,
    v43 = n + 43, v44 = n + 44, v45 = n + 45, v46 = n + 46, v47 = n + 47, v48 = n + 48, v49 = n + 49,
    v50 = n + 50, v51 = n + 51, v52 = n + 52, v53 = n + 53, v54 = n + 54, v55 = n + 55, v56 = n + 56,
    v57 = n + 57, v58 = n + 58, v59 = n + 59, v60 = n + 60, v61 = n + 61, v62 = n + 62, v63 = n + 63,
    v64 = n + 64, v65 = n + 65, v66 = n + 66, v67 = n + 67, v68 = n + 68, v69 = n + 69, v70 = n + 70,
    v71 = n + 71, v72 = n + 72, v73 = n + 73, v74 = n + 74, v75 = n + 75, v76 = n + 76, v77 = n + 77,
    v78 = n + 78, v79 = n + 79;
  const sum = () => v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7 + v8 + v9 + v10 + v11 + v12 + v13 + v14 + v15 +
    v16 + v17 + v18 + v19 + v20 + v21 + v22 + v23 + v24 + v25 + v26 + v27 + v28 + v29 + v30 + v31 + v32 +
    v33 + v34 + v35 + v36 + v37 + v38 + v39 + v40 + v41 + v42 + v43 + v44 + v45 + v46 + v47 + v48 + v49 +
    v50 + v51 + v52 + v53 + v54 + v55 + v56 + v57 + v58 + v59 + v60 + v61 + v62 + v63 + v64 + v65 + v66 +
    v67 + v68 + v69 + v70 + v71 + v72 + v73 + v74 + v75 + v76 + v77 + v78 + v79;
  return outer(sum() - n * 80 - 3160 + n);
}

function 計算(n) {
  return manyLocals(n + 1);
}

const handlers = {};
handlers.onTick = function (n) {
  return 計算(n + 1);
};

const arrow = (n) => [n].map(function (x) { return handlers.onTick(x + 1); })[0];

class Worker {
  run(n) {
    return arrow(n + 1);
  }
}

class Spinner {
  constructor(n) {
    this.result = new Worker().run(n + 1);
  }
}

function main() {
  return new Spinner(1).result;
}

// Where V8 places each function's start (the position the namer gives too),
// asked of V8 itself: [{ label, line, column }], 0-based.
function functionLocations(labelled) {
  const session = new inspector.Session();
  session.connect();
  const out = [];
  try {
    globalThis.__v8FramesProbe = labelled.map(([, fn]) => fn);
    let list = [];
    session.post('Runtime.evaluate', { expression: 'globalThis.__v8FramesProbe' }, (err, r) => {
      if (err) return;
      session.post('Runtime.getProperties', { objectId: r.result.objectId, ownProperties: true }, (err2, props) => { if (!err2) list = props.result; });
    });
    for (const p of list) {
      if (!/^[0-9]+$/.test(p.name)) continue;
      session.post('Runtime.getProperties', { objectId: p.value.objectId, ownProperties: true }, (err, r) => {
        const loc = !err && (r.internalProperties || []).find((q) => q.name === '[[FunctionLocation]]');
        if (loc) out.push({ label: labelled[Number(p.name)][0], line: loc.value.value.lineNumber,
          column: loc.value.value.columnNumber });
      });
    }
  } finally {
    delete globalThis.__v8FramesProbe;
    session.disconnect();
  }
  return out;
}

const located = functionLocations([
  ['hotLoop', hotLoop], ['outer', outer], ['manyLocals', manyLocals], ['計算', 計算], ['handlers.onTick', handlers.onTick],
  ['arrow', arrow], ['Worker.run', Worker.prototype.run], ['Spinner', Spinner], ['main', main],
]);
for (const { label, line, column } of located) console.log(`at ${label} ${line} ${column}`);
// With V8_FRAMES_DEPTH=N, main is called N frames deeper (a deep stack,
// for bench/v8-frame-sample.js).
function deeper(k) {
  return k > 0 ? deeper(k - 1) + 0 : main();
}
setImmediate(() => deeper(Number(process.env.V8_FRAMES_DEPTH || 0)));
