'use strict';
// For test/session.test.js: a tracer that attaches, then exits 0 on its own
// without running its END clause (no END marker), as a crashed program might.
process.stdout.write('Attaching 1 probe...\nHit Ctrl-C to end.\n');
setTimeout(() => process.exit(0), 200);
