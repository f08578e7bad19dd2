'use strict';
// A hostile process for test/hostile-usdt.test.js: it fires nodetrace's
// HTTP probes itself (the provider the hook declares, so the same probe
// library), with whatever arguments it likes, no HTTP involved:
//   URLS='["/a\nb", ...]'  the URLs to fire, in turn (default "/x")
//   UNIQUE=1               a new route every time (/r<n>z: a flood of routes)
//   STATUS, LATENCY_US     the status and latency passed (default 200, 1000)
//   RATE                   fires a second; 0: as fast as it can
// Prints "ready PID" once its probes exist. Extra arguments only name it.
const path = require('path');
const usdt = require(path.join(__dirname, '..', '..', 'lib', 'usdt'));
const { HTTP_PROVIDER } = require(path.join(__dirname, '..', '..', 'lib', 'http', 'probes'));

const provider = usdt.createDTraceProvider(HTTP_PROVIDER.name);
for (const p of HTTP_PROVIDER.probes) provider.addProbe(...p);
provider.enable();
const probe = provider['http-server-request-done'];

const urls = JSON.parse(process.env.URLS || '["/x"]');
const unique = process.env.UNIQUE === '1';
const status = Number(process.env.STATUS || 200);
const us = Number(process.env.LATENCY_US || 1000);
const rate = Number(process.env.RATE || 0);
let n = 0;

function fire() {
  const url = unique ? `/r${n}z` : urls[n % urls.length];
  n++;
  probe.fire(() => [us, status, 'GET', url, '-']);
}

if (rate > 0) {
  setInterval(() => { for (let i = 0; i < Math.max(1, Math.round(rate / 100)); i++) fire(); }, 10);
} else {
  const burst = () => { for (let i = 0; i < 2000; i++) fire(); setImmediate(burst); };
  burst();
}
process.stdout.write(`ready ${process.pid}\n`);
