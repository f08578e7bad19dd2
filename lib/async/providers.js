'use strict';
// Node's AsyncWrap provider numbers -> names, per Node major, as each build
// lists them in process.binding('async_wrap').Providers. Read here from a
// table, never by running the target's binary (nodetrace runs as root; the
// binary is the target user's). test/async-providers.test.js checks each
// table against the trusted builds of the test matrix, by running those.
// A number a table does not have, or a Node major without a table, is shown
// as "provider N": never dropped, never guessed. Pure.

const COMMON_HEAD = [
  'NONE', 'DIRHANDLE', 'DNSCHANNEL', 'ELDHISTOGRAM', 'FILEHANDLE', 'FILEHANDLECLOSEREQ',
];
const FS_TO_QUERY = [
  'FSEVENTWRAP', 'FSREQCALLBACK', 'FSREQPROMISE', 'GETADDRINFOREQWRAP', 'GETNAMEINFOREQWRAP',
  'HEAPSNAPSHOT', 'HTTP2SESSION', 'HTTP2STREAM', 'HTTP2PING', 'HTTP2SETTINGS', 'HTTPINCOMINGMESSAGE',
  'HTTPCLIENTREQUEST', 'JSSTREAM', 'JSUDPWRAP', 'MESSAGEPORT', 'PIPECONNECTWRAP', 'PIPESERVERWRAP',
  'PIPEWRAP', 'PROCESSWRAP', 'PROMISE', 'QUERYWRAP',
];
const SHUTDOWN_TO_END = [
  'SHUTDOWNWRAP', 'SIGNALWRAP', 'STATWATCHER', 'STREAMPIPE', 'TCPCONNECTWRAP', 'TCPSERVERWRAP',
  'TCPWRAP', 'TTYWRAP', 'UDPSENDWRAP', 'UDPWRAP', 'SIGINTWATCHDOG', 'WORKER', 'WORKERHEAPSNAPSHOT',
  'WRITEWRAP', 'ZLIB', 'CHECKPRIMEREQUEST', 'PBKDF2REQUEST', 'KEYPAIRGENREQUEST', 'KEYGENREQUEST',
  'KEYEXPORTREQUEST', 'CIPHERREQUEST', 'DERIVEBITSREQUEST', 'HASHREQUEST', 'RANDOMBYTESREQUEST',
  'RANDOMPRIMEREQUEST', 'SCRYPTREQUEST', 'SIGNREQUEST', 'TLSWRAP', 'VERIFYREQUEST',
];

// Node 24 added worker profiling and Argon2 jobs.
const SHUTDOWN_TO_END_24 = SHUTDOWN_TO_END.flatMap((name) => (name === 'WORKERHEAPSNAPSHOT'
  ? ['WORKERCPUPROFILE', 'WORKERCPUUSAGE', 'WORKERHEAPPROFILE', 'WORKERHEAPSNAPSHOT', 'WORKERHEAPSTATISTICS']
  : name === 'CIPHERREQUEST' ? ['ARGON2REQUEST', 'CIPHERREQUEST'] : [name]));
const upTo = (name) => FS_TO_QUERY.slice(0, FS_TO_QUERY.indexOf(name) + 1);
const from = (name) => FS_TO_QUERY.slice(FS_TO_QUERY.indexOf(name));

// Measured: official 18.20.8, 20.20.2 (this host's), 22.12.0, 24.11.0,
// 26.10.0; Debian 12's 18.20.4 lists one more at the end, INSPECTORJSBINDING (59).
const PROVIDERS = Object.freeze({
  18: Object.freeze([...COMMON_HEAD, 'FIXEDSIZEBLOBCOPY', ...FS_TO_QUERY, 'QUIC_LOGSTREAM', 'QUIC_PACKET', ...SHUTDOWN_TO_END,
    'INSPECTORJSBINDING']),
  20: Object.freeze([...COMMON_HEAD, 'BLOBREADER', ...FS_TO_QUERY, 'QUIC_LOGSTREAM', 'QUIC_PACKET', ...SHUTDOWN_TO_END]),
  22: Object.freeze([...COMMON_HEAD, 'BLOBREADER', ...FS_TO_QUERY,
    'QUIC_ENDPOINT', 'QUIC_LOGSTREAM', 'QUIC_PACKET', 'QUIC_SESSION', 'QUIC_STREAM', 'QUIC_UDP', ...SHUTDOWN_TO_END]),
  24: Object.freeze([...COMMON_HEAD, 'BLOBREADER', ...upTo('HTTPCLIENTREQUEST'), 'LOCKS', ...from('JSSTREAM'),
    'QUIC_ENDPOINT', 'QUIC_LOGSTREAM', 'QUIC_PACKET', 'QUIC_SESSION', 'QUIC_STREAM', 'QUIC_UDP', ...SHUTDOWN_TO_END_24]),
  26: Object.freeze([...COMMON_HEAD, 'BLOBREADER', ...upTo('HTTPCLIENTREQUEST'), 'LOCKS', 'DTLS_ENDPOINT', 'DTLS_SESSION',
    ...from('JSSTREAM'), 'QUIC_ENDPOINT', 'QUIC_LOGSTREAM', 'QUIC_SESSION', 'QUIC_STREAM', 'QUIC_UDP', ...SHUTDOWN_TO_END_24]),
});

/** The provider table of a Node version ("20.20.2"), or null. */
function providersOf(version) {
  const major = /^(\d+)\./.exec(String(version || ''));
  return major && PROVIDERS[major[1]] ? PROVIDERS[major[1]] : null;
}

/** A provider number's name in a table (null: no table): "FSREQCALLBACK", or "provider 77". */
function providerName(table, number) {
  const n = Number(number);
  return table && Number.isInteger(n) && n >= 0 && n < table.length ? table[n] : `provider ${number}`;
}

module.exports = { PROVIDERS, providersOf, providerName };
