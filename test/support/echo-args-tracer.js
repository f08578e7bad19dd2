'use strict';
// For test/session.test.js: a tracer that reports what it was given (its
// program file's text and mode, where a link points, its arguments) as one
// JSON line, then ends as bpftrace does on SIGTERM.
const fs = require('fs');
const path = require('path');
const [program, glob] = process.argv.slice(2);
const link = path.join(path.dirname(glob), '0.so');
process.stdout.write('Hit Ctrl-C to end.\n' + JSON.stringify({
  args: [program, glob],
  program: fs.readFileSync(program, 'utf8'),
  mode: fs.statSync(program).mode & 0o777,
  link: fs.readlinkSync(link),
}) + '\n');
process.on('SIGTERM', () => {
  process.stdout.write('Tracing ended.\n');
  process.exit(0);
});
setInterval(() => {}, 1000);
