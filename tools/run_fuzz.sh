#!/usr/bin/env bash
# Runs the libFuzzer targets JOBS at a time, each for SECONDS on a fresh copy of its seed
# corpus. A fuzzer is one process, so two cores run two targets in the time of one; a target
# whose code uses threads of its own (the options' engine, OpenBLAS) or starts processes (the
# quoting's /bin/sh) gets fewer executions than alone. Every target's output goes to BUILD/fuzz_NAME.log and is
# printed whole once it ends; a crash leaves its input as BUILD/NAME-crash-* (the options
# target's as BUILD/crash-*).
#
# Usage: tools/run_fuzz.sh BUILD SECONDS JOBS NAME...   (run from the repository root;
#   BUILD holds tests/fuzz/fuzz_NAME, built beforehand)
# Exit 0: every target ran its time without a finding; 1: a target failed (named at the end);
# 2: bad arguments.
set -uo pipefail

if [ $# -lt 4 ]; then
  echo "usage: tools/run_fuzz.sh BUILD SECONDS JOBS NAME..." >&2
  exit 2
fi
build=$1 seconds=$2 jobs=$3
shift 3
case $seconds$jobs in *[!0-9]*) echo "SECONDS ($seconds) and JOBS ($jobs) must be whole numbers" >&2; exit 2;; esac
[ "$jobs" -ge 1 ] || jobs=1

# One target: its corpus copied fresh, its log kept; prints nothing (the caller prints the log).
run_one() {
  local t=$1 corpus=$1_corpus prefix=$1-
  if [ "$t" = options ]; then corpus=corpus prefix=; fi
  rm -rf "$build/$corpus" && mkdir -p "$build/$corpus" && cp tests/fuzz/"$corpus"/* "$build/$corpus/" &&
    "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -artifact_prefix="$build/$prefix" \
      -print_final_stats=1 "$build/$corpus" >"$build/fuzz_$t.log" 2>&1
}

failed=()
pids=() names=()
# Waits for the oldest running target, prints its log, records a failure.
reap() {
  local status=0
  wait "${pids[0]}" || status=$?
  echo "== fuzz_${names[0]}: $( [ $status = 0 ] && echo "no finding in ${seconds} s" || echo "FAILED (exit $status)")"
  cat "$build/fuzz_${names[0]}.log"
  [ $status = 0 ] || failed+=("${names[0]}")
  pids=("${pids[@]:1}") names=("${names[@]:1}")
}

for t in "$@"; do
  if [ ! -x "$build/tests/fuzz/fuzz_$t" ]; then
    echo "no fuzz target $build/tests/fuzz/fuzz_$t; build it first" >&2
    failed+=("$t")
    continue
  fi
  [ ${#pids[@]} -lt "$jobs" ] || reap
  run_one "$t" &
  pids+=($!) names+=("$t")
done
while [ ${#pids[@]} -gt 0 ]; do reap; done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing failed: ${failed[*]} (logs in $build/fuzz_NAME.log, inputs in $build/)" >&2
  exit 1
fi
