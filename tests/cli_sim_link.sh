#!/bin/bash
# CLI tests of `rifl sim link`, `rifl calc` and `rifl plot`.
# $1: rifl binary, $2: golden vectors dir, $3: source dir.
set -u
RIFL=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# JSON summary with the required keys, lossless, seed printed
"$RIFL" sim link --ber 1e-6 --bytes 2MB --seed 5 --json >"$TMP/a.json" 2>"$TMP/a.err" || bad "json run exit $?"
grep -q "seed 5" "$TMP/a.err" || bad "seed not printed"
for k in goodput_gbps efficiency bandwidth_ratio lost duplicated reordered corrupted \
         latency_ns '"avg"' '"p50"' '"p99"' '"p999"' '"max"' tx_replay_cycles; do
    grep -q "$k" "$TMP/a.json" || bad "json lacks $k"
done
grep -q '"lossless": true' "$TMP/a.json" || bad "not lossless"
grep -q '"lost": 0, "duplicated": 0, "reordered": 0, "corrupted": 0' "$TMP/a.json" || bad "validator counts"
command -v python3 >/dev/null || bad "python3 is missing (scripts/install-deps.sh installs it)"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert 0.5 < d['bandwidth_ratio'] <= 1.0001, d['bandwidth_ratio']; assert d['latency_ns']['p99'] >= d['latency_ns']['p50'] > 0" "$TMP/a.json" || bad "json content"

# same seed, same results (wall time aside)
"$RIFL" sim link --ber 1e-6 --bytes 2MB --seed 5 --json >"$TMP/b.json" 2>/dev/null
sed 's/"wall_s": [0-9.]*//' "$TMP/a.json" >"$TMP/a2"; sed 's/"wall_s": [0-9.]*//' "$TMP/b.json" >"$TMP/b2"
cmp -s "$TMP/a2" "$TMP/b2" || bad "same seed gave different results"

# recoveries carried as counts (the default) or stepped give the same run
# (only the slot counts, the timing and the hits carried differ)
"$RIFL" sim link --ber 3e-7 --bytes 20MB --seed 3 --json >"$TMP/k1.json" 2>/dev/null || bad "carry run exit $?"
"$RIFL" sim link --ber 3e-7 --bytes 20MB --seed 3 --carry false --json >"$TMP/k2.json" 2>/dev/null || bad "no-carry run exit $?"
python3 - "$TMP/k1.json" "$TMP/k2.json" <<'PY' || bad "carrying changed the run"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["carried"] > 0 and b["carried"] == 0, (a["carried"], b["carried"])
for d in (a, b):
    for k in ("wall_s", "fast_slots", "ref_slots", "quiet_slots", "carried", "quiet_hits"):
        d.pop(k)
assert a == b
PY

# frames by content or by reference (the default) and every frame built give
# the same run (only the counts of slots and hits quiet runs took differ)
"$RIFL" sim link --ber 1e-5 --bytes 1MB --seed 5 --json >"$TMP/c.json" 2>/dev/null
"$RIFL" sim link --ber 1e-5 --bytes 1MB --seed 5 --json --encode-all >"$TMP/d.json" 2>/dev/null
grep -q '"ref_slots": [1-9]' "$TMP/c.json" || bad "no slots stepped by reference at BER 1e-5"
strip='s/"wall_s": [0-9.]*//; s/"ref_slots": [0-9]*//; s/"quiet_slots": [0-9]*//; s/"quiet_hits": [0-9]*//'
sed "$strip" "$TMP/c.json" >"$TMP/c2"; sed "$strip" "$TMP/d.json" >"$TMP/d2"
cmp -s "$TMP/c2" "$TMP/d2" || bad "--encode-all changed the results"
grep -q "\"frames_hit\": \[[1-9]" "$TMP/c.json" || bad "no frame hit at 1e-5"

# a link that carries next to nothing is refused with the bound to add,
# its share of the goodput in words, not a figure near zero
"$RIFL" sim link --ber 3e-3 --bytes 1MB >"$TMP/lossy.out" 2>&1 && bad "BER 3e-3 without --frames was run"
grep -q "carry next to none of its error-free goodput" "$TMP/lossy.out" || bad "lossy link: $(cat "$TMP/lossy.out")"
grep -q "add --frames N" "$TMP/lossy.out" || bad "lossy link: no bound named"
grep -qE "[0-9]e-[0-9]{3}" "$TMP/lossy.out" && bad "lossy link: a figure near zero printed"

