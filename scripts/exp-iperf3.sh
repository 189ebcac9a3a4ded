#!/bin/bash
# Experiment: bulk TCP goodput with iperf3, straight across a veth pair
# between two network namespaces and through a RIFL link (rifl link up
# --tap) whose UDP datagrams cross the same veth pair, at each drop rate
# (iptables' statistic match on each end's input from the veth, both
# directions).  One JSON object per (path, drop rate) on stdout, with the
# MTUs, the offload settings of the veth and TAP devices, the rifl ends'
# CPU time and counters; see docs/link-daemon.md, "Bulk TCP goodput".
#
#   scripts/exp-iperf3.sh [RIFL_BINARY] [SECONDS] [DROP_RATES]
#   e.g. scripts/exp-iperf3.sh build/rifl 5 "0 0.01"
#
# Environment: RATE_GBPS (lane rate, default 10), VETH_MTU (9000), TAP_MTU
# (9000), FPD (frames per datagram, default 16), RIFL_LINK_OPTS (more
# options for both `rifl link up`), PERF_SECONDS (when set, `perf record`
# samples both rifl ends for that many seconds of the 0% run through rifl0
# and the report's top lines go to stderr).
#
# Needs root, ip (iproute2), iptables, iperf3, ethtool, /dev/net/tun and
# python3; says what is missing.  Sends traffic only inside the namespaces
# it makes, runs each measurement for SECONDS (at most 60), and removes the
# namespaces, and with them the veth pair and the iptables rules, on every
# exit.
set -u
RIFL=${1:-build/rifl}
SECS=${2:-5}
DROPS=${3:-"0 0.01"}
RATE=${RATE_GBPS:-10}
VMTU=${VETH_MTU:-9000}
TMTU=${TAP_MTU:-9000}
FPD=${FPD:-16}
need() { echo "exp-iperf3: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || need "needs root (network namespaces, iptables, TAP devices)"
for t in ip iptables iperf3 ethtool python3; do
    command -v $t >/dev/null || need "needs $t (apt-get install iproute2 iptables iperf3 ethtool python3)"
done
[ -c /dev/net/tun ] || need "needs /dev/net/tun"
[ -x "$RIFL" ] || need "no rifl binary at $RIFL (build it, or give its path first)"
[ "$SECS" -ge 1 ] && [ "$SECS" -le 60 ] || need "SECONDS must be 1 to 60"
[ -z "${PERF_SECONDS:-}" ] || command -v perf >/dev/null || need "PERF_SECONDS needs perf (apt-get install linux-perf)"
RIFL=$(readlink -f "$RIFL")
. "$(dirname "$0")/netns-pair.sh"
netns_pair i 10.243 "$VMTU"

# the RIFL link, started after the plain runs (so that it takes no CPU
# from them)
start_rifl() {
    netns_rifl i itap0 10.244 --mtu "$TMTU" --rate-gbps "$RATE" --frames-per-datagram "$FPD"
}

# offloads that matter for bulk TCP, of the veth and the TAP device
offloads() { # namespace device
    ip netns exec "$1" ethtool -k "$2" | python3 -c '
import json, sys
keep = ("tx-checksumming", "scatter-gather", "tcp-segmentation-offload",
        "generic-segmentation-offload", "generic-receive-offload", "rx-checksumming")
d = {}
for l in sys.stdin:
    k, _, v = l.strip().partition(": ")
    if k in keep: d[k] = v.split()[0]
print(json.dumps(d))'
}
OFF_VETH=$(offloads "$A" "$VA")
OFF_TAP=null

ip netns exec "$B" iperf3 -s -D -I "$TMP/iperf3.pid" >/dev/null 2>&1 || need "iperf3 -s did not start"
sleep 0.5
PIDS="$PIDS $(cat "$TMP/iperf3.pid")"
cpu() { # utime + stime of both rifl ends, in clock ticks (0 before they run)
    [ -n "${PID_A:-}" ] || { echo 0; return; }
    awk '{ s += $14 + $15 } END { print s }' /proc/"$PID_A"/stat /proc/"$PID_B"/stat
}
TICK=$(getconf CLK_TCK)

status() { # SUFFIX: both ends' state into $TMP/s{a,b}SUFFIX.json ("null" before they run)
    for n in a b; do
        "$RIFL" link status --name i --state-dir "$TMP/$n" --json >"$TMP/s$n$1.json" 2>/dev/null ||
            echo null >"$TMP/s$n$1.json"
    done
}

run() { # path, server address, drop rate
    local c0 c1 mtu
    status 0
    c0=$(cpu)
    local t0=$(date +%s.%N)
    ip netns exec "$A" iperf3 -c "$2" -t "$SECS" -J >"$TMP/r.json" 2>"$TMP/r.err"
    local st=$?
    local t1=$(date +%s.%N)
    c1=$(cpu)
    [ "$1" = plain ] && mtu=$VMTU || mtu=$TMTU
    sleep 0.6 # the state files are written every 0.5 s
    status 1
    python3 - "$1" "$3" "$TMP/r.json" "$st" "$mtu" "$VMTU" "$(( c1 - c0 ))" "$TICK" "$t0" "$t1" \
        "$TMP/sa1.json" "$TMP/sb1.json" "$OFF_VETH" "$OFF_TAP" "$RATE" "$FPD" \
        "$TMP/sa0.json" "$TMP/sb0.json" <<'PY'
import json, sys
(path, drop, rfile, st, mtu, vmtu, ticks, tick, t0, t1, sa, sb, offv, offt, rate,
 fpd, sa0, sb0) = sys.argv[1:19]
o = {"path": path, "drop": float(drop), "tcp_mtu": int(mtu), "veth_mtu": int(vmtu)}
try:
    r = json.load(open(rfile))
    e = r["end"]
    o.update({"seconds": round(e["sum_received"]["seconds"], 2),
              "goodput_gbps": round(e["sum_received"]["bits_per_second"] / 1e9, 3),
              "tcp_retransmits": e["sum_sent"].get("retransmits"),
              "iperf3_cpu_percent": {"sender": round(e["cpu_utilization_percent"]["host_total"], 1),
                                     "receiver": round(e["cpu_utilization_percent"]["remote_total"], 1)}})
except Exception as x:
    o["error"] = "iperf3 exit %s: %s" % (st, x)
wall = float(t1) - float(t0)
o["offloads"] = {"veth": json.loads(offv), "tap": json.loads(offt)}
a, b = json.load(open(sa)), json.load(open(sb))
a0, b0 = json.load(open(sa0)), json.load(open(sb0))
if a and b and a0 and b0:
  # the counters of both ends over the measurement (and 0.6 s after it)
  d = lambda k: [a[k] - a0[k], b[k] - b0[k]]
  o["rifl_cpu_percent"] = round(100.0 * int(ticks) / int(tick) / wall, 1)   # both ends, of one core
  o["rifl"] = {"rate_gbps": float(rate), "frames_per_datagram": int(fpd),
               "fid_bits": a["fid_bits"], "rtt_us": a["rtt_us"],
               "replays": d("replays"), "datagrams_dropped": d("datagrams_dropped"),
               "frames_missing": d("frames_missing"), "verify_failures": d("verify_failures"),
               "send_failures": d("send_failures"), "slots": d("slots"),
               "window_stalls": d("window_stalls"), "schedule_resets": d("schedule_resets")}
print(json.dumps(o))
PY
}

for d in $DROPS; do
    netns_drop "$d"
    run plain 10.243.0.2 "$d"
done
netns_drop 0
sleep 1 # the plain runs' last segments drain first
start_rifl
OFF_TAP=$(offloads "$A" itap0)
for d in $DROPS; do
    netns_drop "$d"
    if [ -n "${PERF_SECONDS:-}" ] && [ "$d" = 0 ]; then
        perf record -q -o "$TMP/perf.data" -p "$PID_A,$PID_B" -- sleep "$PERF_SECONDS" \
            >/dev/null 2>&1 &
        PERF=$!
    fi
    run rifl 10.244.0.2 "$d"
    if [ -n "${PERF:-}" ]; then
        wait "$PERF"
        perf report -q -i "$TMP/perf.data" --no-children --sort symbol -g none 2>/dev/null |
            grep -v '^$' | head -40 >&2
        PERF=""
    fi
done
