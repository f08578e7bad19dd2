'use strict';
// A cluster app (node's cluster module): the primary forks WORKERS (2)
// workers, which share one HTTP server on a port the system chose. Once
// every worker listens, the primary prints "cluster PORT PID:ID PID:ID..."
// (each worker's PID and cluster.worker.id, as the primary knows them),
// then "ready PID".
const cluster = require('cluster');
const http = require('http');

const WORKERS = Number(process.env.WORKERS || 2);

if (cluster.isPrimary) {
  const listening = new Map();
  for (let i = 0; i < WORKERS; i++) cluster.fork();
  cluster.on('listening', (worker, address) => {
    listening.set(worker.id, { pid: worker.process.pid, port: address.port });
    if (listening.size < WORKERS) return;
    const all = [...listening].sort((a, b) => a[0] - b[0]);
    console.log(`cluster ${all[0][1].port} ${all.map(([id, w]) => `${w.pid}:${id}`).join(' ')}`);
    console.log(`ready ${process.pid}`);
  });
} else {
  http.createServer((req, res) => res.end('ok\n')).listen(0);
}
