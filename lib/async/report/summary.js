'use strict';
// The figures async's report derives from its model, decided once for its
// text (./text.js) and its JSON (./json.js): a kind's rate and its share of
// the event loop's busy time. Pure.

// Per second over the span the trace covered (model.seconds), or null where
// that span is not known.
function perSecond(count, seconds) {
  return seconds ? Number(count) / seconds : null;
}

// A kind's share of the loop's busy time (its callbacks on the loop's
// thread), or null where the loop was never seen busy.
function loopShare(k, loopBusyNs) {
  return loopBusyNs > 0n ? Number(k.loopCallbackNs) / Number(loopBusyNs) : null;
}

module.exports = { perSecond, loopShare };
