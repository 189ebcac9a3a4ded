#!/usr/bin/env bash
# Table-driven test of every option of every `rifl` subcommand.
#
# Generic rows come from each command's --help, so a new option is covered
# without editing this file: every numeric option must show its range, and
# gets a negative number, zero, a huge number, NaN, infinity, a fraction, a
# word and an empty value, on the command line and (a word) from a --config
# file; flags and strings get bad or empty values.  Hand-written rows follow
# for the specific cases (output paths, conflicting options, sweeps, lists,
# file contents, run-time limits).
#
# Every case must end either refused exit status 2, the option named on
# stderr (FILE:LINE for a config file), nothing on stdout -- or run with sane
# output: exit 0 (or 1, a run whose verdict is negative), no nan/inf where a
# number belongs, no wrapped number, no sanitizer report, no hang (each call
# has a timeout).  The script prints the number of cases at the end.
#
# usage: cli_options.sh RIFL_BINARY VECTORS_DIR SOURCE_DIR (VECTORS_DIR unused)
set -u
rifl=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "${3:-.}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" # files named by bad values land here
limit=${RIFL_CLI_TIMEOUT:-60}
cases=0 failed=0
out=$tmp/out err=$tmp/err

fail() {
  failed=$((failed + 1))
  echo "FAIL: $*"
  sed 's/^/    stderr: /' "$err" | head -4
  head -c 400 "$out" | sed 's/^/    stdout: /' | head -4
}

invoke() { timeout -k 5 "$limit" "$rifl" "$@" > "$out" 2> "$err"; rc=$?; }

# the plot rows need gnuplot, which `make test` installs
if ! command -v gnuplot > /dev/null; then
  echo "FAIL: gnuplot is missing (Debian package gnuplot-nox; scripts/install-deps.sh installs it)"
  failed=$((failed + 1))
fi

# why the output is not sane, or nothing
insane() {
  why=
  if grep -Eiq '(^|[^a-z0-9_])[-+]?(nan|inf|infinity)([^a-z0-9_]|$)' "$out"; then
    why="nan or inf in the output"
  elif grep -Eq '(^|[^0-9])(18446744073[0-9]{9}|42949672[89][0-9])([^0-9]|$)' "$out" "$err"; then
    why="a wrapped number in the output"
  elif grep -Eq 'runtime error|AddressSanitizer|LeakSanitizer|Segmentation' "$err"; then
    why="a crash or sanitizer report"
  fi
  [ -n "$why" ]
}

# refused PATTERN ARGS...: exit 2, stderr matches PATTERN (the option), stdout empty
refused() {
  local pat=$1
  shift
  cases=$((cases + 1))
  invoke "$@"
  if [ "$rc" -ne 2 ]; then fail "rifl $*: exit $rc, want 2"
  elif ! grep -Eq -- "$pat" "$err"; then fail "rifl $*: the message does not name $pat"
  elif [ -s "$out" ]; then fail "rifl $*: printed on stdout before refusing"
  elif insane; then fail "rifl $*: $why"
  fi
}

# works ARGS...: exit 0, something on stdout, sane
works() {
  cases=$((cases + 1))
  invoke "$@"
  if [ "$rc" -ne 0 ]; then fail "rifl $*: exit $rc, want 0"
  elif [ ! -s "$out" ]; then fail "rifl $*: no output"
  elif insane; then fail "rifl $*: $why"
  fi
}

# either PATTERN ARGS...: refused naming PATTERN, or a sane run (exit 0 or 1)
either() {
  local pat=$1
  shift
  cases=$((cases + 1))
  invoke "$@"
  case $rc in
    2)
      if ! grep -Eq -- "$pat" "$err"; then fail "rifl $*: refused without naming $pat"
      elif [ -s "$out" ]; then fail "rifl $*: printed on stdout before refusing"
      elif insane; then fail "rifl $*: $why"
      fi ;;
    0|1)
      if [ ! -s "$out" ] && ! grep -q '^wrote ' "$err"; then fail "rifl $*: exit $rc and no output"
      elif insane; then fail "rifl $*: $why"
      fi ;;
    124|137) fail "rifl $*: no result within $limit s" ;;
    *) fail "rifl $*: exit $rc" ;;
  esac
}

# check DESCRIPTION COMMAND...: a plain shell check counted as a case
check() {
  local what=$1
  shift
  cases=$((cases + 1))
  "$@" || { failed=$((failed + 1)); echo "FAIL: $what"; }
}

