// For the V8 frame namer (lib/v8/): an ES module whose top-level code calls
// moduleOuter -> moduleHot, which spins forever (no flag given to node).
// Prints, as test/targets/v8-frames.js does, where V8 says each function
// starts ("at NAME LINE COLUMN", 0-based, from the inspector), then
// "spinning PID" from inside moduleHot.
import { writeSync } from 'node:fs';
import inspector from 'node:inspector';

function moduleHot(n) {
  writeSync(1, `spinning ${process.pid}\n`);
  let x = n;
  for (let i = 0; ; i++) {
    x = (x * 17 + i) % 999983;
    if (x === -1) break;   // never
  }
  return x;
}

export function moduleOuter(n) {
  return moduleHot(n + 1);
}

function functionLocation(fn) {
  const session = new inspector.Session();
  session.connect();
  let found = null;
  try {
    globalThis.__v8FramesProbe = fn;
    session.post('Runtime.evaluate', { expression: 'globalThis.__v8FramesProbe' }, (err, r) => {
      if (err) return;
      session.post('Runtime.getProperties', { objectId: r.result.objectId, ownProperties: true }, (err2, props) => {
        const loc = !err2 && (props.internalProperties || []).find((q) => q.name === '[[FunctionLocation]]');
        if (loc) found = loc.value.value;
      });
    });
  } finally {
    delete globalThis.__v8FramesProbe;
    session.disconnect();
  }
  return found;
}

for (const [label, fn] of [['moduleHot', moduleHot], ['moduleOuter', moduleOuter]]) {
  const loc = functionLocation(fn);
  if (loc) console.log(`at ${label} ${loc.lineNumber} ${loc.columnNumber}`);
}
moduleOuter(1);