# the run-time estimate, printed before the run (stopped after a second):
# quiet runs carry the Fig. 9 point at 1e-5 in about two minutes, slots
# stepped one at a time (a reader ready 60% of the slots) take longer
est_min() {
    timeout 1 "$RIFL" sim link --ber 1e-5 --bytes 10GB --reference false "$@" 2>&1 >/dev/null |
        sed -n 's/.*estimated to take about \([0-9.]*\) min.*/\1/p' | head -1
}
q=$(est_min); s=$(est_min --rx-ready 0.6)
if [ -z "$q" ] || [ -z "$s" ]; then bad "no run-time warning at BER 1e-5, 10 GB ('$q', '$s')"
else
    awk -v q="$q" -v s="$s" 'BEGIN { exit !(q >= 1 && q < 3 && s > 3 * q) }' ||
        bad "run-time estimates: $q min with quiet runs, $s min stepped"
fi

# human summary
"$RIFL" sim link --ber 1e-7 --bytes 1MB >"$TMP/h.txt" 2>/dev/null || bad "summary run"
grep -q "lossless: yes" "$TMP/h.txt" || bad "summary lacks verdict"
grep -q "seed: 1" "$TMP/h.txt" || bad "summary lacks seed"

# sweep to CSV: header + 3 points
"$RIFL" sim link --sweep ber=1e-7:1e-6:x10^0.5 --bytes 1MB --csv >"$TMP/s.csv" 2>/dev/null || bad "sweep exit"
[ "$(wc -l <"$TMP/s.csv")" = 4 ] || bad "sweep lines: $(wc -l <"$TMP/s.csv")"
head -1 "$TMP/s.csv" | grep -q '^ber,' || bad "csv header"
# swept values go out as applied: numbers, not what was typed
"$RIFL" sim link --bytes 100k --sweep 'frames=1k,0x800' --json >"$TMP/sw.json" 2>/dev/null || bad "sweep of frames"
python3 -c "import json,sys; v=[json.loads(l)['sweep']['frames'] for l in open(sys.argv[1])]; assert v == [1000, 2048], v" "$TMP/sw.json" || bad "swept values as typed"
# a sweep on the command line overrides the config file's value
printf 'ber = 1e-6\nbytes = 100k\n' >"$TMP/sw.conf"
"$RIFL" sim link --config "$TMP/sw.conf" --sweep 'ber=0,1e-9' --csv >"$TMP/sw.csv" 2>"$TMP/sw.err" || bad "sweep over a config value: $(cat "$TMP/sw.err")"
[ "$(cut -d, -f1 "$TMP/sw.csv" | tr '\n' ' ')" = "ber 0 1e-09 " ] || bad "sweep over a config value: $(cat "$TMP/sw.csv")"

# config file plus command-line override
printf 'ber = 1e-6\nbytes = 1MB\nsize = 64\n' >"$TMP/c.conf"
"$RIFL" sim link --config "$TMP/c.conf" --ber 0 --json >"$TMP/c.json" 2>/dev/null || bad "config run"
grep -q '"ber_ab": 0,' "$TMP/c.json" || bad "command line did not override the config file"
grep -q '"bit_errors": \[0, 0\]' "$TMP/c.json" || bad "errors with BER 0"

# refusals: clear message, exit status 2, no crash
expect_err() {
    local pat=$1; shift
    "$RIFL" "$@" >/dev/null 2>"$TMP/e.txt"
    local rc=$?
    [ $rc = 2 ] || bad "'$*' exit $rc"
    grep -q "$pat" "$TMP/e.txt" || bad "'$*' message: $(cat "$TMP/e.txt")"
}
expect_err "out of range" sim link --ber -1e-9
# (the largest seed in full, not rounded: 2^64 - 1)
expect_err "from 0 to 2^64 - 1\$" sim link --seed -5
expect_err "out of range; use a value from 0 to 2^64 - 1\$" sim link --seed 18446744073709551616
expect_err "smallest safe frame-ID width is 10" sim link --cable 200 --fid-bits 8
expect_err "too long for RIFL.*shorten the cable" sim link --cable 100000 --bytes 1KB
printf 'bogus_key = 3\n' >"$TMP/bad.conf"
expect_err "unknown setting 'bogus_key'" sim link --config "$TMP/bad.conf"
expect_err "not a sweep" sim link --sweep ber=1e-5:1e-7:x10
expect_err "packet size" sim link --size 0
expect_err "need serial lanes" sim link --slip-rate 1e-4 --bytes 1000
expect_err "not a bit offset" sim link --serial --bit-offset 3,x
# long bit offsets lengthen the round trip: the frame-ID width covers them,
# or a width too small for them is refused
for lanes in 1 2; do
  "$RIFL" sim link --lanes $lanes --serial --up-log2 12 --ber 1e-6 --bit-offset 20000 \
    --frames 20000 --json >"$TMP/off.json" 2>/dev/null || bad "bit offset 20000 ($lanes lanes) exit"
  python3 - "$TMP/off.json" <<'PY' || bad "bit offset 20000 on $lanes lane(s)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["fid_bits"] >= 9 and d["lossless"] is True, (d["fid_bits"], d["lossless"])
