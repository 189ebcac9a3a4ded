#!/usr/bin/env bash
# Bonded links in rifl sim net (docs/netsim.md, "Bonded links"): one lane
# against 4 (and 16) lanes per link in groups of L (spatial), 2 and 1
# (temporal), on single:32 at 100 Gbit/s.
# usage: docs/results/netsim-bonded.sh [path/to/rifl] [outdir]
set -euo pipefail
rifl=${1:-./build/rifl}
out=${2:-docs/results}
row() { # label args...
  local label=$1; shift
  "$rifl" sim net "$@" --json | python3 -c '
import json, sys
r = json.load(sys.stdin)
print("%s,%d,%d,%g,%g,%.2f,%.1f,%.1f,%.2f,%d,%d,%d,%d" % (sys.argv[1], r["lanes"], r["group_lanes"],
      r["load"], r["ber"], r["throughput_gbps"]["mean"], r["latency_ns"]["p50"],
      r["latency_ns"]["p99"], r["latency_head_ns"]["p99"] / 1000, r["replays"],
      r["dropped"], r["lost"], r["corrupt"]))' "$label"
}
{
  echo "case,lanes,group_lanes,load,ber,throughput_gbps,latency_p50_ns,latency_p99_ns,head_p99_us,replays,dropped,lost,corrupt"
  for lg in "1 1" "4 4" "4 2" "4 1" "16 16" "16 1"; do
    set -- $lg
    row unloaded --lanes $1 --group-lanes $2 --load 0.01
    row full --lanes $1 --group-lanes $2 --load 1 --pattern permutation --time-us 50
    row ber --lanes $1 --group-lanes $2 --load 0.7 --ber 1e-6 --time-us 50
  done
} > "$out/netsim-bonded.csv"
echo "written: $out/netsim-bonded.csv"
