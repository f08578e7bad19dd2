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

const START = Symbol('nodetrace.http.start');
const DONE = Symbol('nodetrace.http.done');

function nowNs() {
  return process.hrtime.bigint();
}

function sinceUs(start) {
  return Number((nowNs() - start) / 1000n);
}

// The probe's callbacks: build the arguments only when the probe fires.
function serverArgs(req, res, error) {
  return [sinceUs(res[START]), error ? 0 : res.statusCode, req.method || '', req.url || '', error || '-'];
}

function clientArgs(req, status, error) {
  const host = (typeof req.getHeader === 'function' && req.getHeader('host')) || req.host || '';
  const url = `${req.protocol || 'http:'}//${host}${req.path || ''}`;
  return [sinceUs(req[START]), status, req.method || '', url, error || '-'];
}

function undiciArgs(req, status, error) {
  return [sinceUs(req[START]), status, req.method || '', `${req.origin || ''}${req.path || ''}`, error || '-'];
}

function errorName(err) {
  return String((err && (err.code || (err.cause && err.cause.code) || err.name)) || 'error');
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

  function onServerClose() {
    const res = this;
    if (res[DONE] || !res[START]) return;
    res[DONE] = true;
    server.fire(serverArgs, res.req, res, res.writableFinished ? '' : 'aborted');
  }

  function clientDone(request, fire) {
    if (!request[START] || request[DONE]) return false;
    request[DONE] = true;
    return fire();
  }

  return {
    'http.server.request.start'({ response }) {
      if (!probeEnabled(server)) return;
      response[START] = nowNs();
      response.once('close', onServerClose);
    },
    'http.server.response.finish'({ request, response }) {
      if (!response[START] || response[DONE]) return;
      response[DONE] = true;
      server.fire(serverArgs, request, response, '');
    },
    'http.client.request.start'({ request }) {
      if (probeEnabled(client)) request[START] = nowNs();
    },
    'http.client.response.finish'({ request, response }) {
      clientDone(request, () => client.fire(clientArgs, request, response.statusCode, ''));
    },
    'http.client.request.error'({ request, error }) {
      clientDone(request, () => client.fire(clientArgs, request, 0, errorName(error)));
    },
    'undici:request:create'({ request }) {
      if (probeEnabled(client)) request[START] = nowNs();
    },
    'undici:request:headers'({ request, response }) {
      clientDone(request, () => client.fire(undiciArgs, request, response.statusCode, ''));
    },
    'undici:request:error'({ request, error }) {
      clientDone(request, () => client.fire(undiciArgs, request, 0, errorName(error)));
    },
  };
}

// nodetrace's provider reads the semaphore directly; dtrace-provider (DTrace
// systems) has no such check, so a request is always timed there.
function probeEnabled(probe) {
  return typeof probe._enabled === 'function' ? probe._enabled() : true;
}

module.exports = { install };
