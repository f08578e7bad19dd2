'use strict';
// Which processes `nodetrace snoop` watches, and (Linux) which probe
// libraries carry their bunyan probes: lib/probe-libraries/probe-targets.js, in
// bunyan's words.
const usdt = require('../usdt');
const targets = require('../probe-libraries/probe-targets');

const BUNYAN = usdt.BUNYAN_PROVIDER;

const SNOOP = Object.freeze({
  command: 'snoop',
  provider: BUNYAN,
  probes: 'bunyan probes',
  all: 'every process with bunyan probes',
  hint: 'Its bunyan probes only fire on Linux when it runs with nodetrace\'s provider:\n'
    + '  node -r nodetrace/register app.js     (or NODE_OPTIONS="--require nodetrace/register")',
});

const parseTarget = (text) => targets.parseTarget(text, SNOOP.command);
const hostFacts = () => targets.hostFacts(BUNYAN);
const resolveTargets = (text, tracerName, host, o) => targets.resolveTargets(SNOOP, text, tracerName, host, o);

module.exports = { parseTarget, resolveTargets, hostFacts, shorten: targets.shorten, BUNYAN };
