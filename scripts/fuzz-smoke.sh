#!/usr/bin/env bash
# Runs every libFuzzer harness for a short time from its seed corpus.
# usage: fuzz-smoke.sh BUILD_DIR SECONDS
set -euo pipefail
build=${1:-build-fuzz}
secs=${2:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
fail=0
n=0
for bin in "$build"/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  corpus="$root/fuzz/corpus/$name"
  work=$(mktemp -d)
  [ -d "$corpus" ] && cp -r "$corpus"/. "$work"/ 2>/dev/null || true
  echo "fuzz $name for ${secs}s"
  if ! ASAN_OPTIONS=detect_leaks=1 "$bin" -max_total_time="$secs" -print_final_stats=0 \
        -artifact_prefix="$work/" "$work" >"$work.log" 2>&1; then
    echo "FAIL $name (log below)"
    tail -40 "$work.log"
    fail=$((fail + 1))
  else
    grep -E "^#[0-9]+.*DONE|Done [0-9]+ runs" "$work.log" | tail -1 || true
  fi
  n=$((n + 1))
  rm -rf "$work" "$work.log"
done
if [ "$n" -eq 0 ]; then echo "no fuzz harness found in $build/fuzz" >&2; exit 1; fi
echo "$((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
