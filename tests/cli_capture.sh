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

# hand-made datagrams: tests/data/bad_count.frames (16 fillers, partial
# frames claiming 200 and 0 bytes, a full last frame) over raw Ethernet, the
# same as two datagrams and a probe in one UDP payload, and a datagram of
# version 9
python3 - "$SRC/tests/data/bad_count.frames" "$TMP/h.pcap" <<'PY' || bad "building the hand-made capture"
import struct, sys
frames = [bytes.fromhex(l.split()[-1]) for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
def dgram(seq, fr, version=1):
    return struct.pack(">2sBBHHIQ", b"RF", version, 8, len(fr), 0, 1, seq) + b"".join(fr)
probe = struct.pack(">2sBBHBBIQQII", b"RF", 1, 8, 0, 1, 0, 2, 7, 0, 0, 0)
eth = lambda t, p: b"\x02\x52\x46\x00\x00\x0b\x02\x52\x46\x00\x00\x0a" + struct.pack(">H", t) + p
def udp(p):
    u = struct.pack(">HHHH", 40000, 40001, 8 + len(p), 0) + p
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(u), 0, 0, 64, 17, 0, bytes([10, 0, 0, 1]),
                     bytes([10, 0, 0, 2]))
    return eth(0x0800, ip + u)
pkts = [eth(0x88B5, dgram(0, frames)), udp(dgram(0, frames[:10]) + dgram(10, frames[10:]) + probe),
        eth(0x88B5, dgram(19, frames[:1], version=9))]
with open(sys.argv[2], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i, p in enumerate(pkts):
        f.write(struct.pack("<IIII", i, 0, len(p), len(p)) + p)
PY
HOME="$TMP" tshark -X lua_script:"$LUA" -d udp.port==40001,rifl -r "$TMP/h.pcap" -T fields -E separator=';' \
    -E 'aggregator=#' -e frame.number -e rifl.kind -e rifl.valid_bytes -e rifl.verify -e rifl.probe.kind \
    -e _ws.expert.message >"$TMP/h.csv" 2>"$TMP/tshark.err" || bad "tshark: $(cat "$TMP/tshark.err")"
python3 - "$TMP/h.csv" <<'PY' || bad "hand-made capture decoded wrongly: $(cat "$TMP/h.csv")"
import sys
rows = [l.rstrip("\n").split(";") for l in open(sys.argv[1])]
ok = len(rows) == 3
for r in rows[:2]:
    kinds, valid, verify = r[1].split("#"), r[2].split("#"), r[3].split("#")
    # every frame decoded, the bad counts as a lane keeps them (29, 0),
    # each marked malformed; all but the first verify
    ok = ok and kinds == ["filler"] * 16 + ["data"] * 3 and valid[16:] == ["29", "0", "30"]
    ok = ok and r[5].count("Byte count of a partial frame") == 2 and verify == ["1"] * 18
ok = ok and rows[1][4] == "1" and "unknown version" in rows[2][5]
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
