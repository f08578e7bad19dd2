'use strict';
// What doctor's usdt line tells to do when the addon is not built: a
// rebuild only where there is a source to rebuild from (lib/usdt/native.js).
const assert = require('assert');
const { unavailableReason } = require('../lib/usdt/native');

describe('usdt: the missing addon\'s reason', function () {
  const errors = ['/opt/nodetrace/build/Release/nodetrace_usdt.node not built'];
  it('where the source is (a checkout, an npm install): says how to rebuild it', function () {
    assert.match(unavailableReason(errors, true), /not built\); rebuild it with: node scripts\/build-native\.js$/);
  });
  it('where it is not (the image): no rebuild, and that tracing needs none', function () {
    const reason = unavailableReason(errors, false);
    assert(!/rebuild/.test(reason), reason);
    assert.match(reason, /no source to build it from, and tracing needs none/);
  });
});
