#!/usr/bin/env bash
# The RDMA experiments of docs/rdma.md (E1-E5 and fault recovery), with
# rifl sim rdma.  usage: docs/results/rdma-experiments.sh [path/to/rifl] [outdir]
set -euo pipefail
rifl=${1:-./build/rifl}
out=${2:-docs/results}
sizes=256,1KiB,4KiB,16KiB,64KiB,256KiB,1MiB,4MiB
# E1, E2: throughput vs transfer size, 1 hop, 32 outstanding, 10 and 100 Gbit/s
for op in write read; do
  for g in 10 100; do
    "$rifl" sim rdma --op $op --link-gbps $g --sizes $sizes --bytes 64MB --csv
  done
done > "$out/rdma-e1-e2.csv.tmp"
# one header only
awk -F, 'NR == 1 || $1 != "op"' "$out/rdma-e1-e2.csv.tmp" > "$out/rdma-e1-e2.csv"
rm -f "$out/rdma-e1-e2.csv.tmp"
# The three mappings side by side: writes vs size at 10 and 100 Gbit/s
for m in bundle cell compact; do
  for g in 10 100; do
    "$rifl" sim rdma --mapping $m --link-gbps $g --sizes 256,4KiB,16KiB,1MiB --csv |
      awk -F, -v m=$m 'NR == 1 { print "mapping," $0; next } { print m "," $0 }'
  done
done | awk -F, 'NR == 1 || $1 != "mapping"' > "$out/rdma-mappings.csv"
# E3: 1 MB writes over 1 to 5 hops
{
  echo "hops,throughput_gbps,ratio,latency_us_mean"
  for h in 1 2 3 4 5; do
    "$rifl" sim rdma --size 1MiB --hops $h --json |
      python3 -c 'import json,sys; r=json.load(sys.stdin); print("%d,%.4f,%.4f,%.1f" % (r["hops"], r["throughput_gbps"], r["ratio"], r["latency_us_mean"]))'
  done
} > "$out/rdma-e3.csv"
# E4: the smallest write with a notification, alone on an idle path
"$rifl" sim rdma --size 1 --flows 1 --bytes 1 --json > "$out/rdma-e4.json"
"$rifl" sim rdma --size 1 --flows 1 --bytes 1 --link-gbps 100 --json >> "$out/rdma-e4.json"
# E5: 64-byte transfers, 6 in flight, against E1's 16 KB
{
  "$rifl" sim rdma --size 64 --flows 6 --bytes 4MB --csv
  "$rifl" sim rdma --size 64 --flows 32 --bytes 4MB --csv | tail -n 1
} > "$out/rdma-e5.csv"
# Fault recovery: selective block retransmission against go-back-N, 1 MB writes.
# A run whose transfers give up (17 attempts) exits 1: recorded, not fatal.
{
  echo "fault,p,mode,throughput_gbps,ratio,completion_ms,retransmitted_blocks,timeouts,failed,verified"
  for f in none payload-crc drop; do
    for p in 0.0001 0.001 0.01; do
      [ $f = none ] && { [ $p = 0.0001 ] || continue; p=0; fault=""; } || fault="--fault $f:$p"
      for gbn in false true; do
        json=$("$rifl" sim rdma --size 1MiB --bytes 32MB $fault --go-back-n $gbn --json) ||
          [ $? -eq 1 ]
        python3 -c 'import json,sys; r=json.loads(sys.argv[3]); print("%s,%s,%s,%.4f,%.4f,%.3f,%d,%d,%d,%s" % (sys.argv[1], sys.argv[2], "go-back-n" if r["go_back_n"] else "selective", r["throughput_gbps"], r["ratio"], r["sim_us"] / 1000, r["retransmitted_blocks"], r["timeouts"], r["failed"], r["verified"]))' $f $p "$json"
      done
    done
  done
} > "$out/rdma-faults.csv"
# Over a sim net network (NICs, a switch, links that are lane engines):
# writes vs size, 1 switch, 10 and 100 Gbit/s, against the path model above
{
  echo "link_gbps,size,throughput_gbps,capacity_gbps,ratio,cell_p99_us,verified"
  for g in 10 100; do
    for sz in 256 4KiB 16KiB 1MiB; do
      "$rifl" sim rdma --net single:2 --link-gbps $g --size $sz --bytes 16MB --json |
        python3 -c 'import json,sys; r=json.load(sys.stdin); print("%g,%d,%.4f,%.4f,%.4f,%.3f,%s" % (r["link_gbps"], r["size"], r["throughput_gbps"], r["capacity_gbps"], r["ratio"], r["cell_p99_us"], r["verified"]))'
    done
  done
} > "$out/rdma-net.csv"
# Bit errors on every link: the lanes replay, RDMA never retransmits
{
  echo "ber,throughput_gbps,ratio,link_replays,retransmitted_blocks,verified"
  for b in 0 1e-7 1e-6 1e-5; do
    "$rifl" sim rdma --net single:2 --link-gbps 100 --bytes 16MB --ber $b --json |
      python3 -c 'import json,sys; r=json.load(sys.stdin); print("%g,%.4f,%.4f,%d,%d,%s" % (r["ber"], r["throughput_gbps"], r["ratio"], r["replays"], r["retransmitted_blocks"], r["verified"]))'
  done
} > "$out/rdma-net-ber.csv"
# Incast of 1 MB writes to host 0, with a victim flow from sender 1 to a
# free host, under each flow control of sim net
{
  echo "fc,senders,throughput_gbps,ratio,sender_gbps_min,sender_gbps_max,victim_gbps,max_voq_cells,cell_p99_us,fc_frames,verified"
  for fc in voq credit link; do
    for n in 2 4 8; do
      "$rifl" sim rdma --net single:10 --senders $n --victim --fc $fc --flows 8 --bytes 4MB \
        --link-gbps 100 --json |
        python3 -c 'import json,sys; r=json.load(sys.stdin); print("%s,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%d,%.3f,%d,%s" % (r["fc"], r["senders"], r["throughput_gbps"], r["ratio"], r["sender_gbps_min"], r["sender_gbps_max"], r["victim_gbps"], r["max_voq_cells"], r["cell_p99_us"], r["fc_frames"], r["verified"]))'
    done
  done
} > "$out/rdma-incast.csv"
# the figures (docs/figures/rdma.gp reads docs/results/): gnuplot, when there
if [ "$out" = docs/results ] && command -v gnuplot > /dev/null; then
  gnuplot docs/figures/rdma.gp
fi
echo "written: $out/rdma-e1-e2.csv rdma-mappings.csv rdma-e3.csv rdma-e4.json rdma-e5.csv rdma-faults.csv rdma-net.csv rdma-net-ber.csv rdma-incast.csv"