PY
done
expect_err "bit-offset.*smallest safe frame-ID width is 9" \
  sim link --serial --bit-offset 20000 --fid-bits 8 --frames 20000
expect_err "must cover 32 + RTT" sim link --serial --fid-bits 7 --cable 1

# serial lanes: the aligners find the frames, the lanes come up, nothing is
# lost across bit slips; the JSON says how
"$RIFL" sim link --serial --up-log2 12 --ber 1e-6 --slip-rate 2e-4 --bytes 2MB --seed 3 \
    --reference=no --json >"$TMP/s.json" 2>/dev/null || bad "serial run"
python3 - "$TMP/s.json" <<'PY' || bad "serial json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["serial"] is True and d["lossless"] is True and d["complete"] is True, d
assert d["startup_slots"] > 0 and len(d["aligner"]) == 2 and len(d["bit_offset"]) == 2
assert all(a["locks"] >= 1 for a in d["aligner"]), d["aligner"]
assert sum(d["slips"]) > 0 and sum(a["unlocks"] for a in d["aligner"]) > 0
assert d["lane_a"]["rx_align_lost"] == d["aligner"][1]["unlocks"]
r = d["slip_recovery"]
# every slip starts a recovery, joins one under way or is put back
assert r["bit_lost"]["count"] + r["bit_repeated"]["count"] + r["undone"] <= sum(d["slips"]), r
assert r["bit_lost"]["count"] + r["bit_repeated"]["count"] > 0, r
PY
"$RIFL" sim link --serial --up-log2 12 --bit-offset 5,250 --bytes 200kB --reference=no \
    --json >"$TMP/t.json" 2>/dev/null || bad "serial run with offsets"
grep -q '"bit_offset": \[5, 250\]' "$TMP/t.json" || bad "bit offsets not as given"
# bonded links: one object per lane, both directions; lanes share 112 Gbit/s
"$RIFL" sim link --lanes 4 --bonding temporal --ber 1e-7 --bytes 1MB --seed 2 --reference=no \
    --json >"$TMP/l.json" 2>/dev/null || bad "bonded run"
python3 - "$TMP/l.json" <<'PY' || bad "bonded json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["lossless"] and d["complete"] and d["group_lanes"] == 1 and d["lane_rate_gbps"] == 28
assert len(d["lanes"]) == 4 and all("a_to_b" in l and "b_to_a" in l for l in d["lanes"])
assert sum(l["a_to_b"]["data_frames"] for l in d["lanes"]) == d["lane_a"]["tx_frames_data"]
assert d["bond_a"]["tx_words"] == d["bond_b"]["rx_words"]
PY
"$RIFL" sim link --lanes 4 --serial --up-log2 12 --slip-rate 1e-4 --bytes 500kB --reference=no \
    --json >"$TMP/m.json" 2>/dev/null || bad "bonded serial run"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['lossless'] and d['startup_slots'] > 0 and len(d['lanes']) == 4 and d['group_lanes'] == 4" "$TMP/m.json" || bad "bonded serial json"