# ---- inputs ------------------------------------------------------------------
frames=$tmp/f.frames
{ echo "# four 256-bit frames"; for i in 1 2 3 4; do printf '%064x\n' "$i"; done; } > "$frames"
csv=$tmp/s.csv
cat > "$csv" << 'EOF'
ber,bandwidth_ratio,goodput_gbps
1e-11,1,104.6
1e-9,1,104.5
1e-7,0.97,101.2
1e-6,0.71,74.0
1e-5,0.04,3.8
EOF
mkdir "$tmp/dir"

# ---- generic rows from --help ----------------------------------------------------
# command words | small settings that keep a valid run short
commands=(
  "demo|--slots 20000"
  "decode $frames|"
  "sim link|--bytes 20KB"
  "sim switch|--ports 4 --bytes-per-pair 4KB --max-slots 20000"
  "sim credit|--duration 20000"
  "calc link|"
  "calc table2|"
  "calc table3|"
  "calc table5|"
  "calc fig8|--max-len 20"
  "calc ffr|--frames 2000 --bers 1e-2"
  "plot $csv|--out $tmp/p.png"
  "bench codec|--seconds 0.01 --widths 64"
  "bench sim|--frames 20000 --plain-frames 20000 --bers 1e-5 --bonded-bytes 2MB"
  "bench switch|--slots 1000 --ports 4"
  "version|"
)

for entry in "${commands[@]}"; do
  read -r -a cmd <<< "${entry%%|*}"
  read -r -a base <<< "${entry#*|}"
  works "${cmd[@]}" --help
  grep -q "^usage: rifl ${cmd[0]}" "$out" || fail "rifl ${cmd[*]} --help: no usage line"
  refused "--no-such-option" "${cmd[@]}" "${base[@]}" --no-such-option 1
  # name kind range-max, one line per option
  "$rifl" "${cmd[@]}" --help | sed -n 's/^  --\([a-z0-9-]*\)\( \([NXSB]\)\)\{0,1\} .*/\1 \3/p' |
    grep -v '^config \|^help ' > "$tmp/opts"
  while read -r name kind; do
    # (the top of the 64-bit range is shown as 2^64 - 1)
    line=$("$rifl" "${cmd[@]}" --help | grep -- "^  --$name " |
           sed 's/ to 2^64 - 1)$/ to 18446744073709551615)/')
    lo=$(sed -n 's/.*[ (]\([-0-9.e+]*\) to \([-0-9.e+]*\))$/\1/p' <<< "$line")
    hi=$(sed -n 's/.*[ (]\([-0-9.e+]*\) to \([-0-9.e+]*\))$/\2/p' <<< "$line")
    case $kind in
      N|X)
        check "rifl ${cmd[*]} --$name shows no range in --help" [ -n "$hi" ]
        # never a number: always refused
        bad=(nan abc "")
        [ "$kind" = N ] && bad+=(1.5) || bad+=(inf -inf)
        for v in "${bad[@]}"; do
          refused "--$name|$name" "${cmd[@]}" "${base[@]}" "--$name" "$v"
        done
        # numbers: refused outside the range shown, a sane run or a
        # refusal naming the option inside it
        for v in -5 0 1e30; do
          if [ -n "$hi" ] && awk -v v="$v" -v l="$lo" -v h="$hi" 'BEGIN { exit !(v < l || v > h) }'; then
            refused "--$name|$name" "${cmd[@]}" "${base[@]}" "--$name" "$v"
          else
            either "--$name|$name" "${cmd[@]}" "${base[@]}" "--$name" "$v"
          fi
        done
        # a value that wraps when cut to 32 bits, unless the range allows it
        if [ -n "$hi" ] && awk -v h="$hi" 'BEGIN { exit !(h < 4294967552) }'; then
          refused "--$name" "${cmd[@]}" "${base[@]}" "--$name" 4294967552
        fi
        printf '%s = abc\n' "$name" > "$tmp/c.conf"
        refused "c\.conf:1.*$name" "${cmd[@]}" "${base[@]}" --config "$tmp/c.conf"
        ;;
      B)
        for v in maybe "" 2; do
          refused "--$name" "${cmd[@]}" "${base[@]}" "--$name" "$v"
        done
        either "--$name" "${cmd[@]}" "${base[@]}" "--$name" false
        printf '%s = maybe\n' "$name" > "$tmp/c.conf"
        refused "c\.conf:1.*$name" "${cmd[@]}" "${base[@]}" --config "$tmp/c.conf"
        ;;
      S)
        for v in "" "@@"; do
          either "--$name" "${cmd[@]}" "${base[@]}" "--$name" "$v"
        done
        ;;
      *)
        either "--$name" "${cmd[@]}" "${base[@]}" "--$name"
        refused "--$name" "${cmd[@]}" "${base[@]}" "--$name=maybe"
        ;;
    esac
  done < "$tmp/opts"
  # a value missing at the end of the line
  first=$(awk '$2 != "" { print $1; exit }' "$tmp/opts")
  [ -n "$first" ] && refused "--$first" "${cmd[@]}" "${base[@]}" "--$first"
