#!/usr/bin/env bash
# CLI checks for `rifl sim net`: the JSON keys, zero drops and loss, the
# unloaded one-switch path, seeds, and clear refusals.
# usage: cli_sim_net.sh RIFL_BINARY VECTORS_DIR SOURCE_DIR
set -euo pipefail
rifl=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
val() { grep -o "\"$1\": [^,}]*" "$2" | head -1 | sed 's/^[^:]*: *//; s/"//g'; }
ok() { awk "BEGIN { exit !($1) }"; }

"$rifl" sim net --help | grep -q -- "--topology" || fail "--help lacks --topology"

# defaults: single:32 at 10% load; p50 is the unloaded 17 cell times
"$rifl" sim net --json --time-us 20 > "$tmp/a.json"
for k in latency_ns latency_head_ns mct_us p50 p99 p999 max delivered_cells \
         completed_messages dropped lost replays fc_frames max_voq_cells links hops; do
  grep -q "\"$k\": " "$tmp/a.json" || fail "JSON lacks $k"
done
[ "$(val finished "$tmp/a.json")" = true ] || fail "finished"
[ "$(val dropped "$tmp/a.json")" = 0 ] && [ "$(val lost "$tmp/a.json")" = 0 ] || fail "drops"
p50=$(val p50 "$tmp/a.json"); cell=$(val cell_ns "$tmp/a.json")
ok "$p50 == 17 * $cell" || fail "p50 $p50 ns is not 17 cell times of $cell ns"

# three hops with bit errors: replays, nothing lost; per-link detail
"$rifl" sim net --topology leafspine:2x2x2 --load 0.8 --ber 1e-6 --time-us 10 \
  --warmup-us 2 --json --links --seed 3 > "$tmp/b.json"
[ "$(val dropped "$tmp/b.json")" = 0 ] && [ "$(val lost "$tmp/b.json")" = 0 ] || fail "BER drops"
ok "$(val replays "$tmp/b.json") > 0" || fail "no replays at BER 1e-6"
[ "$(grep -c "\"from\": " "$tmp/b.json")" = 16 ] || fail "expected 16 link directions"
# the same seed gives the same run
"$rifl" sim net --topology leafspine:2x2x2 --load 0.8 --ber 1e-6 --time-us 10 \
  --warmup-us 2 --json --links --seed 3 > "$tmp/c.json"
cmp -s "$tmp/b.json" "$tmp/c.json" || fail "same seed, different output"

# CSV and the summary
"$rifl" sim net --time-us 5 --csv | head -1 | grep -q "^fc,load,ber,latency_p50_ns" || fail csv
"$rifl" sim net --time-us 5 | grep -q "latency (from generation)" || fail summary

# refusals name the problem
expect_err() {
  local want=$1; shift
  if "$rifl" sim net "$@" > "$tmp/out" 2> "$tmp/err"; then fail "accepted: $*"; fi
  grep -q -- "$want" "$tmp/err" || fail "message for '$*' lacks '$want': $(cat "$tmp/err")"
}
expect_err "credit flow control is not available" --fc credit
expect_err "use voq or link" --fc nope
expect_err "use uniform, permutation" --pattern x
expect_err "incast" --topology single:4 --pattern incast --incast 3
expect_err "load" --load 0
expect_err "topology" --topology leafspine:0x1x1
expect_err "not both" --msg-bytes 100 --msg-min 10
# the benchmark runs and reports its rates
"$rifl" bench net --us 5 --json > "$tmp/bench.json"
ok "$(val lane_slots_per_s "$tmp/bench.json") > 0 && $(val cell_hops_per_s "$tmp/bench.json") > 0" ||
  fail "bench net: $(cat "$tmp/bench.json")"
echo "cli_sim_net: ok"
