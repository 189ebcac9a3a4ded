#!/bin/bash
# --pcap on a real link: `rifl link bench --phy udp` (loopback, no root) with
# end A capturing what it sends and receives, and two `rifl link up` on
# loopback with one capturing; tshark with tools/wireshark/rifl.lua decodes
# every record, and what it decodes agrees with the ends' own counters.
# Skipped (exit 77) without tshark (scripts/install-deps.sh installs it).
# $1: rifl binary, $2: golden vectors dir, $3: source dir.
set -u
RIFL=$1
SRC=$3
command -v tshark >/dev/null || { echo "SKIP: needs tshark to read the captures (Debian: tshark; scripts/install-deps.sh installs it)"; exit 77; }
command -v python3 >/dev/null || { echo "FAIL: python3 is missing (scripts/install-deps.sh installs it)"; exit 1; }
TMP=$(mktemp -d)
PIDS=""
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
LUA="$SRC/tools/wireshark/rifl.lua"
fields() { # fields PCAP K
    # HOME: tshark keeps its profile there; the test leaves the user's alone
    HOME="$TMP" tshark -X lua_script:"$LUA" -o "rifl.fid_bits:$2" -r "$1" -T fields \
        -E separator=, -e eth.src -e rifl.epoch -e rifl.seq -e rifl.kind -e rifl.key \
        -e rifl.verify -e rifl.descrambled -e rifl.frame_bits 2>"$TMP/tshark.err"
}

# a lane rate of 0.25 Gbit/s: at it 11 frame-ID bits cover round trips up to
# 7.7 ms, which the probes of a loaded machine can measure (4.1 ms seen with
# the sanitizer build and the tests run in parallel; 1 Gbit/s covers 1.9)
# the bench: every frame end A sent and got, checked against its counters
"$RIFL" link bench --phy udp --rate-gbps 0.25 --bytes 300KB --requests 50 --pcap "$TMP/b.pcap" --json \
    >"$TMP/b.json" 2>"$TMP/b.err" || bad "bench with --pcap: exit $? $(cat "$TMP/b.err")"
K=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fid_bits"])' "$TMP/b.json")
fields "$TMP/b.pcap" "$K" >"$TMP/b.csv" || bad "tshark: $(cat "$TMP/tshark.err")"
python3 - "$TMP/b.json" "$TMP/b.csv" <<'PY' || bad "the bench's capture disagrees with its counters"
import collections, json, sys
j = json.load(open(sys.argv[1]))
rows = [l.rstrip("\n").split(",") for l in open(sys.argv[2])]
A, B = j["ends"]
ok = True
def want(cond, what):
    global ok
    if not cond:
        print(what); ok = False
sent = [r for r in rows if r[0] == "02:52:46:00:00:0a"]
got = [r for r in rows if r[0] == "02:52:46:00:00:0b"]
want(len(rows) == A["captured_frames"] and A["capture_skipped"] == 0,
     "records %d, captured %d, skipped %d" % (len(rows), A["captured_frames"], A["capture_skipped"]))
want(len(sent) == A["slots"], "sent: %d records, %d slots" % (len(sent), A["slots"]))
want(len(got) == A["frames_received"], "received: %d records, %d frames" % (len(got), A["frames_received"]))
for name, r, epoch in (("sent", sent, A["epoch"]), ("received", got, B["epoch"])):
    want([int(x[2]) for x in r] == list(range(len(r))), name + ": sequence numbers not 0, 1, ...")
    want(all(int(x[1], 16) == epoch for x in r), name + ": epoch not the sender's")
    want(all(x[7] == "2048" for x in r), name + ": frame width")
# what A sent, kind by kind, against what its lane counted
c = collections.Counter((x[3], x[4]) for x in sent)
tx = A["tx_frames"]
for k in ("data", "filler", "fc_on", "fc_off", "ext"):
    want(tx[k] <= c[(k, "")] <= tx[k] + A["tx_replayed"], "sent %s: %d decoded, lane %d" % (k, c[(k, "")], tx[k]))
want(sum(c[(k, "")] for k in tx) == sum(tx.values()) + A["tx_replayed"], "sent data frames in all")
for key, n in (("0x0001", "tx_idle"), ("0x0010", "tx_pause"), ("0x1000", "tx_retransmit")):
    want(c[("control", key)] == A[n], "sent control %s: %d decoded, lane %d" % (key, c[("control", key)], A[n]))
# (the dissector follows a receiver of these frames from the second on)
want(sent[0][5] == "" and all(x[5] == "1" for x in sent[1:]), "a frame sent does not verify")
want([x[6] for x in sent].count("0") == 1 and sent[0][6] == "0", "descrambling of the frames sent")
# what A received: at least every data frame its lane delivered, at most
# what B sent
g = collections.Counter(x[3] for x in got if x[5] == "1")
want(A["rx_delivered_data"] <= g["data"] <= B["tx_frames"]["data"] + B["tx_replayed"],
     "received data: %d decoded, %d delivered" % (g["data"], A["rx_delivered_data"]))