done

# ---- groups, commands, config files ----------------------------------------------
for g in sim bench; do
  works "$g" --help
  grep -q "rifl $g " "$out" || fail "rifl $g --help lists no subcommand"
  refused "needs a subcommand" "$g"
  refused "nosuch" "$g" nosuch
done
refused "unknown command" nosuchcommand
refused "extra" version extra
refused "option --config" sim link --config "$tmp/missing.conf"
refused "option --config" sim link --config "$tmp/dir"
refused "option --config.*larger than 256 MiB" sim link --config /dev/zero
refused "--topology.*larger than 256 MiB" sim switch --topology /dev/zero
refused "larger than 256 MiB" plot /dev/zero --out "$tmp/z.png"
printf 'bytes = 20KB\nbogus = 1\n' > "$tmp/c.conf"
refused "c\.conf:2.*bogus" sim link --config "$tmp/c.conf"
# a byte order mark at the start is skipped; a NUL byte is refused by line
printf '\xef\xbb\xbfbytes = 20KB\n' > "$tmp/c.conf"
works sim link --config "$tmp/c.conf"
printf 'bytes = 20KB\nber = 1e-9\0x\n' > "$tmp/c.conf"
refused "c\.conf.*line 2.*NUL" sim link --config "$tmp/c.conf"

# ---- sim link -------------------------------------------------------------------
L=(sim link --bytes 20KB)
for v in -5 0 5-3 1,x 99999999999 1,,2 "" 1- - 1-2-3 abc 0x; do
  refused "--size" "${L[@]}" --size "$v"
done
works "${L[@]}" --size 64,1500,9000
works "${L[@]}" --size 64:128
works "${L[@]}" --size 1-9KiB
refused "--txq" "${L[@]}" --txq 1e12
refused "--txq" "${L[@]}" --size 9000 --txq 100
refused "--ber-ab" "${L[@]}" --ber-ab -0.5
refused "--rx-period" "${L[@]}" --rx-period 5
refused "--rx-stall" "${L[@]}" --rx-stall 10 --rx-period 5
refused "--fid-bits" "${L[@]}" --fid-bits 3
refused "--cable.*--fid-bits|--fid-bits.*--cable" "${L[@]}" --cable 200 --fid-bits 8
refused "--csv.*--json" "${L[@]}" --csv --json
refused "--bytes" sim link --bytes 0
# the largest seeds are kept digit for digit (no rounding through a double)
for seed in 18446744073709551615 9007199254740993; do
  invoke "${L[@]}" --seed "$seed" --json
  check "seed $seed kept exactly" grep -q "\"seed\": $seed," "$out"
done
invoke "${L[@]}" --seed 18446744073709551616
check "seed 2^64 refused" [ "$rc" -eq 2 ]
check "seed 2^64 named" grep -q -- "--seed" "$err"
# white space in front of a count is refused, whatever the character (a seed
# read past a newline or a form feed went through a double, losing digits)
for ws in ' ' $'\t' $'\n' $'\v' $'\f' $'\r'; do
  refused "--seed" "${L[@]}" --seed "${ws}9007199254740993"
