#!/usr/bin/env bash
# CLI tests of `rifl link bench --phy udp`: both ends of a lane over UDP on
# loopback, as two processes.  A small run without loss and one with 1%
# datagram loss each way must be lossless, the lossy one with replays; the
# request latencies must be there and ordered; bad options are refused with
# a message naming the option.  Nothing here depends on the machine's speed.
# usage: cli_link_bench.sh RIFL_BINARY [ignored...]
set -u
rifl=$1
. "$(dirname "$0")/check_counts.sh"
command -v python3 > /dev/null && ok \
  || bad "python3 is missing; the JSON checks need it (scripts/install-deps.sh installs it)"

"$rifl" link bench --help | grep -q "usage: rifl link bench" && ok || bad "rifl link bench --help"
"$rifl" link --help | grep -q "link bench" && ok || bad "rifl link --help lists bench"

# $1: JSON file, $2: label, $3: 1 when replays are required
check_run() {
  python3 - "$1" "$3" <<'PY' > "$tmp/why" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
need_replays = sys.argv[2] == "1"
errs = []
for k in ("goodput_gbps", "rtt_us", "replays", "lossless", "rpc_us", "dropped_datagrams",
          "verify_failures", "seeds", "fid_bits"):
    if k not in d:
        errs.append("no " + k)
if not errs:
    if d["lossless"] is not True:
        errs.append("not lossless")
    for k in ("a_to_b", "b_to_a"):
        if d[k]["bytes_checked"] != d["bytes"] or d[k]["packets_bad"] != 0:
            errs.append(k + ": " + str(d[k]))
    if not (d["goodput_gbps"] > 0 and d["rtt_us"] > 0):
        errs.append("goodput or rtt not positive")
    if not 1 <= d["fid_bits"] <= 11:
        errs.append("K %d" % d["fid_bits"])
    r = d["rpc_us"]
    if d["requests"] != 3000 or d["requests_bad"] != 0:
        errs.append("requests %d, bad %d" % (d["requests"], d["requests_bad"]))
    if not (0 < r["min"] <= r["p50"] <= r["p99"] <= r["p999"] <= r["max"]):
        errs.append("rpc_us not ordered: " + str(r))
    if need_replays and not (d["replays"] > 0 and d["dropped_datagrams"] > 0):
        errs.append("no replays or drops with loss: %d, %d" % (d["replays"], d["dropped_datagrams"]))
    if not need_replays and (d["replays"] != 0 or d["dropped_datagrams"] != 0):
        errs.append("replays or drops without loss: %d, %d" % (d["replays"], d["dropped_datagrams"]))
print("; ".join(errs))
sys.exit(1 if errs else 0)
PY
  [ $? -eq 0 ] && ok || bad "$2: $(cat "$tmp/why")"
}

"$rifl" link bench --phy udp --bytes 2MB --requests 3000 --seed 5 --timeout 60 --json \
  > "$tmp/clean" 2> "$tmp/clean.err"
st=$?
[ $st -eq 0 ] && ok || bad "clean run: exit $st, $(cat "$tmp/clean.err")"
check_run "$tmp/clean" "clean run" 0

"$rifl" link bench --phy udp --bytes 2MB --requests 3000 --loss 0.01 --seed 7 --timeout 60 \
  --json > "$tmp/lossy" 2> "$tmp/lossy.err"
st=$?
[ $st -eq 0 ] && ok || bad "lossy run: exit $st, $(cat "$tmp/lossy.err")"
check_run "$tmp/lossy" "--loss 0.01" 1

# one way, and the human summary
"$rifl" link bench --phy udp --bytes 500k --one-way --requests 100 --timeout 60 > "$tmp/text" 2>&1
st=$?
[ $st -eq 0 ] && grep -q "lossless: yes" "$tmp/text" && grep -q "A -> B" "$tmp/text" \
  && ! grep -q "B -> A" "$tmp/text" && grep -q "p999" "$tmp/text" && ok \
  || bad "one-way text run: exit $st, $(cat "$tmp/text")"

# refused: exit 2 and a message naming the option and the fix
refused() {
  local want=$1; shift
  "$rifl" link bench "$@" > "$tmp/r" 2>&1
  local st=$?
  [ $st -eq 2 ] && grep -q -- "$want" "$tmp/r" && ok || bad "link bench $*: exit $st, $(cat "$tmp/r")"
}
refused "use --phy udp" --bytes 1k
refused "use --phy udp" --phy tcp
refused "option --loss" --phy udp --loss 2
refused "option --frame-bits" --phy udp --frame-bits 100
refused "option --frames-per-datagram" --phy udp --frames-per-datagram 65
refused "unknown option" --phy udp --no-such-option
refused "without --pcap" --phy udp --pcap-frames 5 --bytes 1k
# a capture path with a quote stays valid JSON
"$rifl" link bench --phy udp --bytes 1000 --requests 1 --json --pcap "$tmp/a\"b.pcap" > "$tmp/q.json" 2>&1 \
  && python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["pcap"].endswith("a\"b.pcap")' "$tmp/q.json" \
  && ok || bad "a quoted capture path: $(cat "$tmp/q.json")"

# a stopped bench stops its two ends: none is left running
"$rifl" link bench --phy udp --bytes 20GB --requests 0 --timeout 30 > "$tmp/stop.out" 2>&1 &
bench=$!
kids=""
for _ in $(seq 50); do
  kids=$(pgrep -P "$bench" | tr '\n' ' ')
  [ "$(echo $kids | wc -w)" -eq 2 ] && break
  sleep 0.1
done
kill -TERM "$bench"
wait "$bench" 2>/dev/null
sleep 0.5
left=""
for k in $kids; do kill -0 "$k" 2>/dev/null && left="$left $k"; done
[ -n "$kids" ] && [ -z "$left" ] && ok || bad "ends left running after SIGTERM: '$left' of '$kids'"
for k in $left; do kill -9 "$k"; done

# a lane rate no K covers over the measured round trip: the ends say so
refused "lower the lane rate" --phy udp --rate-gbps 1000 --bytes 1k --requests 0 --timeout 20
verdict
