'use strict';
// A -c command that writes to its stderr while traced: a line, then fs.stat
// work on libuv's pool (counted by the target), then a last line with the
// count, so a test can tell that both lines reached the user, in order;
// and one line on its stdout ("talker: on stdout").
const fs = require('fs');

const STATS = 20;
setTimeout(() => {
  process.stdout.write('talker: on stdout\n');
  process.stderr.write('talker: first line on stderr\n');
  let done = 0;
  for (let i = 0; i < STATS; i++) {
    fs.stat(__filename, () => {
      if (++done === STATS) process.stderr.write(`talker: ${done} stats done\n`);
    });
  }
}, 300);