print("bench: %d frames sent and %d received at A decoded; %d data sent, %d delivered" %
      (len(sent), len(got), c[("data", "")], A["rx_delivered_data"]))
sys.exit(0 if ok else 1)
PY
grep -q "^  capture: " <("$RIFL" link bench --phy udp --rate-gbps 0.25 --bytes 100KB --requests 0 --pcap "$TMP/t.pcap" \
    --pcap-frames 500 2>&1) || bad "the bench's text output names the capture"
# bounded: the first N frames only
"$RIFL" link bench --phy udp --rate-gbps 0.25 --bytes 300KB --requests 0 --pcap "$TMP/n.pcap" --pcap-frames 1000 \
    --json >"$TMP/n.json" 2>&1 || bad "bench with --pcap-frames: exit $?"
fields "$TMP/n.pcap" 11 >"$TMP/n.csv" || bad "tshark: $(cat "$TMP/tshark.err")"
python3 - "$TMP/n.json" "$TMP/n.csv" <<'PY' || bad "--pcap-frames"
import json, sys
A = json.load(open(sys.argv[1]))["ends"][0]
n = sum(1 for _ in open(sys.argv[2]))
sys.exit(0 if n == 1000 == A["captured_frames"] and A["capture_skipped"] > 0 else
         print("records", n, A["captured_frames"], A["capture_skipped"]) or 1)
PY

# rifl link up: two ends on loopback for 2 s, A capturing
. "$(dirname "$0")/free_udp_ports.sh"
free_udp_ports
mkdir -p "$TMP/sa" "$TMP/sb"
"$RIFL" link up --phy udp --local 127.0.0.1:"$PA" --remote 127.0.0.1:"$PB" --name c --rate-gbps 0.25 \
    --state-dir "$TMP/sa" --quiet --duration-s 2 --pcap "$TMP/u.pcap" 2>"$TMP/ua.err" &
PIDS="$!"
"$RIFL" link up --phy udp --local 127.0.0.1:"$PB" --remote 127.0.0.1:"$PA" --name c --rate-gbps 0.25 \
    --state-dir "$TMP/sb" --quiet --duration-s 3 2>"$TMP/ub.err" &
PIDS="$PIDS $!"
wait
PIDS=""
N=$(sed -n 's/.* \([0-9]*\) frames captured in .*/\1/p' "$TMP/ua.err")
[ -n "$N" ] && [ "$N" -gt 0 ] || bad "link up's capture message: $(cat "$TMP/ua.err")"
K=$(sed -n 's/.*, K=\([0-9]*\),.*/\1/p' "$TMP/ua.err")
fields "$TMP/u.pcap" "${K:-8}" >"$TMP/u.csv" || bad "tshark: $(cat "$TMP/tshark.err")"
python3 - "$TMP/u.csv" "${N:-0}" <<'PY' || bad "link up's capture"
import sys
rows = [l.rstrip("\n").split(",") for l in open(sys.argv[1])]
sent = [r for r in rows if r[0] == "02:52:46:00:00:0a"]
got = [r for r in rows if r[0] == "02:52:46:00:00:0b"]
ok = len(rows) == int(sys.argv[2]) and sent and got
for r in (sent, got):
    ok = ok and [int(x[2]) for x in r] == list(range(len(r))) and r[0][5] == "" and \
        all(x[5] == "1" for x in r[1:])
    ok = ok and len(set(x[1] for x in r)) == 1
ok = ok and sent[0][1] != got[0][1]
print("link up: %d frames sent and %d received decoded (%s)" % (len(sent), len(got), "ok" if ok else "WRONG"))
sys.exit(0 if ok else 1)
PY

# bad uses are refused with a reason
"$RIFL" link bench --phy udp --rate-gbps 0.25 --bytes 10KB --requests 0 --pcap "$TMP/none/x.pcap" >/dev/null 2>"$TMP/e1" &&
    bad "unwritable capture path accepted by the bench"
# (refused as an option before the ends start, not by end A once both are up)
grep -q "option --pcap: cannot create the capture file" "$TMP/e1" || bad "bench message: $(cat "$TMP/e1")"
"$RIFL" link up --phy udp --local 127.0.0.1:"$PA" --remote 127.0.0.1:"$PB" --name c2 \
    --state-dir "$TMP/sa" --pcap "$TMP/none/x.pcap" 2>"$TMP/e2" && bad "unwritable capture path accepted by link up"
grep -q "cannot create the capture file" "$TMP/e2" || bad "link up message: $(cat "$TMP/e2")"
exit $fail
