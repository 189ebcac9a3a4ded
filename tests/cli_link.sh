#!/usr/bin/env bash
# CLI tests of `rifl decode`, `rifl demo` and `rifl bench codec`.
# usage: cli_link.sh RIFL_BINARY VECTORS_DIR SOURCE_DIR
# (VECTORS_DIR: the golden vectors, tests/vectors/rifl)
set -u
rifl=$1 vectors=$2 src=${3:-.}
. "$(dirname "$0")/check_counts.sh"
command -v python3 > /dev/null && ok \
  || bad "python3 is missing; the JSON checks need it (scripts/install-deps.sh installs it)"

# --help on the tool and on each command
"$rifl" --help | grep -q "decode" && ok || bad "rifl --help lists decode"
for c in decode demo "bench codec"; do
  $rifl $c --help | grep -q "usage: rifl $c" && ok || bad "rifl $c --help"
done
"$rifl" nosuchcmd 2>/dev/null; [ $? -eq 2 ] && ok || bad "unknown command exits 2"
"$rifl" sim > "$tmp/out" 2>&1; st=$?
[ $st -eq 2 ] && grep -q "needs a subcommand" "$tmp/out" && ok || bad "rifl sim alone: exit $st, $(head -1 "$tmp/out")"

# decode every recorded scenario: one JSON object per frame, the counts of
# params.txt, and the bytes of b_delivered.txt.  The recording stopped while
# the reference receiver still held frames, so rifl may deliver more after the
# last recorded line: at most one replay window, 2^K frames.
param() { awk -v k="$1" '$1 == k { print $2 }' "$2/params.txt"; }
nscen=0
for v in "$vectors"/*/; do
  v=${v%/} s=$(basename "$v")
  nscen=$((nscen + 1))
  fw=$(param frame_width "$v") k=$(param frame_id_width "$v")
  d=$tmp/$s.json
  "$rifl" decode --json --payload --frame-width "$fw" --frame-id-width "$k" "$v/b_rx.frames" \
    > "$d" && ok || bad "$s: decode --json exit status"
  [ "$(grep -c '"index"' "$d")" -eq "$(grep -vc '^#' "$v/b_rx.frames")" ] && ok \
    || bad "$s: one JSON object per frame"
  tail -1 "$d" | grep -q "\"frames\": $(param rx_frames "$v")," && ok || bad "$s: summary frames"
  tail -1 "$d" | grep -q "\"verify_failures\": $(param rx_frames_failing_verification "$v")," \
    && ok || bad "$s: summary verify_failures: $(tail -1 "$d")"
  python3 -c '
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("delivered") is True:
        print(int(o["eop"]), o["bytes"])' "$d" > "$tmp/got" && ok || bad "$s: delivered frames from the JSON"
  grep -v '^#' "$v/b_delivered.txt" > "$tmp/want"
  nwant=$(wc -l < "$tmp/want") ngot=$(wc -l < "$tmp/got")
  [ "$nwant" -eq "$(param delivered_frames "$v")" ] && ok || bad "$s: b_delivered.txt has $nwant lines"
  head -n "$nwant" "$tmp/got" | cmp -s - "$tmp/want" && ok \
    || bad "$s: delivered bytes differ from b_delivered.txt: $(head -n "$nwant" "$tmp/got" | diff - "$tmp/want" | head -3)"
  extra=$((ngot - nwant))
  [ "$extra" -ge 0 ] && [ "$extra" -le $((1 << k)) ] && ok \
    || bad "$s: $extra frames delivered beyond the recording (allowed 0 to 2^K = $((1 << k)))"
  tail -1 "$d" | grep -q "\"delivered_frames\": $ngot," && ok || bad "$s: summary delivered_frames"
done
[ "$nscen" -eq 4 ] && ok || bad "$nscen scenarios in $vectors, want 4"
v=$vectors/rifl512_fid7_ber1e-6 d=$tmp/rifl512_fid7_ber1e-6.json
for k in index kind frame_id meta payload_len verified delivered; do
  head -1 "$d" | grep -q "\"$k\"" && ok || bad "JSON key $k"
done
grep -q '"kind": "control", "frame_id": [0-9]*, "expected_id": [0-9]*, "key": ' "$d" \
  && ok || bad "control frames carry key"
# every line is JSON
python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$d" \
  && ok || bad "decode output is valid JSON lines"
# encode.vectors are accepted too (last field), and the sender's own stream
# never fails verification (check 3)
"$rifl" decode --quiet --frame-width 512 --frame-id-width 7 "$v/encode.vectors" \
  | grep -q " 0 failed verification" && ok || bad "sender stream decodes clean"
# text output from stdin
head -3 "$vectors/rifl256_fid8_clean/b_rx.frames" | "$rifl" decode - | grep -q PAUSE \
  && ok || bad "decode from stdin"

# decode: bad input gets a clear error and exit status 2, never a crash
printf 'zz\n' > "$tmp/bad.txt"
"$rifl" decode "$tmp/bad.txt" 2> "$tmp/err" >/dev/null; st=$?
[ $st -eq 2 ] && grep -q "line 1" "$tmp/err" && ok || bad "bad hex line reported ($st)"
"$rifl" decode --frame-width 512 "$vectors/rifl256_fid8_clean/b_rx.frames" 2> "$tmp/err" >/dev/null
grep -q "check --frame-width" "$tmp/err" && ok || bad "width mismatch hint"
"$rifl" decode --frame-width 300 x 2> "$tmp/err"; [ $? -eq 2 ] && grep -q -- "--frame-width: 300 bits is not a RIFL frame width" "$tmp/err" \
  && ok || bad "bad frame width"
"$rifl" decode --frame-id-width 13 x 2> "$tmp/err"; [ $? -eq 2 ] && ok || bad "bad K"
"$rifl" decode /nonexistent 2> "$tmp/err"; [ $? -eq 2 ] && grep -q "cannot open" "$tmp/err" \
  && ok || bad "missing file"
"$rifl" decode --bogus x 2> "$tmp/err"; [ $? -eq 2 ] && grep -q "unknown option" "$tmp/err" \
  && ok || bad "unknown option"

# demo: lossless with errors, JSON, reproducible, config file + override
"$rifl" demo --slots 300000 --ber 1e-6 --json > "$tmp/demo1.json" && ok || bad "demo exit"
grep -q '"lossless": true' "$tmp/demo1.json" && ok || bad "demo lossless"
grep -q '"replay_cycles": [1-9]' "$tmp/demo1.json" && ok || bad "demo had replays"
"$rifl" demo --slots 300000 --ber 1e-6 --json > "$tmp/demo2.json"
sed 's/"wall_s": [0-9.]*//' "$tmp/demo1.json" > "$tmp/a"; sed 's/"wall_s": [0-9.]*//' "$tmp/demo2.json" > "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" && ok || bad "demo reproducible for a seed"
printf 'ber = 0\nslots = 200000 # short\nseed = 9\n' > "$tmp/demo.conf"
"$rifl" demo --config "$tmp/demo.conf" --json > "$tmp/c1.json"
grep -q '"seed": 9, "ber": 0, "slots": 2[0-9]*, "error_slots": 200000,' "$tmp/c1.json" \
  && ok || bad "config file settings used"
