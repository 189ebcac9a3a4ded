#!/usr/bin/env bash
# CLI tests of `rifl sim credit`.
# usage: cli_sim_credit.sh RIFL_BINARY VECTORS_DIR SOURCE_DIR
set -u
rifl=$1
. "$(dirname "$0")/check_counts.sh"

"$rifl" --help | grep -q "sim credit" && ok || bad "rifl --help lists sim credit"
"$rifl" sim credit --help | grep -q "usage: rifl sim credit" && ok || bad "--help"

# a lossy run: faults injected, no overflow, credit consistent, exit 0
"$rifl" sim credit --vls 4 --fcp-loss 0.2 --fcp-corrupt 0.1 --data-corrupt 0.005 \
  --jitter 300 --drain 0.3 --stall-on 40000 --stall-off 10000 --buffer 8KiB \
  --duration 1000000 --seed 7 > "$tmp/lossy.txt" && ok || bad "lossy run exit status"
grep -q "seed 7" "$tmp/lossy.txt" && ok || bad "the run prints its seed"
grep -q "overflow drops 0" "$tmp/lossy.txt" && ok || bad "no overflow"
grep -q "credit after drain: consistent" "$tmp/lossy.txt" && ok || bad "no credit leak"
grep -Eq "FCPs sent [0-9]+, lost [1-9]" "$tmp/lossy.txt" && ok || bad "FCPs were lost"

# a run estimated above a minute says so before it starts (stopped here
# after the warning); a short one does not
timeout 3 "$rifl" sim credit --mode lane-credit --duration 1000000000 > /dev/null 2> "$tmp/long.err"
rc=$?
[ "$rc" = 124 ] && grep -q "estimated to take about 5.6 min (lane mode" "$tmp/long.err" && ok \
  || bad "no estimate warning for a long lane run (exit $rc): $(cat "$tmp/long.err")"
timeout 3 "$rifl" sim credit --duration 100000000000 > /dev/null 2> "$tmp/long.err"
rc=$?
[ "$rc" = 124 ] && grep -q "estimated to take about 17 min (raw channel" "$tmp/long.err" && ok \
  || bad "no estimate warning for a long raw run (exit $rc): $(cat "$tmp/long.err")"
"$rifl" sim credit --duration 300000 2>&1 >/dev/null | grep -q warning && bad "a short run warned" || ok

# JSON output, deterministic for a seed
"$rifl" sim credit --json --duration 300000 --seed 3 > "$tmp/a.json" && ok || bad "json run"
"$rifl" sim credit --json --duration 300000 --seed 3 > "$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" && ok || bad "same seed, same result"
grep -q '"converged":true' "$tmp/a.json" && ok || bad "json converged"
"$rifl" sim credit --json --duration 300000 --seed 4 > "$tmp/c.json" && ok || bad "json run, seed 4"
cmp -s "$tmp/a.json" "$tmp/c.json" && bad "another seed, another run" || ok

# on/off mode with a small buffer drops; credit mode never does
"$rifl" sim credit --mode onoff --vls 1 --rtt 8000 --buffer 8KiB --stall-on 80000 \
  --stall-off 40000 --stall-fixed --duration 1000000 > "$tmp/onoff.txt" && ok || bad "onoff run"
grep -Eq "overflow drops [1-9]" "$tmp/onoff.txt" && ok || bad "on/off overflows"

# the JSON of one mode has the other mode's counts null
"$rifl" sim credit --json --mode onoff --duration 100000 | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["fcp_sent"] is None and d["leaked_blocks"] is None and d["converged"] is None, d
assert d["xoff"] is not None' && ok || bad "on/off JSON with credit counts"
"$rifl" sim credit --json --duration 100000 | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["xoff"] is None and d["xon"] is None and d["fcp_sent"] > 0, d' && ok || bad "credit JSON with on/off counts"

# max_gap: waiting for credit with data at the source is a gap; a VL's own
# stall is not, but being blocked behind another VL's stall (on/off) is
"$rifl" sim credit --vls 1 --rtt 100000 --buffer 4096 --min-len 2048 --max-len 2048 \
  --duration 2000000 --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["vl"][0]["max_gap"] > 90000, d["vl"][0]' && ok || bad "a VL starved of credit shows no gap"
"$rifl" sim credit --mode onoff --vls 2 --load 0.3 --hol-vl 1 --duration 2000000 --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
g = [v["max_gap"] for v in d["vl"]]
assert g[1] < 100000 and g[0] > 500000, g' && ok || bad "on/off gaps: stalled VL or blocked VL wrong"

# experiments whose points reach settings a mode cannot have say so per row
# (or search around them) and finish
"$rifl" sim credit --experiment curve --rtt 100000 --duration 200000 --stall-on 8 --stall-off 4 \
  --csv "$tmp/curve.csv" > "$tmp/curve.txt" 2> "$tmp/curve.err" && grep -q "^| 4.00 | refused | - | 0\." "$tmp/curve.txt" \
  && [ "$(grep -c . "$tmp/curve.csv")" -eq 17 ] && grep -q "4095" "$tmp/curve.err" && ok \
  || bad "curve beyond the credit limit: $(tail -2 "$tmp/curve.txt") $(cat "$tmp/curve.err")"
# buffers below one packet are raised to it: the rows say the buffer they ran
# with, once each
"$rifl" sim credit --experiment curve --rtt 2000 --duration 100000 --stall-on 8 --stall-off 4 \
  --csv "$tmp/raised.csv" > "$tmp/raised.txt" 2> "$tmp/raised.err" && python3 -c '
