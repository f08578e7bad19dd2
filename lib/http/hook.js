'use strict';
// Loaded by `node -r nodetrace/register` (and `--import`): turns each
// completed HTTP request of this process into a USDT probe firing
// (lib/http/probes.js), from Node's diagnostics_channel messages:
//   server: http.server.request.start -> http.server.response.finish, or the
//           response's 'close' without a finish (the client went away)
//   client: http.client.request.start -> http.client.response.finish or
//           http.client.request.error (http.request, https.request)
//   fetch:  undici:request:create -> undici:request:headers or
//           undici:request:error
// Untraced, a request costs each subscriber one read of the probe's
// semaphore and nothing more: no clock read, no property set, no closure.
// A request that started before a tracer attached is not reported.
const dc = require('diagnostics_channel');
const { HTTP_PROVIDER } = require('./probes');

// When the request started (process.hrtime.bigint()), set only while a
// tracer is attached; 0n once the request is reported. One property, set
// once per request: each further one is another hidden-class change on
// Node's own request and response objects.
const START = Symbol('nodetrace.http.start');

function nowNs() {
  return process.hrtime.bigint();
}

function sinceUs(start) {
  return Number((nowNs() - start) / 1000n);
}

function errorName(err) {
  return String((err && (err.code || (err.cause && err.cause.code) || err.name)) || 'error');
}

function clientURL(req) {
  const host = (typeof req.getHeader === 'function' && req.getHeader('host')) || req.host || '';
  return `${req.protocol || 'http:'}//${host}${req.path || ''}`;
}

function undiciURL(req) {
  return `${req.origin || ''}${req.path || ''}`;
}

const CHANNELS = [
  'http.server.request.start', 'http.server.response.finish',
  'http.client.request.start', 'http.client.response.finish', 'http.client.request.error',
  'undici:request:create', 'undici:request:headers', 'undici:request:error',
];

/**
 * Makes the provider (its probe library is then mapped, so `nodetrace http
 * -p PID` finds an idle server at once) and subscribes to the channels.
 */
function install(usdt) {
  const handlers = makeHandlers(usdt);
  const subscribed = CHANNELS.map((name) => {
    dc.subscribe(name, handlers[name]);
    return [name, handlers[name]];
  });
  return {
    uninstall() { for (const [name, fn] of subscribed) dc.unsubscribe(name, fn); },
  };
}

function makeHandlers(usdt) {
  const provider = usdt.createDTraceProvider(HTTP_PROVIDER.name);
  const probes = {};
  for (const [name, ...types] of HTTP_PROVIDER.probes) probes[name] = provider.addProbe(name, ...types);
  provider.enable();
  const server = probes['http-server-request-done'];
  const client = probes['http-client-request-done'];
  const fireServer = firer(server);
  const fireClient = firer(client);

  // The response's end, whichever comes first: 'finish' (the channel) or
  // 'close' (the client went away before the response was finished).
  function serverDone(res, req, error) {
    const start = res[START];
    if (!start) return;   // not timed, or reported already
    res[START] = 0n;
    fireServer([sinceUs(start), error ? 0 : res.statusCode, req.method || '', req.url || '', error || '-']);
  }

  // A shared function, not once(): no wrapper to allocate per request, and
  // serverDone reports a request once anyway.
  function onServerClose() {
    serverDone(this, this.req, this.writableFinished ? '' : 'aborted');
  }

  function clientDone(req, url, status, error) {
    const start = req[START];
    if (!start) return;
    req[START] = 0n;
    fireClient([sinceUs(start), status, req.method || '', url, error || '-']);
  }

  return {
    'http.server.request.start'({ response }) {
      if (!probeEnabled(server)) return;
      response[START] = nowNs();
      response.on('close', onServerClose);
    },
    'http.server.response.finish'({ request, response }) {
      serverDone(response, request, '');
    },
    'http.client.request.start'({ request }) {
      if (probeEnabled(client)) request[START] = nowNs();
    },
    'http.client.response.finish'({ request, response }) {
      if (request[START]) clientDone(request, clientURL(request), response.statusCode, '');
    },
    'http.client.request.error'({ request, error }) {
      if (request[START]) clientDone(request, clientURL(request), 0, errorName(error));
    },
    'undici:request:create'({ request }) {
      if (probeEnabled(client)) request[START] = nowNs();
    },
    'undici:request:headers'({ request, response }) {
      if (request[START]) clientDone(request, undiciURL(request), response.statusCode, '');
    },
    'undici:request:error'({ request, error }) {
      if (request[START]) clientDone(request, undiciURL(request), 0, errorName(error));
    },
  };
}

// Fires `probe` with an array of values: straight into nodetrace's provider
// (lib/usdt/provider.js), skipping the callback; through one on
// dtrace-provider (DTrace systems). Checks again that a tracer is attached:
// it may have gone since the request started.
function firer(probe) {
  if (typeof probe._fireValues === 'function') {
    return (values) => { if (probe._enabled()) probe._fireValues(values); };
  }
  return (values) => probe.fire(() => values);
}

// nodetrace's provider reads the semaphore directly; dtrace-provider (DTrace
// systems) has no such check, so a request is always timed there.
function probeEnabled(probe) {
  return typeof probe._enabled === 'function' ? probe._enabled() : true;
}

module.exports = { install };