done
# a run that cannot finish is refused at once, naming the bound
refused "--ber.*--frames" sim link --ber 1e-4
refused "--ber-ab.*--frames" sim link --ber-ab 2e-4 --bytes 1MB
refused "--sweep.*ber=1e-4.*--frames" sim link --sweep ber=1e-6,1e-4 --bytes 100KB
either "--ber" sim link --ber 1e-4 --frames 100000
# a bonded link waits for its slowest lane: refused where one lane would run
refused "--ber.*each of 4 lanes.*--frames" sim link --lanes 4 --ber 3e-5 --bytes 10GB
works sim link --ber 3e-5 --bytes 1MB --frames 300000 --progress
grep -q 'simulating: *[0-9.]*%' "$err" || fail "no progress line"
grep -q 'simulating:   0.0%' "$err" && fail "progress stuck at 0.0%"
# config values are named by file and line, also in checks across options
printf 'cable = 200\nfid-bits = 8\n' > "$tmp/c.conf"
refused "c\.conf:1.*cable|c\.conf:2.*fid-bits" "${L[@]}" --config "$tmp/c.conf"
printf 'txq = 1e12\n' > "$tmp/c.conf"
refused "c\.conf:1.*txq" "${L[@]}" --config "$tmp/c.conf"
printf 'rx-stall = 10\nrx-period = 5\n' > "$tmp/c.conf"
refused "c\.conf:1.*rx-stall" "${L[@]}" --config "$tmp/c.conf"

# ---- sweeps: one syntax for sim link and sim switch -------------------------------
works "${L[@]}" --csv --sweep ber=1e-7:1e-6:x10^0.5
check "sim link x10^0.5 sweep gives 3 rows" [ "$(wc -l < "$out")" -eq 4 ]
works "${L[@]}" --csv --sweep ber=1e-7,1e-6
check "sim link list sweep gives 2 rows" [ "$(wc -l < "$out")" -eq 3 ]
works "${L[@]}" --csv --sweep "ber=1e-7,1e-6 load=0.5:1:0.5"
check "sim link two-key sweep gives 4 rows" [ "$(wc -l < "$out")" -eq 5 ]
check "a swept load gets a CSV column" grep -q ',frames_hit,stalled,load$' "$out"
works "${L[@]}" --json --sweep "load=.5,1 fast=true,false"
check "sweep JSON is valid and names the swept values" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["sweep"]["load"] for r in rows] == [0.5, 0.5, 1, 1], rows
assert rows[1]["sweep"]["fast"] == "false"' "$out"
works sim link --csv --sweep "cable=1:3:+1;bytes=10KB,20KB"
check "sim link ';' and byte suffixes in a sweep give 6 rows" [ "$(wc -l < "$out")" -eq 7 ]
refused "--sweep.*swept and also set.*--bytes" "${L[@]}" --csv --sweep bytes=10KB,20KB
refused "--sweep.*swept and also set.*--load" sim switch --load 0.5 --sweep load=0.2,0.4
S=(sim switch --ports 4 --bytes-per-pair 4KB)
works "${S[@]}" --csv --sweep load=0.2:0.8:x2
check "sim switch multiplied sweep gives 3 rows" [ "$(wc -l < "$out")" -eq 4 ]
works "${S[@]}" --csv --sweep "load=0.2:0.6:+0.2 scheduler=islip,safc"
check "sim switch two-key sweep gives 6 rows" [ "$(wc -l < "$out")" -eq 7 ]
for cmdv in "sim link --bytes 20KB" "sim switch --ports 4 --bytes-per-pair 4KB"; do
  read -r -a c <<< "$cmdv"
  for sp in "ber=1e-5:1e-7:x10" "load=0.1:0.9:x1" "load=0.1:0.9:0" "load=0.1:0.9" "load=" \
            "load=0.5,,1" "=1" "load=0.2,1.5" "load=0.2:2:0.2" "load=1e-9:1:+1e-9" \
            "nosuch=1" "load=0.2 load=0.4" "load=a,b" "seed=1:5:x1.1" "" \
            "a=1 b=2 c=3 d=4 e=5"; do
    [ "${c[1]}" = switch ] && [ "${sp%%=*}" = ber ] && continue
    refused "--sweep" "${c[@]}" --sweep "$sp"
  done
done
# whole-number ranges are exact: seeds above 2^53 are not rounded to doubles
works sim link --bytes 1KB --csv --sweep seed=1152921504606846977:1152921504606848977:+1000
check "a seed range above 2^53 keeps every seed" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["seed"] for r in rows] == ["1152921504606846977", "1152921504606847977",
                                     "1152921504606848977"], [r["seed"] for r in rows]' "$out"
