#!/bin/bash
# `rifl sim link --pcap` and the Wireshark dissector tools/wireshark/rifl.lua:
# tshark decodes every captured frame, and what it decodes agrees with the
# receiving lanes' own counters.
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
fields() {
    # HOME: tshark keeps its profile there; the test leaves the user's alone
    HOME="$TMP" tshark -X lua_script:"$LUA" -r "$1" -T fields -E separator=, -e eth.src \
        -e rifl.seq -e rifl.kind -e rifl.key -e rifl.id -e rifl.verify -e rifl.descrambled \
        -e rifl.frame_bits -e rifl.delivered -e rifl.fid_bits 2>"$TMP/tshark.err"
}

# an error-free run: every frame decodes, and the kinds and keys add up to
# what the receivers counted
"$RIFL" sim link --frames 4000 --pcap "$TMP/c0.pcap" --json >"$TMP/c0.json" 2>"$TMP/c0.err" ||
    bad "capture run exit $?"
grep -q "7886 frames captured" "$TMP/c0.err" || bad "frames captured: $(cat "$TMP/c0.err")"
fields "$TMP/c0.pcap" >"$TMP/c0.csv" || bad "tshark: $(cat "$TMP/tshark.err")"
python3 - "$TMP/c0.json" "$TMP/c0.csv" <<'PY' || bad "error-free capture decoded wrongly"
import collections, json, sys
j = json.load(open(sys.argv[1]))
rows = [l.rstrip("\n").split(",") for l in open(sys.argv[2])]
assert len(rows) == 7886, len(rows)
ok = True
for src, rx in (("02:52:46:00:00:0a", "lane_b"), ("02:52:46:00:00:0b", "lane_a")):
    r = [x for x in rows if x[0] == src]
    L = j[rx]
    c = collections.Counter((x[2], x[3]) for x in r)
    want = {("data", ""): L["rx_delivered_data"],
            ("filler", ""): L["rx_delivered_filler"] + 16,   # IDs 0..15 after reset
            ("control", "0x0001"): L["rx_key_idle"],
            ("control", "0x0010"): L["rx_key_pause"] + L["rx_not_aligned"]}
    if dict(c) != want:
        print(src, "decoded", dict(c), "lanes counted", want); ok = False
    # a control frame carries the sender's next frame ID, a data frame takes it
    for a, b in zip(r, r[1:]):
        ia, ib = int(a[4]), int(b[4])
        if ib != (ia if a[2] == "control" else (ia + 1) % 256):
            print(src, "IDs", a, b); ok = False; break
    # the receiver is followed from the second frame on: then every frame
    # verifies, and the frames it delivers are those the lane delivered
    if r[0][5] != "" or any(x[5] != "1" for x in r[1:]) or \
            [x[6] for x in r].count("0") != 1 or r[0][6] != "0":
        print(src, "verification or descrambling flags wrong"); ok = False
    delivered = sum(v for k, v in L.items() if k.startswith("rx_delivered_"))
    if sum(1 for x in r if x[8] == "1") != delivered:
        print(src, "delivered", sum(1 for x in r if x[8] == "1"), "lane", delivered); ok = False
    if any(x[7] != "256" for x in r) or [int(x[1]) for x in r] != list(range(57, 4000)):
        print(src, "headers wrong"); ok = False
sys.exit(0 if ok else 1)
PY

# a lossy run: damaged frames show, never more than the cable hit
"$RIFL" sim link --frames 20000 --ber 2e-5 --seed 3 --pcap "$TMP/c1.pcap" --json >"$TMP/c1.json" 2>/dev/null ||
    bad "lossy capture run exit $?"
fields "$TMP/c1.pcap" >"$TMP/c1.csv" || bad "tshark: $(cat "$TMP/tshark.err")"
python3 - "$TMP/c1.json" "$TMP/c1.csv" <<'PY' || bad "lossy capture decoded wrongly"
import json, sys
j = json.load(open(sys.argv[1]))
rows = [l.rstrip("\n").split(",") for l in open(sys.argv[2])]
ok = True
for i, (src, rx) in enumerate((("02:52:46:00:00:0a", "lane_b"), ("02:52:46:00:00:0b", "lane_a"))):
    r = [x for x in rows if x[0] == src]
    L = j[rx]
    # the dissector's receiver fails and delivers exactly the frames the
    # lane did, and learns K = 8 from the IDs' wrap
    fails = sum(1 for x in r if x[5] == "0")
    delivered = sum(1 for x in r if x[8] == "1")
    lane_delivered = sum(v for k, v in L.items() if k.startswith("rx_delivered_"))
    hit = j["frames_hit"][i]
    retx = sum(1 for x in r if x[3] == "0x1000")
    ks = set(x[9] for x in r if x[9])
    print(src, "fail", fails, "lane", L["rx_verify_fail"], "delivered", delivered, "lane",
          lane_delivered, "hit", hit, "RETRANSMIT", retx, "K", ks)
    if fails != L["rx_verify_fail"] or delivered != lane_delivered or not 0 < hit < fails or \
            retx == 0 or ks != {"8"}:
        ok = False
sys.exit(0 if ok else 1)
PY

# bad uses are refused with a reason
"$RIFL" sim link --frames 100 --pcap "$TMP/none/x.pcap" >/dev/null 2>"$TMP/e1" && bad "unwritable path accepted"
grep -q "cannot create the capture file" "$TMP/e1" || bad "unwritable path message: $(cat "$TMP/e1")"
"$RIFL" sim link --frames 100 --pcap "$TMP/x.pcap" --sweep ber=1e-6,1e-5 >/dev/null 2>"$TMP/e2" && bad "sweep with capture accepted"
grep -q "a capture is of one run" "$TMP/e2" || bad "sweep message: $(cat "$TMP/e2")"
"$RIFL" sim link --frames 100 --pcap "$TMP/p.pcap" --ppm 100 >/dev/null 2>"$TMP/e3" && bad "clock offset with capture accepted"
grep -q "drop --lanes, --serial and --ppm" "$TMP/e3" || bad "ppm message: $(cat "$TMP/e3")"

exit $fail
