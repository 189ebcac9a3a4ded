#!/usr/bin/env bash
# CLI tests of `rifl link bench --phy eth`: both ends of a lane over raw
# Ethernet across a veth pair the bench makes.  Without root the bench must
# refuse, saying root is needed; then (or without `ip`) the rest is skipped
# with status 77.  As root: a clean run and one with 1% datagram loss each
# way must be lossless (the lossy one with replays), datagrams larger than
# the veth's MTU are refused with the frames that fit, and no veth pair is
# left behind, neither after a run nor after the bench is stopped by
# SIGTERM.  Nothing here depends on the machine's speed.
# usage: cli_link_bench_eth.sh RIFL_BINARY [ignored...]
set -u
rifl=$1
. "$(dirname "$0")/check_counts.sh"

"$rifl" link bench --help | grep -q -- "--phy eth" && ok || bad "rifl link bench --help names --phy eth"

# the refusal without root: as the caller when not root, else as nobody
if [ "$(id -u)" -ne 0 ]; then
  "$rifl" link bench --phy eth --bytes 1k --requests 0 > "$tmp/r" 2>&1
  st=$?
  [ $st -eq 2 ] && grep -q "needs root" "$tmp/r" && ok || bad "not root: exit $st, $(cat "$tmp/r")"
  verdict || exit 1
  echo "skipped: the raw-Ethernet bench needs root (a veth pair, AF_PACKET sockets)"
  exit 77
fi
if command -v setpriv > /dev/null; then
  setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$rifl" link bench --phy eth --bytes 1k --requests 0 > "$tmp/r" 2>&1
  st=$?
  [ $st -eq 2 ] && grep -q "needs root" "$tmp/r" && ok || bad "as nobody: exit $st, $(cat "$tmp/r")"
fi
if ! command -v ip > /dev/null; then
  verdict || exit 1
  echo "skipped: the raw-Ethernet bench needs the ip command (Debian package iproute2)"
  exit 77
fi
command -v python3 > /dev/null && ok \
  || bad "python3 is missing; the JSON checks need it (scripts/install-deps.sh installs it)"

# the bench's veth pairs (rfb<pid>a, rfb<pid>b) present now
pairs() { ip -o link show 2> /dev/null | grep -o ' rfb[0-9]*[ab]@' | sort; }
before=$(pairs)
left_behind() {
  [ "$(pairs)" = "$before" ] && ok || bad "$1: veth interfaces left behind: $(pairs)"
}

# $1: JSON file, $2: label, $3: 1 when replays are required
check_run() {
  python3 - "$1" "$3" <<'PY' > "$tmp/why" 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
need_replays = sys.argv[2] == "1"
errs = []
if d.get("phy") != "eth":
    errs.append("phy %r" % d.get("phy"))
if d.get("lossless") is not True:
    errs.append("not lossless")
for k in ("a_to_b", "b_to_a"):
    if d[k]["bytes_checked"] != d["bytes"] or d[k]["packets_bad"] != 0:
        errs.append(k + ": " + str(d[k]))
r = d["rpc_us"]
if d["requests"] != 2000 or d["requests_bad"] != 0:
    errs.append("requests %d, bad %d" % (d["requests"], d["requests_bad"]))
if not (0 < r["min"] <= r["p50"] <= r["p99"] <= r["p999"] <= r["max"]):
    errs.append("rpc_us not ordered: " + str(r))
if not all(e["datagrams_sent"] > 0 and e["datagrams_received"] > 0 for e in d["ends"]):
    errs.append("datagrams: " + str(d["ends"]))
if need_replays and not (d["replays"] > 0 and d["dropped_datagrams"] > 0):
    errs.append("no replays or drops with loss: %d, %d" % (d["replays"], d["dropped_datagrams"]))
if not need_replays and (d["replays"] != 0 or d["dropped_datagrams"] != 0):
    errs.append("replays or drops without loss: %d, %d" % (d["replays"], d["dropped_datagrams"]))
print("; ".join(errs))
sys.exit(1 if errs else 0)
PY
  [ $? -eq 0 ] && ok || bad "$2: $(cat "$tmp/why")"
}

"$rifl" link bench --phy eth --bytes 2MB --requests 2000 --seed 5 --timeout 60 --json \
  > "$tmp/clean" 2> "$tmp/clean.err"
st=$?
if [ $st -eq 2 ] && grep -q "cannot make a veth pair" "$tmp/clean.err"; then
  cat "$tmp/clean.err"
  verdict || exit 1
  echo "skipped: no veth pair can be made here"
  exit 77
fi
[ $st -eq 0 ] && ok || bad "clean run: exit $st, $(cat "$tmp/clean.err")"
check_run "$tmp/clean" "clean run" 0
left_behind "clean run"

"$rifl" link bench --phy eth --bytes 2MB --requests 2000 --loss 0.01 --seed 7 --timeout 60 \
  --json > "$tmp/lossy" 2> "$tmp/lossy.err"
st=$?
[ $st -eq 0 ] && ok || bad "lossy run: exit $st, $(cat "$tmp/lossy.err")"
check_run "$tmp/lossy" "--loss 0.01" 1
left_behind "lossy run"

# the human summary names the veth pair
"$rifl" link bench --phy eth --bytes 200k --one-way --requests 10 --timeout 60 > "$tmp/text" 2>&1
st=$?
[ $st -eq 0 ] && grep -q "raw Ethernet over a veth pair" "$tmp/text" \
  && grep -q "lossless: yes" "$tmp/text" && ok || bad "text run: exit $st, $(cat "$tmp/text")"
left_behind "text run"

# 64 frames of 2048 bits (16404 bytes) do not fit the MTU of 9000
"$rifl" link bench --phy eth --frames-per-datagram 64 --frame-bits 2048 --rate-gbps 0.1 \
  --bytes 1k --requests 0 --timeout 20 > "$tmp/mtu" 2>&1
st=$?
[ $st -eq 2 ] && grep -q "use at most 35 frames per datagram" "$tmp/mtu" && ok \
  || bad "MTU: exit $st, $(cat "$tmp/mtu")"
left_behind "MTU refusal"

# stopped by SIGTERM in the middle of a run: the pair goes with it
"$rifl" link bench --phy eth --bytes 2GB --requests 0 --timeout 30 > "$tmp/killed" 2>&1 &
pid=$!
for _ in $(seq 100); do
  ip link show "rfb${pid}a" > /dev/null 2>&1 && break
  sleep 0.05
done
ip link show "rfb${pid}a" > /dev/null 2>&1 && ok || bad "no veth pair rfb${pid}a during the run"
kill -TERM $pid
wait $pid
st=$?
[ $st -ne 0 ] && ok || bad "the stopped bench exited 0"
ip link show "rfb${pid}a" > /dev/null 2>&1 && bad "rfb${pid}a left behind after SIGTERM" || ok
left_behind "SIGTERM"
verdict
