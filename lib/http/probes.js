'use strict';
// The USDT probes `node -r nodetrace/register` adds for HTTP, declared once
// for the hook that fires them (lib/http/hook.js) and the command that
// traces them (lib/http/runner.js). Every process declares exactly this,
// so all of a user's processes share one probe library (docs/usdt.md), and
// one tracer attached by its path sees them all, even ones started later.
//
//   nodetrace:::http-server-request-done   a request this process served
//   nodetrace:::http-client-request-done   a request it made (http.request, fetch)
//     arg0  int     latency in microseconds (server: request received ->
//                   response finished or connection closed; client: request
//                   created -> response headers, or the error)
//     arg1  int     status code; 0 when no response (arg4 says why)
//     arg2  char *  method
//     arg3  char *  server: the path and query as received; client: the URL
//     arg4  char *  "-" or what went wrong (ECONNRESET, aborted, ...)
const HTTP_PROVIDER = Object.freeze({
  name: 'nodetrace',
  module: undefined,
  probes: Object.freeze([
    Object.freeze(['http-client-request-done', 'int', 'int', 'char *', 'char *', 'char *']),
    Object.freeze(['http-server-request-done', 'int', 'int', 'char *', 'char *', 'char *']),
  ]),
});

module.exports = { HTTP_PROVIDER };
