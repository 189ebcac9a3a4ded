#!/bin/bash
# Captures of Layer 2 traffic and flow control, read back with tshark and the
# Wireshark dissector tools/wireshark/rifl.lua: `rifl sim switch --pcap` (cell
# headers and per-VOQ flow-control frames on one host's link) and `rifl sim
# credit --pcap` (credit packets, FCPs, in extension frames).  What tshark
# decodes must agree with what the runs say they sent.
# $1: rifl binary, $2: golden vectors dir, $3: source dir.
set -u
RIFL=$1
SRC=$3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
for tool in tshark python3; do
    command -v $tool >/dev/null || { echo "FAIL: $tool is missing (scripts/install-deps.sh installs it)"; exit 1; }
done
LUA="$SRC/tools/wireshark/rifl.lua"
tsh() {
    # HOME: tshark keeps its profile there; the test leaves the user's alone
    HOME="$TMP" tshark -X lua_script:"$LUA" "$@" 2>"$TMP/tshark.err"
}

# --- a switch at full bursty load: cells both ways and flow control ---------
"$RIFL" sim switch --ports 8 --load 1 --traffic bursty --burst-bytes 20000 \
    --bytes-per-pair 200000 --pcap "$TMP/sw.pcap" --pcap-host 3 --pcap-slots 2000 \
    >"$TMP/sw.out" 2>"$TMP/sw.err" || bad "switch capture run exit $?: $(cat "$TMP/sw.err")"
tsh -o rifl.cells:TRUE -r "$TMP/sw.pcap" -T fields -E 'separator=|' -e eth.src -e rifl.kind \
    -e rifl.l2.total_hops -e rifl.l2.remain_hops -e rifl.l2.ports -e rifl.voq.on \
    -e rifl.voq.off -e rifl.verify >"$TMP/sw.csv" || bad "tshark: $(cat "$TMP/tshark.err")"
python3 - "$TMP/sw.err" "$TMP/sw.csv" <<'PY' || bad "switch capture decoded wrongly"
import re, sys
m = re.search(r"host 3's link: (\d+) cells up, (\d+) cells and (\d+) flow-control frames down",
              open(sys.argv[1]).read())
assert m, "no capture summary"
up, down, fc = map(int, m.groups())
assert up > 500 and down > 500 and fc > 10, (up, down, fc)
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[2])]
host, port = "02:52:46:00:00:0a", "02:52:46:00:00:0b"
ok = True
def check(cond, what):
    global ok
    if not cond:
        print(what); ok = False
# a cell's header heads its packet: one per cell, each way
hdr_up = [r for r in rows if r[0] == host and r[2] != ""]
hdr_down = [r for r in rows if r[0] == port and r[2] != ""]
check(len(hdr_up) == up, "cells up decoded %d, sent %d" % (len(hdr_up), up))
check(len(hdr_down) == down, "cells down decoded %d, sent %d" % (len(hdr_down), down))
for r in hdr_up:
    p = [int(x) for x in r[4].split(",")]
    # from the host: one hop to go, the relative output port first (8 ports: 0..6)
    if not (r[2] == "1" and r[3] == "1" and 0 <= p[0] <= 6 and p[1:] == [0, 0, 0, 0]):
        check(False, "header up %s" % r); break
for r in hdr_down:
    p = [int(x) for x in r[4].split(",")]
    # at the host: no hop left, the return index last
    if not (r[2] == "1" and r[3] == "0" and p[:4] == [0, 0, 0, 0] and 0 <= p[4] <= 6):
        check(False, "header down %s" % r); break
# the destinations the host sent to are spread over the other ports
check(len({r[4] for r in hdr_up}) == 7, "destinations up %s" % sorted({r[4] for r in hdr_up}))
vfc = [r for r in rows if r[1] == "voq_fc"]
check(len(vfc) == fc and all(r[0] == port for r in vfc), "flow-control frames %d, sent %d" % (len(vfc), fc))
for r in vfc:
    on, off = int(r[5]), int(r[6])
    if not (-1 <= on <= 7 and -1 <= off <= 7 and (on, off) != (-1, -1)):
        check(False, "flow-control frame %s" % r); break
# (the dissector follows each direction's receiver from its second frame)
for src in {r[0] for r in rows}:
    v = [r[7] for r in rows if r[0] == src]
    check(v[0] == "" and all(x == "1" for x in v[1:]),
          "a frame failed verification on an error-free link")
sys.exit(0 if ok else 1)
PY
# without the preference, no header is shown
tsh -r "$TMP/sw.pcap" -T fields -e rifl.l2.total_hops >"$TMP/nohdr.txt" || bad "tshark without cells"
[ -z "$(tr -d '\n' <"$TMP/nohdr.txt")" ] || bad "Layer 2 headers shown without rifl.cells"

# --- credits on two lanes: every FCP decodes, its LPCRC checks ----------------
"$RIFL" sim credit --mode lane-credit --duration 12000 --pcap "$TMP/cr.pcap" \
    --pcap-slots 1000000 --json >"$TMP/cr.json" 2>"$TMP/cr.err" ||
    bad "credit capture run exit $?: $(cat "$TMP/cr.err")"
tsh -r "$TMP/cr.pcap" -T fields -E separator=, -e eth.src -e rifl.kind -e rifl.fcp.op \
    -e rifl.fcp.vl -e rifl.fcp.fctbs -e rifl.fcp.fccl -e rifl.fcp.lpcrc_ok >"$TMP/cr.csv" ||
    bad "tshark: $(cat "$TMP/tshark.err")"