expect_err "not a bonding" sim link --lanes 4 --bonding diagonal
expect_err "beyond the tolerance" sim link --lanes 4 --ppm 300
expect_err "not a dead lane" sim link --lanes 4 --serial --dead-lane 2 --frames 100
expect_err "needs serial lanes" sim link --lanes 4 --dead-lane 2@10 --frames 100
expect_err "not a dead lane" sim link --lanes 4 --serial --dead-lane 1@-1 --frames 100
expect_err "not a dead lane" sim link --lanes 4 --serial --dead-lane 1@99999999999999999999999 --frames 100
expect_err "lane 5 cannot die on a link of 4 lanes" sim link --lanes 4 --serial --dead-lane 5@100 --frames 100
expect_err "gives 3 values for a link of 2 lanes" sim link --lanes 2 --skew-bits 0,0,5000 --frames 100
expect_err "gives 4 values for a link of 2 lanes" sim link --lanes 2 --skew-bits 0,0,0,0 --frames 100
expect_err "gives 2 values for a link of 4 lanes" sim link --lanes 4 --skew-bits 0,0 --frames 100
expect_err "bonding spatial means groups of 4 lanes, --group-lanes asks for 2" \
  sim link --lanes 4 --group-lanes 2 --bonding spatial --frames 100
expect_err "crossed lanes" sim link --lanes 4 --swap-lanes 1,2
"$RIFL" sim link --lanes 4 --serial --lane-tags --up-log2 12 --swap-lanes 0,3 --frames 15000 \
    --reference=no --json >"$TMP/g.json" 2>/dev/null || bad "lane tags run"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['packets'] == [0, 0] and d['corrupted'] == 0 and d['lanes'][0]['a_to_b']['lane_swap'] >= 1 and d['lanes'][3]['b_to_a']['lane_swap'] >= 1 and [l['a_to_b']['peer_lane'] for l in d['lanes']] == [3, 1, 2, 0] and d['lanes'][0]['b_to_a']['peer_lanes'] == 4, d['lanes']" "$TMP/g.json" || bad "lane tags did not stop a swapped link"
"$RIFL" sim link --lanes 4 --serial --lane-tags --up-log2 12 --swap-lanes 0,3 --frames 15000 \
    --reference=no 2>/dev/null | grep -q "lane swap: end B's local lane 3 receives peer lane 0" \
    || bad "the summary does not name a swapped lane's peer"
"$RIFL" sim link --lanes 4 --serial --up-log2 12 --bit-offset 10 --dead-lane 1@6000 \
    --frames 12000 --reference=no --json >"$TMP/f.json" 2>/dev/null || bad "dead lane run"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); l=d['lanes'][1]; assert l['a_to_b']['lane_down'] >= 1 and l['b_to_a']['lane_down'] >= 1 and d['corrupted'] == 0, l" "$TMP/f.json" || bad "dead lane not reported"
# an rx_up longer than the reference's keeps the spec's 2^20-word window:
# lane 0 up since slot ~1.05M, lane 1 dead at 1.1M, told by 1.4M
"$RIFL" sim link --lanes 2 --serial --up-log2 22 --bytes 0 --frames 1400000 \
    --dead-lane 1@1100000 --reference=no --json >"$TMP/f22.json" 2>/dev/null || bad "long rx_up run"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); l=d['lanes'][1]; assert l['a_to_b']['lane_down'] == 1 and l['b_to_a']['lane_down'] == 1, l" "$TMP/f22.json" || bad "dead lane not told after 2^20 words"
# healthy lanes that lock thousands of words apart at start-up (random
# offsets, the short rx_up): none reported down
"$RIFL" sim link --lanes 4 --serial --up-log2 12 --frames 20000 --reference=no --json \
    >"$TMP/h4.json" 2>/dev/null || bad "healthy serial run"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); n=sum(l[w]['lane_down'] for l in d['lanes'] for w in ('a_to_b', 'b_to_a')); assert n == 0, n" "$TMP/h4.json" || bad "a healthy lane reported down"
# clock offsets: the faster end compensates at about ppm / 10^6 of its slots
"$RIFL" sim link --lanes 4 --ppm 200 --ber 1e-7 --bytes 20MB --json >"$TMP/p.json" 2>/dev/null \
    || bad "ppm run"
python3 - "$TMP/p.json" <<'PY' || bad "ppm json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["lossless"] and d["ppm"] == 200 and d["comp_requests"][1] <= 3, d["comp_requests"]
frac = d["lane_a"]["tx_clock_comp"] / d["lane_a"]["tx_slots"]
assert abs(frac - 2e-4) < 2e-5, frac
assert d["bandwidth_ratio"] >= 0.9, d["bandwidth_ratio"]
PY
expect_err "not a whole number" sim link --lanes 4 --skew-bits 0,17,0,0
# a run that delivers nothing gives no latency (not 0 ns)
"$RIFL" sim link --frames 50 >"$TMP/nd.txt" 2>&1
grep -q "^latency: no packet was delivered" "$TMP/nd.txt" && ! grep -q "^latency (ns)" "$TMP/nd.txt" \
    || bad "latency of a run that delivered nothing: $(grep latency "$TMP/nd.txt")"
