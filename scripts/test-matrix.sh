#!/usr/bin/env bash
# Runs each command's core integration tests (mocha --grep @core) under each
# bpftrace tier: the host's own bpftrace ("host") and newer ones from Debian
# roots (scripts/bpftrace-tier.sh: trixie = Debian 13's 0.23, sid = Debian
# unstable's 0.27), chosen through NODETRACE_BPFTRACE.
#
#   scripts/test-matrix.sh [TIER...]        default: host trixie sid
#   MATRIX_GREP='@core' MATRIX_FILES='test/latency.test.js ...' to run others
#
# A tier that cannot be made here is skipped, saying why; with CI set in the
# environment it fails instead: in CI nothing is skipped.
set -uo pipefail
cd "$(dirname "$0")/.."

tiers=("$@")
[ ${#tiers[@]} -gt 0 ] || tiers=(host trixie sid)
grep_for="${MATRIX_GREP:-@core}"
# The files holding @core tests (every command's, and a tracer's life):
# found, not listed, so a new command's tests join the tiers by their tag.
read -r -a files <<<"${MATRIX_FILES:-$(grep -l -- "$grep_for" test/*.test.js | tr '\n' ' ')}"

failed=()
skipped=()
for tier in "${tiers[@]}"; do
  if [ "$tier" = host ]; then
    bpftrace=""
  elif ! bpftrace="$(scripts/bpftrace-tier.sh "$tier")"; then
    if [ -n "${CI:-}" ]; then
      echo "test-matrix: bpftrace tier $tier could not be made (above); CI runs every tier" >&2
      failed+=("$tier (not made)")
    else
      echo "test-matrix: skipped tier $tier: it could not be made (above); run scripts/bpftrace-tier.sh $tier as root" >&2
      skipped+=("$tier")
    fi
    continue
  fi
  version="$(${bpftrace:-bpftrace} --version 2>/dev/null)"
  echo "=== tier $tier: ${version:-bpftrace} ${bpftrace:+($bpftrace)}"
  if ! env NODETRACE_BPFTRACE="$bpftrace" npx mocha --grep "$grep_for" "${files[@]}"; then
    failed+=("$tier")
  fi
done

[ ${#skipped[@]} -eq 0 ] || echo "test-matrix: skipped: ${skipped[*]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "test-matrix: failed: ${failed[*]}" >&2
  exit 1
fi
echo "test-matrix: passed: ${tiers[*]}"