refused "--sweep.*stay below 2.53" sim link --bytes 1KB --sweep seed=1:1152921504606846976:x2
refused "--sweep.*repeats the value" sim link --bytes 1KB --sweep ber=1e-7:1.0000001e-7:x1.00000001
# a range is read whole however long it is written: a factor of 10^5 with 60
# zeros in its exponent gives two points, not 10^0.5's eleven; a FROM of 300
# characters is a number, not a range cut short
zeros=$(printf '0%.0s' {1..60})
works sim link --bytes 1KB --csv --sweep "ber=1e-10:1e-5:x10^0.5${zeros}e1"
check "a long factor is read whole" [ "$(cut -d, -f1 "$out" | tr '\n' ' ')" = "ber 1e-10 1e-05 " ]
zeros=$(printf '0%.0s' {1..300})
works "${L[@]}" --csv --sweep "load=0.5${zeros}:1:+0.5"
check "a long FROM is read whole" [ "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "load") c = i }
  { printf "%s ", $c }' "$out")" = "load 0.5 1 " ]
refused "--sweep.*size" "${L[@]}" --sweep size=1,2
refused "--sweep.*topology" "${S[@]}" --sweep topology=a,b
refused "--sweep.*voq-cells=5" "${S[@]}" --sweep voq-cells=100,5
refused "--sweep.*traffic=poisson" "${S[@]}" --sweep traffic=bursty,poisson

# ---- sim switch -------------------------------------------------------------------
refused "--plot-y" "${S[@]}" --sweep load=0.2,0.4 --plot "$tmp/q.png" --plot-y foo
refused "--plot-y" "${S[@]}" --plot-y p99
refused "--plot" "${S[@]}" --sweep load=0.2,0.4 --plot "$tmp/dir/"
refused "--plot" "${S[@]}" --sweep load=0.2,0.4 --plot "$tmp/dir"
refused "--plot" "${S[@]}" --sweep load=0.2,0.4 --plot /nonexistent/dir/x.png
check "no hidden plot files in a directory" [ -z "$(ls -A "$tmp/dir")" ]
refused "--plot" "${S[@]}" --plot "$tmp/q.png"
refused "--plot" "${S[@]}" --sweep scheduler=islip,safc --plot "$tmp/q.png"
refused "--csv.*--json" "${S[@]}" --csv --json
refused "--scheduler" "${S[@]}" --scheduler fifo
refused "--traffic" "${S[@]}" --traffic poisson
refused "--host-queue" "${S[@]}" --host-queue lifo
refused "--ports" "${S[@]}" --topology "$src/docs/examples/two-racks.topo"
refused "--var-min" "${S[@]}" --var-min 100
refused "--burst-bytes" "${S[@]}" --burst-bytes 4096
refused "--host-fifo-cells" "${S[@]}" --host-fifo-cells 8
refused "--voq-cells" "${S[@]}" --voq-cells 5
refused "--topology" "${S[@]}" --topology "$tmp/missing.topo"
printf 'voq-cells = 5\n' > "$tmp/c.conf"
refused "c\.conf:1.*voq-cells" "${S[@]}" --config "$tmp/c.conf"
works "${S[@]}" --csv --sweep load=0.2,0.6 --plot "$tmp/sw.png" --plot-y p99
check "sim switch plot written" [ -s "$tmp/sw.png" ]

# ---- sim credit -------------------------------------------------------------------
C=(sim credit --duration 20000)
refused "--csv" "${C[@]}" --csv "$tmp/x.csv"
refused "--csv" "${C[@]}" --mode lane-credit --csv "$tmp/x.csv"
for e in buffer curve hol; do
  refused "--csv" "${C[@]}" --experiment "$e" --csv /nonexistent/dir/x
  refused "--csv" "${C[@]}" --experiment "$e" --csv "$tmp/dir"
  refused "--json" "${C[@]}" --experiment "$e" --json
  refused "--mode" "${C[@]}" --experiment "$e" --mode onoff
  refused "--vls" "${C[@]}" --experiment "$e" --vls 3
done
check "no csv left by refused runs" [ ! -e "$tmp/x.csv" ]
works "${C[@]}" --experiment hol --csv "$tmp/h.csv"
check "hol writes its csv (header and 2 modes)" [ "$(wc -l < "$tmp/h.csv")" -eq 3 ]
works "${C[@]}" --experiment curve --rtt 1600 --csv "$tmp/c.csv"
# (0.25 to 1.25 RTT are below one 2048-byte packet: one row at 2048 bytes)
check "curve writes its csv" [ "$(wc -l < "$tmp/c.csv")" -eq 13 ]
works "${C[@]}" --experiment buffer --rtts 1000 --csv "$tmp/b.csv"
check "buffer writes its csv" [ "$(wc -l < "$tmp/b.csv")" -eq 2 ]
works "${C[@]}" --experiment hol --hol-start 0 --hol-end 1
refused "--drains" "${C[@]}" --drains -1
refused "--drains" "${C[@]}" --drains 1,-1
refused "--loads" "${C[@]}" --loads 0.5
refused "--loads" "${C[@]}" --loads 0.5,0.2,0.1
refused "--loads" "${C[@]}" --vls 3 --loads 0.5,0.2
refused "--loads" "${C[@]}" --loads 0.5,x
refused "--loads" "${C[@]}" --loads 0.5,nan
refused "--load.*--loads" "${C[@]}" --load 0.5 --loads 0.5,0.5
works "${C[@]}" --vls 3 --loads 0.5,0.2,0.1 --drains 1,1,0.5
refused "--hol-vl" "${C[@]}" --hol-vl 5
refused "--hol-vl" "${C[@]}" --vls 1 --hol-vl 1
refused "--hol-start.*--hol-end" "${C[@]}" --hol-vl 1 --hol-start 0.8 --hol-end 0.2
refused "--hol-start.*--hol-end" "${C[@]}" --hol-vl 1 --hol-start 0.5 --hol-end 0.5
refused "--hol-start" "${C[@]}" --hol-start 0.1
refused "--rtt" "${C[@]}" --mode lane-credit --rtt 100
refused "--ber" "${C[@]}" --ber 1e-6
refused "--cable-m" "${C[@]}" --mode onoff --cable-m 5
refused "--buffer" "${C[@]}" --experiment curve --buffer 8KiB
refused "--high-limit" "${C[@]}" --high-limit 3
refused "--min-len.*--max-len" "${C[@]}" --min-len 100 --max-len 50
refused "--stall-on.*--stall-off" "${C[@]}" --stall-on 10
refused "--chunk" "${C[@]}" --chunk 100
refused "--buffer" "${C[@]}" --buffer 1e12
refused "--rtt" "${C[@]}" --rtt 4001
refused "--rtts" "${C[@]}" --experiment buffer --rtts 1000,x
refused "--rtts" "${C[@]}" --experiment buffer --rtts 1001
refused "--rtts" "${C[@]}" --experiment buffer --rtts ""
refused "--rtts" "${C[@]}" --rtts 1000
refused "--duration" sim credit --duration 0
refused "--cable-m" "${C[@]}" --mode lane-credit --cable-m 100000
refused "--max-len" "${C[@]}" --mode lane-credit --max-len 60000
refused "--high" "${C[@]}" --high 0:1
refused "--on-frac" "${C[@]}" --mode onoff --on-frac 0.2
refused "--experiment" "${C[@]}" --experiment nosuch
refused "--mode" "${C[@]}" --mode lane-credit --experiment hol
works "${C[@]}" --mode lane-credit --json
grep -q '"lossless":true' "$out" || fail "lane mode JSON"
works "${C[@]}" --mode lane-onoff --cable-m 100
printf 'hol-vl = 5\n' > "$tmp/c.conf"
refused "c\.conf:1.*hol-vl" "${C[@]}" --config "$tmp/c.conf"
printf 'loads = 1,2,3\n' > "$tmp/c.conf"
refused "c\.conf:1.*loads" "${C[@]}" --config "$tmp/c.conf"

# ---- calc ---------------------------------------------------------------------------
for v in -5 -80 nan inf -inf; do
  refused "--cable" calc link --cable "$v"
  refused "--transceiver-ns" calc link --transceiver-ns "$v"
  refused "--ns-per-m" calc link --ns-per-m "$v"
done
# no cable carries a signal faster than light (3.336 ns/m)
refused "--ns-per-m" calc link --ns-per-m 3
refused "--ns-per-m" sim link --ns-per-m 1 --bytes 1KB
works calc link --ns-per-m 3.4
works calc link --csv
check "calc link --csv is a header and a row" [ "$(wc -l < "$out")" -eq 2 ]
head -1 "$out" | grep -q '^frame_bits,' || fail "calc link --csv header"
# the goodput of Eq. 26 is the line rate times the efficiency of the code used
for m in 12 20 28; do
  works calc link --csv --crc-bits "$m"
  check "calc link --crc-bits $m: goodput = rate x efficiency" python3 -c '
import csv, sys
r = next(csv.DictReader(open(sys.argv[1])))
assert abs(float(r["goodput_gbps"]) - float(r["rate_gbps"]) * float(r["efficiency"])) < 1e-3, r' "$out"
done
works calc link --ber 0
works calc link --ber 1e-9 --hd 64
works calc link --rate 100000 --cable 100000
refused "--goodput" calc link --goodput 200
refused "--frame-bits" calc link --frame-bits 300
for m in table2 table3 table5 fig8 ffr; do
  refused "--cable" calc "$m" --cable 5
done
refused "--sweep-csv" calc link --sweep-csv "$csv"
refused "--max-len" calc table2 --max-len 10
refused "--bers" calc link --bers 1e-3
works calc table5 --sweep-csv "$csv" --csv
printf 'ber,frame_bits,goodput_gbps\n1e-11,512,107\n1e-9,512,107\n1e-7,512,105\n1e-5,512,60\n' \
  > "$tmp/s512.csv"
refused "--sweep-csv.*512-bit frames.*--frame-bits 256" calc table5 --sweep-csv "$tmp/s512.csv"
refused "--rate" calc table5 --sweep-csv "$csv" --rate 100
refused "--sweep-csv" calc table5 --sweep-csv "$tmp/missing.csv"
refused "--sweep-csv" calc table5 --sweep-csv "$tmp/dir"
printf 'ber,goodput_gbps\n1e-11,abc\n' > "$tmp/bad.csv"
refused "--sweep-csv.*bad.csv:2" calc table5 --sweep-csv "$tmp/bad.csv"
printf 'ber,goodput_gbps\n1e-11,100\n' > "$tmp/short.csv"
refused "--sweep-csv" calc table5 --sweep-csv "$tmp/short.csv"
works calc ffr --frames 10 --bers 1e-2
for v in "" 0 -1e-3 0.6 1e-2,,1e-3 x; do
  refused "--bers" calc ffr --frames 1000 --bers "$v"
done
refused "calculation" calc nosuch
refused "needs one of" calc

# ---- plot ---------------------------------------------------------------------------
works_plot() { cases=$((cases + 1)); invoke "$@"; [ "$rc" -eq 0 ] || fail "rifl $*: exit $rc"; }
works_plot plot "$csv" --out "$tmp/p1.png" --logx
check "plot written" [ -s "$tmp/p1.png" ]
works_plot plot "$csv" --y bandwidth_ratio,goodput_gbps --titles a,b --scale 2 --logy \
  --yrange 0.01:300 --style lines --out "$tmp/p2.png"
refused "--out" plot "$csv" --out "$tmp/dir"
refused "--out" plot "$csv" --out "$tmp/dir/"
refused "--out" plot "$csv" --out /nonexistent/dir/x.png
check "no png from a directory --out" [ -z "$(ls -A "$tmp/dir")" ]
printf 'ber,bandwidth_ratio\n1e-7,0.9\n1e-6,abc\n' > "$tmp/bad.csv"
refused "bad.csv:3.*bandwidth_ratio" plot "$tmp/bad.csv" --out "$tmp/bad.png"
printf 'ber,bandwidth_ratio\n1e-7\n' > "$tmp/short.csv"
refused "short.csv:2" plot "$tmp/short.csv" --out "$tmp/bad.png"
printf 'ber,bandwidth_ratio\n1e-7,\n' > "$tmp/gap.csv"
refused "--y" plot "$tmp/gap.csv" --out "$tmp/bad.png"
printf 'ber,bandwidth_ratio\n' > "$tmp/empty.csv"
refused "rows" plot "$tmp/empty.csv" --out "$tmp/bad.png"
refused "--key" plot "$csv" --out "$tmp/bad.png" --key "nonsense words"
# file names gnuplot would read as a command ('<cmd') or a pipe ('|cmd') name
# files: nothing is run
mkdir -p "$tmp/odd"
cp "$csv" "$tmp/odd/<touch ran"
cases=$((cases + 1))
(cd "$tmp/odd" && timeout -k 5 "$limit" "$rifl" plot '<touch ran' --out '|touch piped' \
  > "$out" 2> "$err") || fail "plot of a file named '<touch ran': exit $?"
check "a data file named '<cmd' runs nothing" [ ! -e "$tmp/odd/ran" ]
check "an output named '|cmd' runs nothing" [ ! -e "$tmp/odd/piped" ]
check "an output named '|cmd' is that file" [ -s "$tmp/odd/|touch piped" ]
cases=$((cases + 1))
(cd "$tmp/odd" && timeout -k 5 "$limit" "$rifl" "${S[@]}" --csv --sweep load=0.2,0.6 \
  --plot '|touch swpiped' > "$out" 2> "$err") || fail "sim switch --plot '|touch swpiped': exit $?"
check "sim switch plot named '|cmd' runs nothing" [ ! -e "$tmp/odd/swpiped" ]
check "sim switch plot named '|cmd' is that file" [ -s "$tmp/odd/|touch swpiped" ]
printf 'ber,bandwidth_ratio\n-1,0.5\n0,0.6\n' > "$tmp/neg.csv"
refused "gnuplot" plot "$tmp/neg.csv" --out "$tmp/bad.png" --logx
check "no png left after failures" [ ! -e "$tmp/bad.png" ]
check "no partial png left after failures" [ -z "$(ls "$tmp" | grep 'bad.png.')" ]
refused "--y" plot "$csv" --out "$tmp/bad.png" --y nosuch
refused "--x" plot "$csv" --out "$tmp/bad.png" --x nosuch
refused "--titles" plot "$csv" --out "$tmp/bad.png" --titles a,b
refused "--style" plot "$csv" --out "$tmp/bad.png" --style "lines;system('ls')"
refused "--yrange" plot "$csv" --out "$tmp/bad.png" --yrange "0:1];system('ls')"
refused "--yrange" plot "$csv" --out "$tmp/bad.png" --yrange 2:1
refused "file name" plot - --out "$tmp/bad.png"
refused "needs a CSV" plot "$csv"

# ---- decode ---------------------------------------------------------------------------
refused "--quiet.*--json" decode --quiet --json "$frames"
refused "--quiet.*--payload" decode --quiet --payload "$frames"
printf '%064x\nnot a frame\n' 1 > "$tmp/garbage.frames"
refused "line 2" decode "$tmp/garbage.frames"
refused "line 2" decode --json "$tmp/garbage.frames"
refused "--frame-width" decode --frame-width 300 "$frames"
refused "--frame-id-width" decode --frame-id-width 13 "$frames"
works decode --payload "$frames"

# ---- bench ------------------------------------------------------------------------------
for v in "" , 256, ,256 256x 300 64,,256 abc -64; do
  refused "--widths" bench codec --seconds 0.01 --widths "$v"
done
for v in "" 1e-5, x 0.6 -1; do
  refused "--bers" bench sim --frames 20000 --plain-frames 20000 --bers "$v"
done
works bench sim --frames 20000 --bers 1e-5 --plain false --bonded-bytes 2MB
refused "--plain-frames" bench sim --frames 20000 --plain false --plain-frames 10
refused "--iterations" bench switch --slots 1000 --safc --iterations 2
refused "--iterations.*safc" sim switch --ports 4 --scheduler safc --iterations 2 --bytes-per-pair 1KB

# ---- demo (rows the demo must pass as well) -----------------------------------------------
D=(demo --slots 20000)
either "--max-packet" "${D[@]}" --max-packet 200000 --json
if [ "$rc" -ne 2 ]; then
  check "demo --max-packet 200000 sends packets" grep -Eq '"packets": [1-9]' "$out"
fi
works demo --slots 1000 --json
check "demo --slots 1000: goodput not above the line rate" \
  awk -F'"goodput_gbps": ' '{ for (i = 2; i <= NF; i++) if ($i + 0 > 112) exit 1 }' "$out"
works "${D[@]}" --json
check "demo JSON has startup_slots" grep -q '"startup_slots"' "$out"
either "--ber" "${D[@]}" --ber 0.01 --json
delivered_or_failed() {
  if [ "$rc" -ne 0 ]; then return 0; fi
  [ "$(grep -Eo '"bytes_delivered": [1-9]' "$out" | wc -l)" -eq 2 ]
}
check "demo at BER 0.01: exit 0 only when both ways delivered" delivered_or_failed

echo "cli_options: $cases cases, $failed failed"
[ "$failed" -eq 0 ]
