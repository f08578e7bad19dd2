'use strict';
// A tiny "service" that logs like a production one: at level info, with
// debug records that bunyan drops... unless someone snoops them.
//
//   node -r nodetrace/register examples/bunyan-service.js     (in the repo: -r ./register.js)
//   sudo nodetrace snoop '*'            # in another shell: the debug records appear
//   sudo nodetrace snoop '*' -l warn    # only the slow requests
//
// Without `-r nodetrace/register`, bunyan's probes are no-ops on Linux (the
// dtrace-provider package has no Linux backend) and snoop says so.
const bunyan = require('bunyan');

const log = bunyan.createLogger({ name: 'orders', level: 'info' });
let id = 0;

function handle() {
  const req = { id: ++id, route: '/orders/' + (1000 + (id % 7)) };
  const started = Date.now();
  log.debug({ req_id: req.id, route: req.route }, 'cache miss, asking the database');
  const ms = (id % 10 === 0) ? 250 : 5 + (id % 3);
  setTimeout(() => {
    if (ms > 100) log.warn({ req_id: req.id, ms }, 'slow request');
    else log.debug({ req_id: req.id, ms: Date.now() - started }, 'request done');
  }, ms);
}

log.info('listening (pid %d); debug records are dropped at level info', process.pid);
setInterval(handle, 500);