"$rifl" demo --config "$tmp/demo.conf" --seed 5 --json > "$tmp/c2.json"
grep -q '"seed": 5, "ber": 0, ' "$tmp/c2.json" && ok || bad "command line overrides the config file"
printf 'bogus = 1\n' > "$tmp/bad.conf"
"$rifl" demo --config "$tmp/bad.conf" 2> "$tmp/err"; [ $? -eq 2 ] && grep -q "unknown setting 'bogus'" "$tmp/err" \
  && ok || bad "unknown config key"
"$rifl" demo --ber -1 2> "$tmp/err"; [ $? -eq 2 ] && grep -q "out of range" "$tmp/err" && ok || bad "negative BER"

# bench codec: JSON keys (short run)
"$rifl" bench codec --json --seconds 0.05 > "$tmp/b.json" && ok || bad "bench exit"
[ "$(grep -c '"frame_width"' "$tmp/b.json")" -eq 2 ] && ok || bad "bench: one object per width"
grep -q '"payload_gbps"' "$tmp/b.json" && grep -q '"memcpy_ratio"' "$tmp/b.json" && ok || bad "bench keys"
# the rounds (10 by default, or --rounds) and the spread around the median
[ "$(python3 -c 'import json,sys
rs=[json.loads(l) for l in open(sys.argv[1])]
print(all(r["rounds"] == int(sys.argv[2]) and
          0 < r["payload_gbps_min"] <= r["payload_gbps"] <= r["payload_gbps_max"] for r in rs))' \
  "$tmp/b.json" 10)" = True ] && ok || bad "bench: rounds, and min <= median <= max"
"$rifl" bench codec --json --seconds 0.05 --rounds 4 --widths 256 > "$tmp/b4.json" && ok || bad "bench --rounds 4 exit"
[ "$(python3 -c 'import json,sys
rs=[json.loads(l) for l in open(sys.argv[1])]
print(len(rs) == 1 and all(r["rounds"] == int(sys.argv[2]) and
          0 < r["payload_gbps_min"] <= r["payload_gbps"] <= r["payload_gbps_max"] for r in rs))' \
  "$tmp/b4.json" 4)" = True ] && ok || bad "bench --rounds 4: rounds, and min <= median <= max"
"$rifl" bench codec --seconds 0.05 --rounds 1 --widths 256 > "$tmp/b1.txt" && grep -q "^rounds: 1, " "$tmp/b1.txt" \
  && ok || bad "bench --rounds 1: the rounds named above the table"
for v in 0 1001; do
  "$rifl" bench codec --seconds 0.01 --rounds $v > "$tmp/out" 2> "$tmp/err"
  [ $? -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q "option --rounds.*out of range" "$tmp/err" \
    && ok || bad "bench --rounds $v refused"
done
# the path field: the one in use, every path the CPU runs with --all-paths, a
# forced one with --path or RIFL_CODEC_PATH, and an unknown one refused
inuse=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["path"])' "$tmp/b.json")
case $inuse in avx512|avx2|portable) ok ;; *) bad "bench path field: '$inuse'" ;; esac
"$rifl" bench codec --json --seconds 0.01 --widths 256 --all-paths > "$tmp/all.json" && ok || bad "bench --all-paths exit"
grep -q '"path": "portable"' "$tmp/all.json" && ok || bad "bench --all-paths has the portable path"
[ "$(python3 -c 'import json,sys; p=[json.loads(l)["path"] for l in open(sys.argv[1])]; print(len(p) == len(set(p)) and p[0] == sys.argv[2])' "$tmp/all.json" "$inuse")" = True ] \
  && ok || bad "bench --all-paths: the path in use first, each path once"
