#!/usr/bin/env bash
# Runs each command's core integration tests (mocha --grep @core) under each
# bpftrace tier: the host's own bpftrace ("host") and newer ones from Debian
# roots (scripts/bpftrace-tier.sh: trixie = Debian 13's 0.23, sid = Debian
# unstable's 0.27), chosen through NODETRACE_BPFTRACE.
#
#   scripts/test-matrix.sh [TIER...]        default: host trixie sid
#   MATRIX_GREP='@core' MATRIX_FILES='test/latency.test.js ...' to run others
#
# Tier `main` is the whole suite (every test file, no grep) under the host's
# bpftrace: `make test` runs main, then the newer tiers.
#
# A tier that cannot be made here is skipped, saying why; with CI set in the
# environment it fails instead: in CI nothing is skipped.
#
# Each run's failures (mocha's "N failing" report) are printed again at the
# very end, so that the last lines of a long run, which are what a CI log
# shows, say which tests failed in every tier, not only in the last.
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
reports="$(mktemp -d)"
trap 'rm -rf "$reports"' EXIT
# mocha ARGS... under $bpftrace, its report shown as it comes and kept in
# $reports/$tier; its exit status.
run_mocha() {
  local color=()
  [ -t 1 ] && color=(--color)
  env NODETRACE_BPFTRACE="$bpftrace" npx mocha "${color[@]}" "$@" | tee "$reports/$tier"
  return "${PIPESTATUS[0]}"
}

for tier in "${tiers[@]}"; do
  if [ "$tier" = host ] || [ "$tier" = main ]; then
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
  if [ "$tier" = main ]; then
    run_mocha 'test/**/*.test.js' || failed+=("$tier")
  else
    run_mocha --grep "$grep_for" "${files[@]}" || failed+=("$tier")
  fi
done

[ ${#skipped[@]} -eq 0 ] || echo "test-matrix: skipped: ${skipped[*]}"
if [ ${#failed[@]} -gt 0 ]; then
  for tier in "${failed[@]}"; do
    [ -s "$reports/$tier" ] || continue
    echo
    echo "=== what failed in tier $tier (its report above, again):"
    sed -n '/^ *[0-9][0-9]* failing/,$p' "$reports/$tier" | head -n 400
  done
  # Last, a line per failed test: what a log's tail shows.
  echo
  for tier in "${failed[@]}"; do
    [ -s "$reports/$tier" ] || continue
    awk -v tier="$tier" '
      /^ *[0-9]+ failing/ { on = 1; next }
      on && /^  [0-9]+\) / { title = $0; sub(/^ +/, "", title); open = 1; next }
      on && open { line = $0; sub(/^ +/, "", line); title = title " " line; if (line ~ /:$/) { print "test-matrix: " tier ": " title; open = 0 } }
    ' "$reports/$tier" | head -n 40
  done
  echo "test-matrix: failed: ${failed[*]}" >&2
  exit 1
fi
echo "test-matrix: passed: ${tiers[*]}"
