'use strict';
// A process for test/hostile-usdt.test.js that fires bunyan's probes
// itself (bunyan's provider, so bunyan's probe library), no bunyan
// involved: FLOOD=1 fires log-info as fast as it can; otherwise it logs
// NAME's records on stdin's "go N" (N records, then "done N"), the truth a
// snoop is held to. Prints "ready PID" once its probes exist.
const path = require('path');
const usdt = require(path.join(__dirname, '..', '..', 'lib', 'usdt'));

const provider = usdt.createDTraceProvider(usdt.BUNYAN_PROVIDER.name);
for (const p of usdt.BUNYAN_PROVIDER.probes) provider.addProbe(...p);
provider.enable();
const info = provider['log-info'];
const name = process.env.NAME || 'prober';

function record(i) {
  return JSON.stringify({ name, hostname: 'h', pid: process.pid, level: 30, seq: i, msg: `record ${i}`, time: new Date().toISOString(), v: 0 }) + '\n';
}

if (process.env.FLOOD === '1') {
  let i = 0;
  const burst = () => { for (let k = 0; k < 2000; k++) { const n = i++; info.fire(() =>
    [record(n)]); } setImmediate(burst); };
  burst();
} else {
  let input = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', async (c) => {
    input += c;
    let j;
    while ((j = input.indexOf('\n')) >= 0) {
      const m = /^go (\d+)$/.exec(input.slice(0, j));
      input = input.slice(j + 1);
      if (!m) continue;
      const n = Number(m[1]);
      // 1,000 a second, as a busy service logs.
      for (let k = 0; k < n; k++) {
        info.fire(() => [record(k)]);
        if (k % 10 === 9) await new Promise((r) => setTimeout(r, 10));
      }
      process.stdout.write(`done ${n}\n`);
    }
  });
}
process.stdout.write(`ready ${process.pid}\n`);
