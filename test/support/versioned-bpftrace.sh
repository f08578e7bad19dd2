#!/bin/sh
# For test/tiers.test.js: a bpftrace that only says its version, the one
# FAKE_BPFTRACE_VERSION names (as `bpftrace --version` prints it), after
# FAKE_BPFTRACE_DELAY seconds (a loaded host) if set.
[ -n "${FAKE_BPFTRACE_DELAY:-}" ] && sleep "$FAKE_BPFTRACE_DELAY"
[ "$1" = --version ] && { echo "bpftrace v${FAKE_BPFTRACE_VERSION:-0.27.1}"; exit 0; }
echo "this fake bpftrace only answers --version" >&2
exit 1
