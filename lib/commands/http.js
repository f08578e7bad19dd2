'use strict';
// nodetrace http: one line per HTTP request that Node processes served or
// made, with status and latency (nhttpsnoop for today's Node), or latency
// histograms per route. Two sources: processes run with `node -r
// nodetrace/register` fire nodetrace:::http-*-request-done (lib/http/hook.js:
// the hook); any one process, unprepared, is read off its socket system
// calls (d-scripts/http-wire.bt, lib/http/wire.js: the wire). --source auto:
// the hook where the process has it, the wire otherwise.
// This file is the command's options; the run is lib/http/runner.js.
const { listed } = require('./list');
const { traceHttp } = require('../http/runner');
const { targetOptions, checkTarget } = require('../targets/options');
const { durationOption, checkDuration, dryRunOption, jsonOption, backendOption } = require('./common-options');
const { prometheusOption, checkPrometheus } = require('../prometheus/live');

function builder(y) {
  targetOptions(y.usage('$0 http (<target> | -p PID) [options]\n\n'
      + 'One line per completed HTTP request, served (http/https servers, Express, Fastify) or made\n'
      + '(http.request, fetch): time, PID, direction, method, status, latency, URL. <target> is \'*\'\n'
      + '(every process started with the hook, including ones started later), PIDs (4242 or\n'
      + '4242,4343), or text found in their command lines. The processes run with\n'
      + '`node -r nodetrace/register`; untraced, that costs a semaphore read per request.\n'
      + 'Processes without the hook are read off the wire: their socket system calls and their\n'
      + 'OpenSSL (--source): one (-p PID), or up to 8 of one binary by PIDs or a name (a cluster\n'
      + 'or PM2 app: its primary and workers; with the primary among them, workers it forks later too).'), { many: true, container: true });
  return y
    .option('duration', durationOption('Stop after this many seconds (default: Ctrl-C)'))
    .option('slower-than', { type: 'number', describe: 'Only requests that took at least this many ms (filtered in the tracer; on the wire, by nodetrace)' })
    .option('latency', { type: 'boolean', default: false, describe: 'Latency histograms per process, direction, method and route instead of lines (64 processes, 100 routes each; the rest folded and counted)' })
    .option('by', { choices: ['route', 'status'], default: 'route', describe: 'With --latency: one histogram per route or per status' })
    .option('merge', { type: 'boolean', default: false, describe: 'With --latency: one set of histograms for every process traced (default: one per process)' })
    .option('json', jsonOption('One JSON object per request (with --latency: the histograms as JSON)'))
    .option('prometheus', prometheusOption('the latency histograms per process, direction, method and route (or --by status)',
      { scope: 'Every source and tracer; the same bounds as --latency' }))
    .option('source', {
      choices: ['auto', 'hook', 'wire'],
      default: 'auto',
      describe: 'hook: the processes started with nodetrace/register; wire: one process, unprepared, read off its '
        + 'socket system calls and its OpenSSL (HTTP/1.x, HTTPS); auto: the hook where the process has it, else the wire',
    })
    .option('backend', backendOption('Tracer to use (default bpftrace). The hook\'s probes are stapsdt USDT probes, which only bpftrace reads on Linux; '
        + 'dtrace reads one process off the wire (d-scripts/http-wire.d)'))
    .option('dry-run', dryRunOption())
    .check((a) => {
      checkTarget(a, { many: true, extra: ['container'] });
      checkDuration(a);
      // Per process: --merge would fold processes that each keep series of their own.
      checkPrometheus(a, [['merge', '--merge']]);
      const s = a.slowerThan;
      if (s !== undefined && !(Number.isFinite(s) && s >= 0 && s <= 86400000)) throw new Error('--slower-than expects milliseconds, e.g. --slower-than 100.');
      if (a.merge && !a.latency) throw new Error('--merge merges the histograms of --latency; lines name their process anyway.');
      if (a.source === 'wire' && a.pid === undefined && a.target === undefined && a.container === undefined && a.pod === undefined) throw new Error('--source wire reads given processes: give their PIDs (-p PID, 4242,4343) or a name.');
      return true;
    })
    .example('sudo $0 http -p 4242', 'every request of process 4242, as it completes (no hook needed: read off its sockets)')
    .example('sudo $0 http --container web', 'the Node process of container web (by name or ID start), off the wire')
    .example('sudo $0 http --pod web-7d4b9', 'the Node processes of pod web-7d4b9 (by name or UID), found from /proc')
    .example('sudo $0 http my-service', 'processes whose command line contains "my-service" (a cluster\'s primary and workers: off the wire where none has the hook)')
    .example('sudo $0 http 4242,4243', 'two processes (a cluster\'s workers, unprepared: one tracer reads both off the wire)')
    .example("sudo $0 http '*' --slower-than 100", 'requests over 100 ms in every prepared process, also those started later')
    .example('sudo $0 http -p 4242 --latency -d 30', 'latency histograms per route after 30 seconds')
    .example('sudo $0 http -p 4242 --prometheus 9464', 'serve the latency histograms per route at http://127.0.0.1:9464/metrics while tracing')
    .example('$0 http -p 4242 -n', 'show exactly what would run');
}

function handler(args) {
  return traceHttp(args);
}

module.exports = {
  ...listed('http'),
  builder,
  handler,
};
