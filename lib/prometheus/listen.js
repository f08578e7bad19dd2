'use strict';
// --prometheus [HOST:]PORT: where the metrics endpoint listens. Pure.
// The default host is the loopback address: metrics of a traced process
// are for this host unless the operator names another address (0.0.0.0,
// every address, only when written out).
const { UsageError } = require('../errors');

const DEFAULT_HOST = '127.0.0.1';
// IPv4, a host name, or an IPv6 address in brackets: the host as a user types it, nothing a shell or a URL could take otherwise.
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])$/;

function usage(text) {
  return new UsageError(`--prometheus expects [HOST:]PORT (9464, 127.0.0.1:9464, [::1]:9464; PORT 0: any free port), not ${JSON.stringify(text)}.`);
}

/** '9464' | 'HOST:9464' | '[::1]:9464' -> { host, port } (host without brackets). */
function parseListen(text) {
  const s = String(text);
  const colon = s.lastIndexOf(':');
  const hostPart = colon < 0 ? null : s.slice(0, colon);
  const portPart = colon < 0 ? s : s.slice(colon + 1);
  if (!/^[0-9]{1,5}$/.test(portPart) || Number(portPart) > 65535) throw usage(s);
  if (hostPart !== null && !HOST.test(hostPart)) throw usage(s);
  const host = hostPart === null ? DEFAULT_HOST : hostPart.replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(portPart) };
}

/** host:port as a URL writes it. */
function urlOf({ host, port }) {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/metrics`;
}

module.exports = { parseListen, urlOf, DEFAULT_HOST };
