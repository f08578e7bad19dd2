#!/usr/bin/env node
'use strict';
// What the register hook adds to one HTTP request while nothing traces it,
// without a network in the way: the diagnostics_channel messages a server
// request publishes (request.start, response.finish), published N times
// with no subscriber, with an empty function subscribed, then with
// lib/http/hook.js subscribed (its probes untraced), rounds interleaved, best round counts.
//
//   node bench/http-hook-untraced.js [--n 2000000] [--rounds 7]
const dc = require('diagnostics_channel');
const { EventEmitter } = require('events');

const options = require('./options');
const N = options.number('n', 2000000);
const ROUNDS = options.number('rounds', 7);

const start = dc.channel('http.server.request.start');
const finish = dc.channel('http.server.response.finish');
const message = { request: { method: 'GET', url: '/x' }, response: new EventEmitter(), socket: null, server: null };

function run() {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) {
    if (start.hasSubscribers) start.publish(message);
    if (finish.hasSubscribers) finish.publish(message);
  }
  return Number(process.hrtime.bigint() - t0) / N;
}

const best = { none: Infinity, empty: Infinity, hook: Infinity };
const noop = () => {};
let hook = null;
for (let r = 0; r < ROUNDS; r++) {
  best.none = Math.min(best.none, run());
  start.subscribe(noop);
  finish.subscribe(noop);
  best.empty = Math.min(best.empty, run());
  start.unsubscribe(noop);
  finish.unsubscribe(noop);
  hook = require('../lib/http/hook').install(require('../lib/usdt'));
  best.hook = Math.min(best.hook, run());
  hook.uninstall();
}
console.log(`node ${process.version}, ${N} requests x ${ROUNDS} rounds, best round:`);
console.log(`  no subscriber   ${best.none.toFixed(1)} ns per request (the channels' hasSubscribers checks)`);
console.log(`  empty subscriber ${best.empty.toFixed(1)} ns per request (what diagnostics_channel itself costs)`);
console.log(`  hook, untraced  ${best.hook.toFixed(1)} ns per request (+${(best.hook - best.none).toFixed(1)} ns)`);