"$rifl" bench codec --json --seconds 0.01 --widths 256 --path portable | grep -q '"path": "portable"' \
  && ok || bad "bench --path portable"
RIFL_CODEC_PATH=portable "$rifl" bench codec --json --seconds 0.01 --widths 256 | grep -q '"path": "portable"' \
  && ok || bad "RIFL_CODEC_PATH=portable"
"$rifl" bench codec --seconds 0.01 --path sse9 2> "$tmp/err"; [ $? -eq 2 ] && grep -q "no codec path named 'sse9'" "$tmp/err" \
  && ok || bad "bench --path sse9 refused"

# a partial frame whose byte count is out of range (200, then 0, of 1..29)
# is delivered clamped, and decode says so per frame and in the summary
"$rifl" decode --json "$src/tests/data/bad_count.frames" > "$tmp/bc.json" && ok || bad "decode bad counts"
[ "$(grep -c '"bad_format": true' "$tmp/bc.json")" -eq 2 ] && grep -q '"index": 16,.*"bad_format": true' "$tmp/bc.json" \
  && tail -1 "$tmp/bc.json" | grep -q '"bad_format": 2,' && ok || bad "bad counts not reported: $(cat "$tmp/bc.json")"
"$rifl" decode "$src/tests/data/bad_count.frames" | grep -q "2 delivered data frames had a byte count out of range" \
  && ok || bad "decode summary lacks the bad counts"

verdict
