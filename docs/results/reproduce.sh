#!/bin/bash
# Reproduce the paper's results (docs/paper-results.md) with the rifl CLI.
# Usage: docs/results/reproduce.sh [RIFL_BINARY] [full|quick]
#   full : 10 GB per direction at every point, as the paper sent (about 2
#          minutes on a 2-core machine, points run two at a time)
#   quick: 1 GB per point, capped at 4e7 slots (the sweep in a few seconds)
set -eu
RIFL=${1:-./build/rifl}
MODE=${2:-full}
OUT=$(dirname "$0")
DOCS=$OUT/..
if [ "$MODE" = full ]; then SIZE="--bytes 10GB --jobs 2"; CSV=$OUT/fig9_full.csv
else SIZE="--bytes 1GB --frames 40M"; CSV=$OUT/fig9_quick.csv; fi

# Fig. 9: BER sweep on the reference link (seed 1)
time "$RIFL" sim link --sweep ber=1e-12:1e-5:x10^0.25 $SIZE --seed 1 --csv > "$CSV"
"$RIFL" plot "$CSV" --x ber --y bandwidth_ratio --logx --yrange 0:1.05 --key "bottom left" \
    --titles "bandwidth ratio (simulated)" \
    --xlabel "bit error rate" --ylabel "bandwidth ratio (goodput / error-free goodput)" \
    --title "RIFL 256-bit frames, 112 Gbit/s, 10 m: bandwidth ratio (cf. paper Fig. 9a)" \
    --out "$DOCS/fig9a.png"
"$RIFL" plot "$CSV" --x ber --y last_avg_ns,last_p99_ns,last_max_ns --logx --logy \
    --key "top left" --titles "average,p99,max" \
    --xlabel "bit error rate" --ylabel "latency, last frame sent to delivered (ns)" \
    --title "Frame latency incl. 10 m cable and transceivers (cf. paper Fig. 9b)" \
    --out "$DOCS/fig9b.png"
"$RIFL" plot "$CSV" --x ber --y lat_avg_ns,lat_p99_ns,lat_max_ns --logx --logy \
    --key "top left" --titles "average,p99,max" \
    --xlabel "bit error rate" --ylabel "packet latency, first bit sent to last bit delivered (ns)" \
    --title "Packet latency, packets of 1-8192 bytes" --out "$DOCS/fig9b_packets.png"

# Tables 2, 3, 5 and the undetected-error measurement
"$RIFL" calc table2 > "$OUT/table2.txt"
"$RIFL" calc table3 > "$OUT/table3.txt"
"$RIFL" calc table5 --sweep-csv "$CSV" > "$OUT/table5.txt"
"$RIFL" calc ffr --frames 50M --bers 3e-2,1e-2,3e-3,1e-3 --csv > "$OUT/ffr_measured.csv"

# Fig. 8: framing efficiency models, and RIFL measured by the simulator
"$RIFL" calc fig8 > "$OUT/fig8.csv"
"$RIFL" plot "$OUT/fig8.csv" --x payload_bytes \
    --y rifl256,rifl512,aurora64b66b,interlaken,ethernet100g --style lines --yrange 0:1 \
    --titles "RIFL 256-bit frames,RIFL 512-bit frames,Aurora 64b/66b (model),Interlaken (model),100G Ethernet (model)" \
    --xlabel "payload size (bytes)" --ylabel "bandwidth efficiency (payload bits / line bits)" \
    --title "Bandwidth efficiency against payload size (cf. paper Fig. 8a-c)" --out "$DOCS/fig8.png"
echo "size,frame_bits,efficiency" > "$OUT/fig8_sim.csv"
for F in 256 512; do
    for L in 1 16 30 31 60 61 64 100 256 576 1000 1500; do
        "$RIFL" sim link --size $L --frame-bits $F --bytes 30MB --reference false --csv 2>/dev/null |
            tail -1 | awk -F, -v L=$L -v F=$F '{print L "," F "," $11}'
    done
done >> "$OUT/fig8_sim.csv"