import sys
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith("#")]
x = [float(r[0]) for r in rows]
assert x[0] == 1.024 and x[1] == 1.25 and x[-1] == 4.0 and len(x) == 13, x' "$tmp/raised.csv" \
  && grep -q "^| 1.02 |" "$tmp/raised.txt" && grep -q "raised to 2048 bytes" "$tmp/raised.err" && ok \
  || bad "curve with buffers below --max-len: $(head -3 "$tmp/raised.csv") $(cat "$tmp/raised.err")"
"$rifl" sim credit --experiment buffer --chunk 128 --rtts 1000 --duration 100000 --stall-on 8 \
  --stall-off 4 --target 0.5 > "$tmp/buf.txt" 2>&1 && grep -q "^| 1000 | [0-9]" "$tmp/buf.txt" && ok \
  || bad "buffer search with 128-byte chunks: $(cat "$tmp/buf.txt")"

# head-of-line experiment: VL0 keeps its rate under credits, stops under on/off
"$rifl" sim credit --experiment hol --load 0.45 --duration 2000000 > "$tmp/hol.txt" \
  && ok || bad "hol experiment"
c=$(awk -F'|' '/^\| credit/{print $4}' "$tmp/hol.txt")
o=$(awk -F'|' '/^\| onoff/{print $4}' "$tmp/hol.txt")
awk -v c="$c" -v o="$o" 'BEGIN{exit !(c > 0.4 && o < 0.05)}' && ok \
  || bad "hol: credit VL0 $c, on/off VL0 $o"

# lanes: credit in FC_NONE mode, with bit errors, lossless
"$rifl" sim credit --mode lane-credit --duration 100000 --ber 1e-6 --load 0.4 \
  > "$tmp/lane.txt" && ok || bad "lane-credit exit status"
grep -q "lossless" "$tmp/lane.txt" && ok || bad "lane-credit lossless"
grep -q "code 0x04" "$tmp/lane.txt" && ok || bad "FCPs in extension frames 0x04"
"$rifl" sim credit --mode lane-onoff --duration 100000 > /dev/null && ok || bad "lane-onoff"

# errors name the problem
"$rifl" sim credit --mode bogus 2> "$tmp/e1.txt"; [ $? -eq 2 ] && ok || bad "bad mode exit 2"
grep -q "lane-credit" "$tmp/e1.txt" && ok || bad "bad mode lists the modes"
"$rifl" sim credit --buffer 1KiB --max-len 2048 2> "$tmp/e2.txt"; [ $? -eq 2 ] && ok || bad "small buffer refused"
grep -q "largest packet" "$tmp/e2.txt" && ok || bad "small buffer message"
"$rifl" sim credit --low "0:16" --vls 2 2> "$tmp/e3.txt"; [ $? -eq 2 ] && ok || bad "unreachable VL refused"
grep -q "VL1" "$tmp/e3.txt" && ok || bad "unreachable VL named"

# FCPs that would fill the link are refused (a run of them would never end)
"$rifl" sim credit --fcp-period 16 --vls 2 --duration 2000 2> "$tmp/e4.txt"; [ $? -eq 2 ] && ok || bad "FCP period 16 with 2 VLs"
grep -q "at least 17" "$tmp/e4.txt" && ok || bad "FCP period message: $(cat "$tmp/e4.txt")"
# a load so small that no packet comes: none offered, not a flood
"$rifl" sim credit --load 1e-300 --duration 1000 --json > "$tmp/tiny.json" &&
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert all(v['offered'] == 0 for v in d['vl']), d['vl']" "$tmp/tiny.json" && ok || bad "tiny load offered packets"
# a stall window that holds no slot is refused (its share would be 0/0),
# and the lane modes' JSON with a stall parses
"$rifl" sim credit --mode lane-credit --duration 1 --hol-vl 0 --json 2> "$tmp/e5.txt"; [ $? -eq 2 ] && ok || bad "empty stall window"
grep -q "holds none of them" "$tmp/e5.txt" && ok || bad "stall window message: $(cat "$tmp/e5.txt")"
"$rifl" sim credit --mode lane-credit --duration 2000 --hol-vl 0 --json > "$tmp/hol.json" &&
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert all('in_stall' in v for v in d['vl'])" "$tmp/hol.json" && ok || bad "lane-mode stall JSON"

# --config file
printf 'vls = 3\nduration = 200000\nseed = 9\n' > "$tmp/cfg"
"$rifl" sim credit --config "$tmp/cfg" | grep -q "3 VLs" && ok || bad "--config"

# a lane that makes no progress at a high BER: packets still on their way
# at the drain limit are said apart from lost ones, and the run fails
out=$("$rifl" sim credit --mode lane-credit --ber 3e-5 --vls 2 --max-len 4000 --duration 20000)
st=$?
[ "$st" = 1 ] && echo "$out" | grep -q "NOT DRAINED" && echo "$out" | grep -q "lower --ber" &&
  ! echo "$out" | grep -q "NOT LOSSLESS" && ok || bad "undrained run: status $st: $out"
"$rifl" sim credit --mode lane-credit --ber 3e-5 --vls 2 --max-len 4000 --duration 20000 --json |
  grep -q '"drained":false' && ok || bad "drained in the JSON"
"$rifl" sim credit --mode lane-credit --ber 1e-7 --vls 2 --duration 20000 --json |
  grep -q '"lossless":true.*"drained":true' && ok || bad "a clean run drained"

verdict