"$RIFL" sim link --frames 50 --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["latency_ns"] is None and d["latency_last_frame_ns"] is None, d' \
    || bad "JSON latency of a run that delivered nothing is not null"
"$RIFL" sim link --frames 50 --csv 2>/dev/null | python3 -c '
import csv, sys
r = next(csv.DictReader(sys.stdin))
assert r["lat_p99_ns"] == "" and r["last_max_ns"] == "", r
assert r["stalled"] == "0" and r["complete"] == "0", r' \
    || bad "CSV latency of a run that delivered nothing is not empty"
# the start-up line names every lane, and why they never came up
"$RIFL" sim link --lanes 4 --serial --up-log2 12 --bytes 100kB >"$TMP/su.txt" 2>&1
grep -q "^start-up: all 4 lanes of both ends up after [0-9]* slots" "$TMP/su.txt" \
    || bad "start-up line of 4 lanes: $(grep start-up "$TMP/su.txt")"
"$RIFL" sim link --lanes 4 --serial --up-log2 12 --dead-lane 1@0 --frames 20000 >"$TMP/su.txt" 2>&1
grep -q "never came up: lane 1 was dead from the start" "$TMP/su.txt" \
    || bad "start-up line with a lane dead from the start: $(grep start-up "$TMP/su.txt")"
"$RIFL" sim link --lanes 4 --serial --up-log2 12 --frames 2000 >"$TMP/su.txt" 2>&1
grep "^start-up" "$TMP/su.txt" | grep -q "in 2000 slots" && ! grep -q "use --up-log2 12" "$TMP/su.txt" \
    || bad "start-up line of a short run with --up-log2 12: $(grep start-up "$TMP/su.txt")"
expect_err "too large" sim link --lanes 4 --skew-bits 0,256,25600,0 --rx-buffer 250
expect_err "not a list of skews" sim link --lanes 4 --skew-bits 0,x
"$RIFL" sim link --lanes 4 --serial --up-log2 12 --skew-bits 0,1000,2560,77 --bytes 500kB \
    --reference=no --json >"$TMP/k.json" 2>/dev/null || bad "skewed run"
grep -q '"lossless": true' "$TMP/k.json" || bad "skewed run not lossless"
expect_err "need a bonded link" sim link --group-lanes 2
# settings that would change nothing are refused
expect_err "hold has no effect without serial lanes" sim link --frames 100 --hold 0
expect_err "up-log2 has no effect without serial lanes" sim link --frames 100 --up-log2 12
expect_err "bonding has no effect on one lane" sim link --frames 100 --bonding temporal
expect_err "pcap-slots has no effect without --pcap" sim link --frames 100 --pcap-slots 5
expect_err "jobs has no effect without --sweep" sim link --frames 100 --jobs 4
expect_err "carry has no effect with --fast false" sim link --frames 100 --fast false --carry true

# each aligner ends on its line's offset: slides (mod F) = bit offset
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert [a['slides'] % 256 for a in d['aligner']] == [5, 250], d['aligner']" "$TMP/t.json" || bad "aligners did not end on the bit offsets"
expect_err "needs one of" calc

# calc reproduces the paper's tables
"$RIFL" calc table3 --csv | grep -q '^256,12,0.937500' || bad "table3"
"$RIFL" calc table2 --csv | grep -q '^128,9,8,4,' || bad "table2"

# plot (gnuplot is a test dependency: scripts/install-deps.sh installs it)
command -v gnuplot >/dev/null || bad "gnuplot is missing (scripts/install-deps.sh installs gnuplot-nox)"
"$RIFL" plot "$TMP/s.csv" --x ber --y bandwidth_ratio --logx --out "$TMP/p.png" 2>/dev/null || bad "plot"
[ -s "$TMP/p.png" ] || bad "no png"
expect_err "no column" plot "$TMP/s.csv" --y nothing --out "$TMP/q.png"
exit $fail