python3 - "$TMP/cr.json" "$TMP/cr.csv" <<'PY' || bad "credit capture decoded wrongly"
import json, sys
j = json.load(open(sys.argv[1]))
rows = [l.rstrip("\n").split(",") for l in open(sys.argv[2])]
fcps = [r for r in rows if r[1] == "fcp"]
ok = True
# every FCP handed to a lane arrived, but those still on the cable at the end
if not (j["fcp_sent"] - 64 <= len(fcps) <= j["fcp_sent"]) or len(fcps) < 50:
    print("FCPs decoded %d, sent %d" % (len(fcps), j["fcp_sent"])); ok = False
for r in fcps:
    if r[6] != "1" or r[2] not in ("0", "1") or not 0 <= int(r[3]) < j["vls"] or \
            not 0 <= int(r[4]) < 4096 or not 0 <= int(r[5]) < 4096:
        print("FCP", r); ok = False; break
# both ends send FCPs (the sender its blocks sent, the receiver its credit limit)
if len({r[0] for r in fcps}) != 2:
    print("FCPs from", {r[0] for r in fcps}); ok = False
if not any(r[2] == "1" for r in fcps):
    print("no initialising FCP"); ok = False
sys.exit(0 if ok else 1)
PY

# --- sim net: one host's link of a leaf-spine network, cells of one and
# three hops, per-VOQ flow control at high load ------------------------------
net=(sim net --topology leafspine:2x2x2 --load 1 --traffic bursty --time-us 10 --warmup-us 1 --json)
"$RIFL" "${net[@]}" >"$TMP/net0.json" 2>"$TMP/net0.err" || bad "sim net run: $(cat "$TMP/net0.err")"
"$RIFL" "${net[@]}" --pcap "$TMP/net.pcap" --pcap-host h1 --pcap-slots 1000000 >"$TMP/net1.json" \
    2>"$TMP/net.err" || bad "sim net capture run: $(cat "$TMP/net.err")"
# (idle_lane_slots counts the simulator's shortcuts, not a result: the
# watched link is never skipped)
cmp -s <(sed 's/"idle_lane_slots": [0-9]*//' "$TMP/net0.json") \
  <(sed 's/"idle_lane_slots": [0-9]*//' "$TMP/net1.json") ||
  bad "sim net: the capture changed the run's results"
tsh -o rifl.cells:TRUE -r "$TMP/net.pcap" -T fields -E 'separator=|' -e eth.src -e rifl.kind \
    -e rifl.l2.total_hops -e rifl.l2.remain_hops -e rifl.voq.on -e rifl.voq.off -e rifl.verify \
    >"$TMP/net.csv" || bad "tshark: $(cat "$TMP/tshark.err")"
python3 - "$TMP/net.err" "$TMP/net.csv" "$TMP/net1.json" <<'PY' || bad "sim net capture decoded wrongly"
import json, re, sys
m = re.search(r"NIC sent (\d+) cells and received (\d+)", open(sys.argv[1]).read())
assert m, "no capture summary"
sent, got = map(int, m.groups())
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[2])]
host, port = "02:52:46:00:00:0a", "02:52:46:00:00:0b"
up = [r for r in rows if r[0] == host and r[2] != ""]
down = [r for r in rows if r[0] == port and r[2] != ""]
ok = True
# every cell the NIC sent shows its header, but those still on their way at
# the end (in its lane's queue and on the wire: a few)
if not (sent - 8 <= len(up) <= sent): print("up", len(up), "sent", sent); ok = False
if not (got <= len(down) <= got + 8): print("down", len(down), "received", got); ok = False
# from the host: every hop to go (1 or 3 switches); at the host: none left
if any(r[2] not in ("1", "3") or r[3] != r[2] for r in up): print("bad header up"); ok = False
if any(r[2] not in ("1", "3") or r[3] != "0" for r in down): print("bad header down"); ok = False
if not {r[2] for r in up} == {"1", "3"}: print("hops up", {r[2] for r in up}); ok = False
vfc = [r for r in rows if r[1] == "voq_fc"]
if not vfc or any(r[0] != port for r in vfc): print("flow-control frames", len(vfc)); ok = False
for src in (host, port):
    v = [r[6] for r in rows if r[0] == src]
    if v[0] != "" or any(x != "1" for x in v[1:]): print("a frame failed verification"); ok = False
sys.exit(0 if ok else 1)
PY
"$RIFL" sim net --pcap "$TMP/x.pcap" --pcap-host leaf0 >/dev/null 2>"$TMP/e3" &&
    bad "a switch as --pcap-host accepted"
grep -q "not a host" "$TMP/e3" || bad "refusal: $(cat "$TMP/e3")"

# refusals
"$RIFL" sim switch --pcap "$TMP/x.pcap" --pcap-host 40 --ports 8 >/dev/null 2>"$TMP/e1" &&
    bad "host beyond the switch accepted"
grep -q "hosts 0 to 7" "$TMP/e1" || bad "refusal: $(cat "$TMP/e1")"
"$RIFL" sim credit --pcap "$TMP/x.pcap" >/dev/null 2>"$TMP/e2" && bad "raw-mode capture accepted"
grep -q "lane-credit" "$TMP/e2" || bad "refusal: $(cat "$TMP/e2")"
exit $fail
