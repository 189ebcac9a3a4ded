#!/usr/bin/env bash
# CLI tests of `rifl demo`: the JSON result, start-up at every bit error
# rate up to 2e-3 on the demo's link, big packets, goodput over the slots
# simulated, and the exit status when a direction never delivers.
# usage: cli_demo.sh RIFL_BINARY [ignored...]
set -u
rifl=$1
. "$(dirname "$0")/check_counts.sh"

# value of a numeric key inside the object of direction $2 ("a_to_b", "b_to_a")
dir_value() { sed -n "s/.*\"$2\": {[^}]*\"$3\": \([-0-9.enul]*\).*/\1/p" "$1"; }
top_value() { sed -n "s/.*\"$2\": \([-0-9.a-z]*\).*/\1/p" "$1"; }

# JSON keys, both directions
"$rifl" demo --slots 300000 --ber 1e-6 --json > "$tmp/j" && ok || bad "demo exit status"
for d in a_to_b b_to_a; do
  for k in bytes_delivered startup_slots packets bytes_sent goodput_gbps replay_cycles; do
    v=$(dir_value "$tmp/j" $d $k)
    [ -n "$v" ] && [ "$v" != null ] && ok || bad "$d.$k missing or null: '$v'"
  done
  [ "$(dir_value "$tmp/j" $d bytes_delivered)" = "$(dir_value "$tmp/j" $d bytes_sent)" ] \
    && ok || bad "$d: delivered differs from sent"
done
[ "$(top_value "$tmp/j" lossless)" = true ] && ok || bad "lossless"

# the demo's link at every BER up to 2e-3: errors for 200,000 slots, then
# both directions deliver within 400,000 slots, losslessly
for ber in 1e-7 1e-6 1e-5 1e-4 1e-3 2e-3; do
  for seed in 1 31; do
    "$rifl" demo --ber $ber --seed $seed --slots 200000 --json > "$tmp/b" 2>&1
    st=$?
    [ $st -eq 0 ] && ok || bad "BER $ber seed $seed: exit $st"
    [ "$(top_value "$tmp/b" lossless)" = true ] && ok || bad "BER $ber seed $seed: not lossless"
    for d in a_to_b b_to_a; do
      s=$(dir_value "$tmp/b" $d startup_slots)
      case $s in
        ''|null|*[!0-9]*) bad "BER $ber seed $seed: $d startup_slots '$s'" ;;
        *) [ "$s" -le 400000 ] && ok || bad "BER $ber seed $seed: $d started at slot $s" ;;
      esac
    done
  done
done
# at a low BER the link starts at once: 2^K slots of INIT, 2^K start-up
# fillers, one way through the cable and a few slots of pipeline
"$rifl" demo --ber 1e-7 --slots 100000 --json > "$tmp/l"
for d in a_to_b b_to_a; do
  s=$(dir_value "$tmp/l" $d startup_slots)
  [ "$s" -gt 512 ] && [ "$s" -lt 700 ] && ok || bad "$d started at $s, expected 2 x 256 + 57 + a few"
done

# the seed and BER that used to hang the link
"$rifl" demo --ber 1e-3 --seed 31 --slots 400000 > "$tmp/h" && ok || bad "seed 31 at 1e-3"
grep -q "lossless: yes" "$tmp/h" && ok || bad "seed 31 at 1e-3 not lossless"

# packets larger than the transmit queue go through in parts
"$rifl" demo --max-packet 200000 --slots 200000 --json > "$tmp/m" && ok || bad "--max-packet 200000 exit"
for d in a_to_b b_to_a; do
  n=$(dir_value "$tmp/m" $d packets)
  [ "$n" -gt 5 ] && ok || bad "--max-packet 200000: $d sent only $n packets"
  [ "$(dir_value "$tmp/m" $d bytes_delivered)" = "$(dir_value "$tmp/m" $d bytes_sent)" ] \
    && ok || bad "--max-packet 200000: $d delivered differs from sent"
done
[ "$(top_value "$tmp/m" lossless)" = true ] && ok || bad "--max-packet 200000 lossless"

# goodput is over the slots simulated (errors and drain), never above the line
"$rifl" demo --slots 1000 --json > "$tmp/g" && ok || bad "--slots 1000 exit"
for d in a_to_b b_to_a; do
  g=$(dir_value "$tmp/g" $d goodput_gbps)
  awk -v g="$g" 'BEGIN { exit !(g > 0 && g <= 112) }' && ok || bad "$d goodput $g with --slots 1000"
done
[ "$(top_value "$tmp/g" slots)" -gt 1000 ] && ok || bad "slots reported should include the drain"

# a direction that never delivers: exit 1, startup_slots null, a message
"$rifl" demo --ber 1e-3 --slots 50000 --drain 0 --json > "$tmp/n"
st=$?
[ $st -eq 1 ] && ok || bad "never delivered: exit $st, expected 1"
[ "$(dir_value "$tmp/n" a_to_b startup_slots)" = null ] && ok || bad "never delivered: startup_slots not null"
[ "$(top_value "$tmp/n" lossless)" = false ] && ok || bad "never delivered: lossless should be false"
"$rifl" demo --ber 1e-3 --slots 50000 --drain 0 > "$tmp/n2"
grep -q "A -> B never delivered user data" "$tmp/n2" && ok || bad "never delivered: no message"
grep -q "not delivered when the run ended" "$tmp/n2" && ok || bad "never delivered: verdict"

# bad values name the option and exit 2
for a in "--frame-width 100" "--frame-width 4096" "--ber 0.7" "--ber nan" "--slots 0" \
         "--max-packet 0" "--max-packet 2000000" "--cable -1" "--drain -5" "--seed x"; do
  "$rifl" demo $a > /dev/null 2> "$tmp/e"
  st=$?
  opt=${a%% *}
  [ $st -eq 2 ] && grep -q -- "${opt#--}" "$tmp/e" && ok || bad "demo $a: exit $st, $(cat "$tmp/e")"
done
"$rifl" demo --cable 1000 > /dev/null 2> "$tmp/e"
[ $? -eq 2 ] && grep -q "too long" "$tmp/e" && grep -q -- "--cable" "$tmp/e" && ok \
  || bad "a cable too long for any K: $(cat "$tmp/e")"

verdict
