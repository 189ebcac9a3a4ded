#!/bin/bash
# The paper's Table I and Fig. 5 again with `rifl sim net`: 32 hosts with
# RIFL NICs (a queue per destination, messages of one cell or 64-2048
# bytes) on one iSLIP switch over real 100 Gbit/s RIFL links, next to the
# fixed-delay model of `rifl sim switch` (docs/layer2.md, section 8).
# Usage: docs/results/net-table1-fig5.sh [RIFL_BINARY]   (about a minute on 2 cores)
set -eu
RIFL=${1:-./build/rifl}
FIG=$(dirname "$0")/../figures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Table I: the paper's finite workload (2.5 MB per pair), every cell
# measured; percentiles in cell times (23.04 ns here)
"$RIFL" sim net --bytes-per-flow 2.5MB --sweep "traffic=bernoulli,bursty load=0.3,0.6,0.9,1.0" \
    --json --jobs 2 > "$tmp/t1.json"
python3 - "$tmp/t1.json" > "$FIG/net-table1.csv" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
cols = ("p1", "p50", "p75", "p90", "p95", "p99", "max")
print("traffic,load,view," + ",".join(cols) + ",throughput_gbps,dropped,lost")
for r in runs:
    for view in ("latency_head_ns", "latency_ns"):
        p = r[view]
        cells = ",".join("%.0f" % (p[c] / r["cell_ns"]) for c in cols)
        print("%s,%g,%s,%s,%.2f,%d,%d" % (r["traffic"], r["load"], view[:-3], cells,
                                          r["throughput_gbps"]["mean"], r["dropped"], r["lost"]))
PY

# Fig. 5: payload throughput against load (200 us windows), fixed one-cell
# messages and 64-2048 bytes, as a fraction of 87.5 Gbit/s (a cell's 252
# message bytes every 23.04 ns)
for t in bernoulli bursty; do
    "$RIFL" sim net --traffic $t --sweep "load=0.1:1:0.1" --time-us 200 --csv > "$tmp/$t-fixed.csv"
    "$RIFL" sim net --traffic $t --msg-min 64 --msg-max 2048 --sweep "load=0.1:1:0.1" \
        --time-us 200 --csv > "$tmp/$t-var.csv"
done
col() { awk -F, -v c=throughput_gbps 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } { print $k }' "$1"; }
{
    echo "load,bernoulli_fixed_gbps,bursty_fixed_gbps,bernoulli_var_gbps,bursty_var_gbps"
    paste -d, <(cut -d, -f1 "$tmp/bernoulli-fixed.csv" | tail -n +2) <(col "$tmp/bernoulli-fixed.csv") \
        <(col "$tmp/bursty-fixed.csv") <(col "$tmp/bernoulli-var.csv") <(col "$tmp/bursty-var.csv")
} > "$FIG/net-fig5.csv"
"$RIFL" plot "$FIG/net-fig5.csv" --x load \
    --y bernoulli_fixed_gbps,bursty_fixed_gbps,bernoulli_var_gbps,bursty_var_gbps \
    --scale 0.0114285714 --yrange 0:1.05 --key "top left" \
    --titles "Bernoulli 252 B,bursty 252 B,Bernoulli 64-2048 B,bursty 64-2048 B" \
    --xlabel "offered load" --ylabel "utilization (payload / 87.5 Gbit/s)" \
    --title "rifl sim net, single:32, iSLIP, real RIFL links (cf. paper Fig. 5)" \
    --out "$FIG/net-fig5.png"
