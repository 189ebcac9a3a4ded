#!/usr/bin/env bash
# Reproduces the Layer 2 switch results of docs/layer2.md: the paper's
# Table I (latency percentiles) and Fig. 5 (utilization against load).
# usage: scripts/reproduce-layer2.sh [RIFL_BINARY] [OUT_DIR] [BYTES_PER_PAIR]
# Defaults: build/rifl, docs/figures, 2.5MB per pair (the paper's amount;
# about 3 minutes of CPU time, every sweep on all cores).  Pass e.g. 250KB
# for a quick check.
set -euo pipefail
rifl=${1:-build/rifl}
out=${2:-docs/figures}
bpp=${3:-2.5MB}
mkdir -p "$out"
for hq in per-dest fifo; do
  for tr in bernoulli bursty; do
    echo "Table I: $tr, hosts $hq" >&2
    "$rifl" sim switch --csv --seed 1 --bytes-per-pair "$bpp" --traffic "$tr" \
      --host-queue "$hq" --sweep "scheduler=islip,safc load=0.3,0.6,0.9,1.0" \
      > "$out/table1-$tr-$hq.csv"
  done
done
for hq in per-dest fifo; do
  for tr in bernoulli bursty; do
    echo "Fig. 5: $tr, hosts $hq" >&2
    "$rifl" sim switch --csv --seed 1 --bytes-per-pair "$bpp" --traffic "$tr" \
      --host-queue "$hq" \
      --sweep "scheduler=islip,safc packet-bytes=256,0 load=0.1:1:0.1" \
      --plot "$out/fig5-$tr-$hq.png" \
      --plot-title "Utilization against load, $tr arrivals, $hq hosts" \
      > "$out/fig5-$tr-$hq.csv"
  done
done
echo "p99 latency against load" >&2
"$rifl" sim switch --csv --seed 1 --bytes-per-pair "$bpp" \
  --sweep "scheduler=islip,safc traffic=bernoulli,bursty load=0.1:1:0.1" \
  --plot "$out/latency-p99.png" --plot-y p99 \
  --plot-title "99th percentile cell latency against load, per-dest hosts" \
  > "$out/latency-p99.csv"
