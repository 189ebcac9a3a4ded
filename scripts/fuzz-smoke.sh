#!/usr/bin/env bash
# Runs every libFuzzer harness for a short time from its seed corpus.
# usage: fuzz-smoke.sh BUILD_DIR SECONDS
# A harness fails when it finds a crash, leak or sanitizer report, when its
# seed corpus (fuzz/corpus/<name>/) is missing or empty, when libFuzzer did not
# read every seed, or when the run did not end with libFuzzer's DONE line.
# Every fuzz/fuzz_<name>.c must have been built.
set -euo pipefail
build=${1:-build-fuzz}
secs=${2:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
fail=0
n=0
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
for src in "$root"/fuzz/fuzz_*.c; do
  name=$(basename "$src" .c)
  bin=$build/fuzz/$name
  n=$((n + 1))
  if [ ! -x "$bin" ]; then
    bad "$name: $bin was not built (configure with -DRIFL_FUZZ=ON and CC=clang, then build)"
    continue
  fi
  corpus=$root/fuzz/corpus/$name
  seeds=$(find "$corpus" -maxdepth 1 -type f 2> /dev/null | wc -l)
  if [ "$seeds" -eq 0 ]; then
    bad "$name: no seed inputs in fuzz/corpus/$name/ (add at least one)"
    continue
  fi
  work=$(mktemp -d)
  find "$corpus" -maxdepth 1 -type f -exec cp {} "$work"/ \;
  echo "fuzz $name for ${secs}s from $seeds seeds"
  # (the harnesses' undefined-behaviour checks recover by default: made to
  # stop the run, and any report left in the log fails it too)
  if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$bin" -max_total_time="$secs" -print_final_stats=0 \
        -artifact_prefix="$work/" "$work" > "$work.log" 2>&1; then
    tail -40 "$work.log"
    bad "$name (log above)"
  elif grep -q "runtime error:" "$work.log"; then
    grep -m 5 -A 5 "runtime error:" "$work.log"
    bad "$name: undefined behaviour (above)"
  elif ! grep -q "^INFO: seed corpus: files: $seeds " "$work.log"; then
    sed -n '/seed corpus\|files found/p' "$work.log"
    bad "$name: libFuzzer did not read the $seeds seed inputs"
  elif ! grep -E "^#[0-9]+[[:space:]]+DONE" "$work.log" | tail -1; then
    tail -20 "$work.log"
    bad "$name: the run did not finish with libFuzzer's DONE line"
  fi
  rm -rf "$work" "$work.log"
done
if [ "$n" -eq 0 ]; then echo "no fuzz/fuzz_*.c harness in $root" >&2; exit 1; fi
echo "$((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
