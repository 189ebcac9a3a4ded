#!/usr/bin/env bash
# CLI tests of `rifl decode`, `rifl demo` and `rifl bench codec`.
# usage: cli_link.sh RIFL_BINARY SHARED_DIR SOURCE_DIR
set -u
rifl=$1 shared=$2
fail=0 pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --help on the tool and on each command
"$rifl" --help | grep -q "decode" && ok || bad "rifl --help lists decode"
for c in decode demo "bench codec"; do
  $rifl $c --help | grep -q "usage: rifl $c" && ok || bad "rifl $c --help"
done
"$rifl" nosuchcmd 2>/dev/null; [ $? -eq 2 ] && ok || bad "unknown command exits 2"
"$rifl" sim 2>&1 | grep -q "needs a subcommand" && ok || true

# decode: the recorded 512-bit scenario, JSON per frame and a summary
v=$shared/vectors/rifl/rifl512_fid7_ber1e-6
"$rifl" decode --json --frame-width 512 --frame-id-width 7 "$v/b_rx.frames" > "$tmp/d.json" \
  && ok || bad "decode --json exit status"
lines=$(grep -vc '^#' "$v/b_rx.frames")
[ "$(grep -c '"index"' "$tmp/d.json")" -eq "$lines" ] && ok || bad "one JSON object per frame"
tail -1 "$tmp/d.json" | grep -q '"frames": 15000' && ok || bad "summary frames"
tail -1 "$tmp/d.json" | grep -q '"verify_failures": 1766' && ok || bad "summary verify_failures"
want=$(awk '/^delivered_frames/{print $2}' "$v/params.txt")
got=$(tail -1 "$tmp/d.json" | sed 's/.*"delivered_frames": \([0-9]*\).*/\1/')
[ "$got" -ge "$want" ] && ok || bad "delivered_frames $got < $want"
for k in index kind frame_id meta payload_len verified delivered; do
  head -1 "$tmp/d.json" | grep -q "\"$k\"" && ok || bad "JSON key $k"
done
grep -q '"kind": "control", "frame_id": [0-9]*, "expected_id": [0-9]*, "key": ' "$tmp/d.json" \
  && ok || bad "control frames carry key"
# every line is JSON (python is optional on the machine)
if command -v python3 >/dev/null; then
  python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$tmp/d.json" \
    && ok || bad "decode output is valid JSON lines"
fi
# encode.vectors are accepted too (last field), and the sender's own stream
# never fails verification (check 3)
"$rifl" decode --quiet --frame-width 512 --frame-id-width 7 "$v/encode.vectors" \
  | grep -q " 0 failed verification" && ok || bad "sender stream decodes clean"
# text output from stdin
head -3 "$shared/vectors/rifl/rifl256_fid8_clean/b_rx.frames" | "$rifl" decode - | grep -q PAUSE \
  && ok || bad "decode from stdin"

# decode: bad input gets a clear error and exit status 2, never a crash
printf 'zz\n' > "$tmp/bad.txt"
"$rifl" decode "$tmp/bad.txt" 2> "$tmp/err" >/dev/null; st=$?
[ $st -eq 2 ] && grep -q "line 1" "$tmp/err" && ok || bad "bad hex line reported ($st)"
"$rifl" decode --frame-width 512 "$shared/vectors/rifl/rifl256_fid8_clean/b_rx.frames" 2> "$tmp/err" >/dev/null
grep -q "check --frame-width" "$tmp/err" && ok || bad "width mismatch hint"
"$rifl" decode --frame-width 300 x 2> "$tmp/err"; [ $? -eq 2 ] && grep -q "not supported" "$tmp/err" \
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
printf 'ber = 0\nslots = 200000 # short\n' > "$tmp/demo.conf"
"$rifl" demo --config "$tmp/demo.conf" --seed 5 --json | grep -q '"ber": 0, "slots": ' && ok || bad "config file"
printf 'bogus = 1\n' > "$tmp/bad.conf"
"$rifl" demo --config "$tmp/bad.conf" 2> "$tmp/err"; [ $? -eq 2 ] && grep -q "unknown setting 'bogus'" "$tmp/err" \
  && ok || bad "unknown config key"
"$rifl" demo --ber -1 2> "$tmp/err"; [ $? -eq 2 ] && grep -q "out of range" "$tmp/err" && ok || bad "negative BER"

# bench codec: JSON keys (short run)
"$rifl" bench codec --json --seconds 0.05 > "$tmp/b.json" && ok || bad "bench exit"
[ "$(grep -c '"frame_width"' "$tmp/b.json")" -eq 2 ] && ok || bad "bench: one object per width"
grep -q '"payload_gbps"' "$tmp/b.json" && grep -q '"memcpy_ratio"' "$tmp/b.json" && ok || bad "bench keys"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
