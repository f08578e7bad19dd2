'use strict';
// The unprepared HTTP(S) server of test/targets/http-wire-server.js and its
// clients, for the wire's tests on bpftrace (test/http-wire.test.js) and on
// DTrace (test/dtrace-linux.test.js). The servers started are in `targets`:
// each test ends them.
const path = require('path');
const readline = require('readline');
const { spawn, execFile } = require('child_process');
const { ROOT } = require('./harness');

const targets = new Set();

// A self-signed certificate for the HTTPS server, made by openssl in `dir`.
async function certificate(dir) {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1']);
  return [key, cert];
}

function startServer(args = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'test', 'targets', 'http-wire-server.js'), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    targets.add(child);
    const results = [];
    let clientDone;
    const finished = new Promise((r) => { clientDone = r; });
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /^ready (\d+) (\d+)$/.exec(line);
      if (m) resolve({ child, port: Number(m[2]), results, finished });
      else if (line === 'client done') clientDone();
      else if (line.startsWith('{')) results.push(JSON.parse(line));
    });
    child.on('exit', (code) => reject(new Error(`http-wire-server exited (${code})`)));
    setTimeout(() => reject(new Error('http-wire-server did not start')), 30000);
  });
}

function run(file, args) {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: 30000 }, (err, stdout, stderr) => (err ? reject(new Error(`${file}: ${err.message} ${stderr}`)) : resolve(stdout)));
  });
}

// curl over one keep-alive connection: per URL, its status and time to the response's first byte.
async function curl(port, paths, scheme = 'http') {
  const args = ['-s', '-k'];
  for (const p of paths) args.push('-o', '/dev/null', '-w', '%{http_code} %{time_starttransfer}\\n', `${scheme}://127.0.0.1:${port}${p}`);
  const out = await run('curl', args);
  return out.trim().split('\n').map((l, i) => {
    const [status, s] = l.split(' ');
    return { via: 'curl', method: 'GET', path: paths[i], status: Number(status), ms: Number(s) * 1000 };
  });
}

module.exports = { targets, certificate, startServer, run, curl };
