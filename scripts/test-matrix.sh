#!/usr/bin/env bash
# Runs the integration tests in cells, each a set of tests under one bpftrace
# (test/README.md has the cells, the tags and their times):
#
#   scripts/test-matrix.sh [--command NAME] [--jobs N] [CELL...]
#
#   main      every test file under the host's bpftrace: with it the Node
#             builds, DTrace for Linux and the containers (make test)
#   unit      the tests not tagged @tracer (make unit), files one by one
#   host, trixie, sid
#             each command's core tests (@core) under that bpftrace: the
#             host's, Debian 13's 0.23 or Debian unstable's 0.27 (made by
#             scripts/bpftrace-tier.sh); default: host trixie sid
#   --command NAME
#             instead of the core tests, one command's: its own files
#             (test/NAME.test.js, test/NAME-*.test.js) and, in the other
#             files, the tests whose title names it (make test-command)
#   --one-at-a-time
#             cells one after another, and in each its files one by one
#             (make test's default: what CI runs, robust on a loaded host)
#   --jobs N  test files run side by side in a cell (mocha --parallel);
#             default 2 in main, host or a cell run alone, else 1;
#             a file marked "// test-matrix: alone" always runs by itself
#   MATRIX_GREP='@core' MATRIX_FILES='test/latency.test.js ...' to run others
#
# Cells given together run side by side, each in its own mocha: the first
# one's report shows as it comes, each other's whole once it has ended.
# Why side by side: a trace's time is mostly its tracer attaching and
# detaching uprobes, and each detach waits for an RCU grace period, which
# traces waiting at once share (test/README.md, "Where the time goes").
#
# A tier that cannot be made here is skipped, saying why; with CI set in the
# environment it fails instead: in CI nothing is skipped.
#
# Each cell's failures (mocha's "N failing" report) are printed again at the
# very end, so that the last lines of a long run, which are what a CI log
# shows, say which tests failed in every cell, not only in the last.
set -uo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: scripts/test-matrix.sh [--command NAME] [--jobs N] [main|host|trixie|sid ...]" >&2; exit 2; }

command=""
jobs=""
serial=no
cells=()
while [ $# -gt 0 ]; do
  case "$1" in
    --command) [ $# -ge 2 ] || usage; command="$2"; shift 2 ;;
    --jobs) [ $# -ge 2 ] || usage; jobs="$2"; shift 2 ;;
    --one-at-a-time) serial=yes; jobs=1; shift ;;
    -*) usage ;;
    *) cells+=("$1"); shift ;;
  esac
done
[ ${#cells[@]} -gt 0 ] || cells=(host trixie sid)
[[ -z "$jobs" || "$jobs" =~ ^[1-9][0-9]?$ ]] || { echo "test-matrix: --jobs takes a number from 1 to 99" >&2; exit 2; }
for cell in "${cells[@]}"; do
  [[ "$cell" =~ ^[a-z0-9]+$ ]] || { echo "test-matrix: no cell named '$cell'" >&2; exit 2; }
done

grep_for="${MATRIX_GREP:-@core}"
# The files holding @core tests (every command's, and a tracer's life):
# found, not listed, so a new command's tests join the tiers by their tag.
read -r -a core_files <<<"${MATRIX_FILES:-$(grep -l -- "$grep_for" test/*.test.js | tr '\n' ' ')}"

# One command's files, and the rest, whose tests are taken by title.
own_files=()
other_files=()
if [ -n "$command" ]; then
  [[ "$command" =~ ^[a-z]+$ ]] || { echo "test-matrix: --command takes a command's name, such as latency" >&2; exit 2; }
  [ -f "lib/commands/$command.js" ] || { echo "test-matrix: nodetrace has no command '$command' (lib/commands/)" >&2; exit 2; }
  for f in test/*.test.js; do
    case "$f" in
      "test/$command.test.js" | "test/$command"-*.test.js) own_files+=("$f") ;;
      *) other_files+=("$f") ;;
    esac
  done
fi
# A title names the command as the word it is on a command line: "nodetrace
# latency ...", "latency: ...", "latency -p: ...", "(latency)".
title_names_command="(^|[ (])$command([ :,)]|\$)"

failed=()
skipped=()
reports="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -- "$pid" 2>/dev/null; done
  rm -rf "$reports"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# mocha ARGS... under $bpftrace, with JOBS files side by side.
run_mocha() {
  local jobs="$1" color=() parallel=()
  shift
  [ -t 1 ] && [ "$streamed" = yes ] && color=(--color)
  [ "$jobs" -gt 1 ] && parallel=(--parallel --jobs "$jobs")
  env NODETRACE_BPFTRACE="$bpftrace" npx mocha "${color[@]}" "${parallel[@]}" "$@"
}

# A file whose header has the line "// test-matrix: alone" holds something
# machine-wide and runs after the others, by itself (test/README.md).
runs_alone() { grep -q '^// test-matrix: alone' "$1"; }

# mocha on FILES (after GREP, a title pattern or ""): the files side by
# side, then those that run alone, one by one; 1 if either failed.
run_files() {
  local grep="$1" together=() alone=() grep_args=() status=0
  shift
  [ -n "$grep" ] && grep_args=(--grep "$grep")
  for f in "$@"; do
    if runs_alone "$f"; then alone+=("$f"); else together+=("$f"); fi
  done
  if [ ${#together[@]} -gt 0 ]; then run_mocha "$cell_jobs" "${grep_args[@]}" "${together[@]}" || status=1; fi
  if [ ${#alone[@]} -gt 0 ]; then run_mocha 1 "${grep_args[@]}" "${alone[@]}" || status=1; fi
  return $status
}

# One cell's mocha runs; its exit status.
run_cell() {
  local status=0 what="each command's core tests"
  [ "$cell" = main ] && what="every test"
  [ "$cell" = unit ] && what="the tests not tagged @tracer"
  [ -n "$command" ] && what="the tests of nodetrace $command"
  version="$(${bpftrace:-bpftrace} --version 2>/dev/null)"
  echo "=== cell $cell: $what under ${version:-bpftrace} ${bpftrace:+($bpftrace) }(test files: $cell_jobs at a time)"
  if [ -n "$command" ]; then
    if [ ${#own_files[@]} -gt 0 ]; then run_files "" "${own_files[@]}" || status=1; fi
    run_files "$title_names_command" "${other_files[@]}" || status=1
  elif [ "$cell" = main ]; then
    run_files "" test/*.test.js || status=1
  elif [ "$cell" = unit ]; then
    run_mocha 1 --grep '@tracer' --invert test/*.test.js || status=1
  else
    run_files "$grep_for" "${core_files[@]}" || status=1
  fi
  return $status
}

streamed=yes
started=()
for cell in "${cells[@]}"; do
  if [ "$cell" = host ] || [ "$cell" = main ] || [ "$cell" = unit ]; then
    bpftrace=""
  elif ! bpftrace="$(scripts/bpftrace-tier.sh "$cell")"; then
    if [ -n "${CI:-}" ]; then
      echo "test-matrix: bpftrace tier $cell could not be made (above); CI runs every tier" >&2
      failed+=("$cell (not made)")
    else
      echo "test-matrix: skipped tier $cell: it could not be made (above); run scripts/bpftrace-tier.sh $cell as root" >&2
      skipped+=("$cell")
    fi
    continue
  fi
  # Two files at once in main, host or a cell run alone; one in a tier run
  # beside others: the 2 CPUs stay enough for the targets that spin.
  if [ "$cell" = unit ]; then cell_jobs=1
  elif [ -n "$jobs" ]; then cell_jobs="$jobs"
  elif [ "$cell" = main ] || [ "$cell" = host ] || [ ${#cells[@]} -eq 1 ]; then cell_jobs=2
  else cell_jobs=1; fi
  if [ "$streamed" = yes ]; then
    ( run_cell; echo $? > "$reports/$cell.status" ) 2>&1 | tee "$reports/$cell" &
    # --one-at-a-time: every cell shown as it comes, the next once it has ended.
    [ "$serial" = yes ] || streamed=no
  else
    ( run_cell > "$reports/$cell" 2>&1; echo $? > "$reports/$cell.status" ) &
  fi
  pids+=("$!")
  started+=("$cell")
  [ "$serial" = yes ] && wait "$!"
done
wait

# The report of each cell not shown as it came: all but the first, or
# none when they ran one at a time.
[ "$serial" = yes ] || for cell in "${started[@]:1}"; do
  echo
  cat "$reports/$cell"
done
for cell in "${started[@]}"; do
  [ "$(cat "$reports/$cell.status" 2>/dev/null)" = 0 ] || failed+=("$cell")
done

[ ${#skipped[@]} -eq 0 ] || echo "test-matrix: skipped: ${skipped[*]}"
if [ ${#failed[@]} -gt 0 ]; then
  for cell in "${failed[@]}"; do
    [ -s "$reports/$cell" ] || continue
    echo
    echo "=== what failed in cell $cell (its report above, again):"
    sed -n '/^ *[0-9][0-9]* failing/,$p' "$reports/$cell" | head -n 400
  done
  # Last, a line per failed test: what a log's tail shows.
  echo
  for cell in "${failed[@]}"; do
    [ -s "$reports/$cell" ] || continue
    awk -v cell="$cell" '
      /^ *[0-9]+ failing/ { on = 1; next }
      on && /^  [0-9]+\) / { title = $0; sub(/^ +/, "", title); open = 1; next }
      on && open { line = $0; sub(/^ +/, "", line); title = title " " line; if (line ~ /:$/) { print "test-matrix: " cell ": " title; open = 0 } }
    ' "$reports/$cell" | head -n 40
  done
  echo "test-matrix: failed: ${failed[*]}" >&2
  exit 1
fi
echo "test-matrix: passed: ${started[*]}"
