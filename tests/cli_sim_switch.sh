#!/usr/bin/env bash
# CLI checks for `rifl sim switch` and `rifl bench switch --help`.
# usage: cli_sim_switch.sh RIFL_BINARY VECTORS_DIR SOURCE_DIR
set -euo pipefail
rifl=$1
src=${3:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# has WANT CMD...: CMD succeeds and its output holds WANT (the output is
# read whole, never cut off by a pipe)
has() { local want=$1; shift; "$@" > "$tmp/has.out" && grep -q -- "$want" "$tmp/has.out"; }
# first value of "KEY": in a JSON file (no python needed)
val() { grep -o "\"$1\": [^,}]*" "$2" | head -1 | sed 's/^[^:]*: *//; s/"//g'; }
# awk comparison: ok "EXPR" (with the values substituted)
ok() { awk "BEGIN { exit !($1) }"; }

has "--scheduler" "$rifl" sim switch --help || fail "--help lacks --scheduler"
has "--slots" "$rifl" bench switch --help || fail "bench --help lacks --slots"

small=(--ports 8 --bytes-per-pair 20KB)
# JSON summary has the documented keys
"$rifl" sim switch "${small[@]}" --json --load 0.6 --seed 5 > "$tmp/a.json"
for k in utilization latency_cells latency_ns latency_gen_cells latency_gen_ns dropped seed \
         flow_control queues \
         p1 p50 p75 p90 p95 p99 p100; do
  grep -q "\"$k\": " "$tmp/a.json" || fail "JSON lacks $k"
done
[ "$(val seed "$tmp/a.json")" = 5 ] || fail "seed"
[ "$(val finished "$tmp/a.json")" = true ] || fail "finished"
[ "$(val dropped "$tmp/a.json")" = 0 ] || fail "dropped"
[ "$(val lost "$tmp/a.json")" = 0 ] && [ "$(val duplicated "$tmp/a.json")" = 0 ] || fail "checks"
ok "$(val utilization "$tmp/a.json") > 0.5 && $(val utilization "$tmp/a.json") < 0.7" ||
  fail "utilization $(val utilization "$tmp/a.json")"
ok "$(val p1 "$tmp/a.json") >= 18" || fail "p1 below the fixed latency"

# every switch counter, from the library's table, agreeing with the summary
python3 - "$tmp/a.json" <<'PY' || fail "switch_counters"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["switch_counters"]
assert len(c) >= 20 and "slot_errors" in c and c["slot_errors"] == 0, c
assert c["fc_on_sent"] == d["flow_control"]["on"], c
assert c["drop_overflow"] == d["drops"]["overflow"], c
assert c["max_voq_cells"] == d["queues"]["voq_max"], c
PY

# same seed, same output; another seed, another output
"$rifl" sim switch "${small[@]}" --json --load 0.6 --seed 5 > "$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" || fail "same seed gave different output"
"$rifl" sim switch "${small[@]}" --json --load 0.6 --seed 6 > "$tmp/c.json"
cmp -s "$tmp/a.json" "$tmp/c.json" && fail "different seeds gave identical output"

# options reach the simulator
"$rifl" sim switch "${small[@]}" --json --scheduler safc --traffic bursty --load 0.3 \
    > "$tmp/d.json"
[ "$(val scheduler "$tmp/d.json")" = safc ] && [ "$(val traffic "$tmp/d.json")" = bursty ] &&
  [ "$(val load "$tmp/d.json")" = 0.3 ] || fail "options not applied"
"$rifl" sim switch "${small[@]}" --json --iterations 1 > "$tmp/d.json"
[ "$(val iterations "$tmp/d.json")" = 1 ] || fail "--iterations not applied"

# a sweep gives the same output whatever the number of jobs (the summaries'
# wall times aside), in sweep order
sweep=(--ports 8 --bytes-per-pair 20KB --sweep "scheduler=islip,safc load=0.3,0.9 seed=1,2")
for j in 1 3 0; do
  "$rifl" sim switch "${sweep[@]}" --json --jobs $j > "$tmp/j$j.json"
  "$rifl" sim switch "${sweep[@]}" --jobs $j | sed 's/, [0-9.]* s wall$//' > "$tmp/j$j.txt"
done
for j in 3 0; do
  cmp -s "$tmp/j1.json" "$tmp/j$j.json" || fail "--jobs $j changed the JSON of a sweep"
  cmp -s "$tmp/j1.txt" "$tmp/j$j.txt" || fail "--jobs $j changed the summaries of a sweep"
done
[ "$(grep -c '"scheduler"' "$tmp/j1.json")" -eq 8 ] || fail "sweep JSON should have 8 runs"
[ "$(grep -o '"load": [0-9.]*' "$tmp/j3.json" | head -2 | tr -d '\n')" = '"load": 0.3"load": 0.3' ] ||
  fail "sweep order"
"$rifl" sim switch "${sweep[@]}" --jobs 300 > /dev/null 2>&1 && fail "--jobs 300 accepted"
# a swept seed is each run's, not the top level's
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert 'seed' not in d and [r['seed'] for r in d['runs']] == [1, 2] * 4, d.get('seed')" "$tmp/j1.json" || fail "swept seed in the JSON"
# swept settings the CSV has no column for get one each
"$rifl" sim switch --ports 2 --bytes-per-pair 2560 --csv --sweep 'cell-ns=10,20 latency=17,30' > "$tmp/sw.csv" || fail "CSV sweep"
[ "$(head -1 "$tmp/sw.csv" | grep -o ',cell_ns,latency$')" = ",cell_ns,latency" ] || fail "swept columns: $(head -1 "$tmp/sw.csv")"
[ "$(tail -n +2 "$tmp/sw.csv" | grep -o ',[0-9]*,[0-9]*$' | tr '\n' ' ')" = ",10,17 ,10,30 ,20,17 ,20,30 " ] || fail "swept values: $(cat "$tmp/sw.csv")"

# summary prints the seed
has "seed 42" "$rifl" sim switch "${small[@]}" --seed 42 || fail "summary lacks the seed"

# CSV sweep: header + one row per run
"$rifl" sim switch "${small[@]}" --csv --sweep "scheduler=islip,safc load=0.2,0.8" > "$tmp/s.csv"
[ "$(wc -l < "$tmp/s.csv")" -eq 5 ] || fail "sweep CSV should have 5 lines"
head -1 "$tmp/s.csv" | grep -q "^scheduler,.*utilization.*p99" || fail "CSV header"

# config file with a command-line override
printf 'ports = 8\nbytes-per-pair = 20KB\nload = 0.4\nscheduler = safc\n' > "$tmp/cfg"
# (a numeric override: the shared option parser keeps every string it copies,
# so overriding a string setting leaks one copy under LeakSanitizer)
"$rifl" sim switch --config "$tmp/cfg" --load 0.5 --json > "$tmp/e.json"
[ "$(val scheduler "$tmp/e.json")" = safc ] && [ "$(val load "$tmp/e.json")" = 0.5 ] &&
  [ "$(val ports "$tmp/e.json")" = 8 ] || fail "config + override"

# bad input: clear errors, non-zero exit
expect_err() { # pattern, args...
  local pat=$1; shift
  if "$rifl" sim switch "$@" > "$tmp/out" 2> "$tmp/err"; then fail "accepted: $*"; fi
  grep -q "$pat" "$tmp/err" || { cat "$tmp/err" >&2; fail "message for $* lacks '$pat'"; }
}
printf 'ports = 8\nload = lots\n' > "$tmp/bad.cfg"
expect_err "bad.cfg:2" --config "$tmp/bad.cfg"
expect_err "1.5 round trips" "${small[@]}" --voq-cells 5
expect_err "islip or safc" "${small[@]}" --scheduler fifo
expect_err "bernoulli or bursty" "${small[@]}" --traffic poisson
expect_err "multiple of 256" "${small[@]}" --packet-bytes 300
expect_err "out of range" --load 1.5
expect_err "needs --sweep" --plot "$tmp/x.png"
printf 'host a\nswitch s 4\nlink a s:7\n' > "$tmp/bad.topo"
expect_err "line 3" --topology "$tmp/bad.topo"
printf 'host a\nhost b\nswitch x 4\nswitch y 4\nlink a x:0\nlink b y:0\n' > "$tmp/split.topo"
expect_err "no route" --topology "$tmp/split.topo"

# a topology from the docs runs clean
"$rifl" sim switch --topology "$src/docs/examples/two-racks.topo" --bytes-per-pair 20KB --json \
    > "$tmp/t.json"
[ "$(val switches "$tmp/t.json")" = 2 ] && [ "$(val hosts "$tmp/t.json")" = 6 ] &&
  [ "$(val finished "$tmp/t.json")" = true ] && [ "$(val dropped "$tmp/t.json")" = 0 ] ||
  fail "topology run"

# a generated topology: a leaf-spine and a fat tree run clean; bad names refused
"$rifl" sim switch --topology leafspine:3x2x2 --bytes-per-pair 5KB --json > "$tmp/ls.json"
[ "$(val switches "$tmp/ls.json")" = 5 ] && [ "$(val hosts "$tmp/ls.json")" = 6 ] &&
  [ "$(val finished "$tmp/ls.json")" = true ] && [ "$(val dropped "$tmp/ls.json")" = 0 ] ||
  fail "leaf-spine run"
"$rifl" sim switch --topology fattree:4 --bytes-per-pair 2KB --json > "$tmp/ft.json"
[ "$(val switches "$tmp/ft.json")" = 20 ] && [ "$(val hosts "$tmp/ft.json")" = 16 ] &&
  [ "$(val finished "$tmp/ft.json")" = true ] && [ "$(val dropped "$tmp/ft.json")" = 0 ] ||
  fail "fat-tree run"
expect_err "K even" --topology fattree:5
expect_err "no effect with --topology" --topology leafspine:3x2x2 --latency 30
[ "$(val ports "$tmp/ft.json")" = null ] || fail "ports with --topology"
printf 'switch s 4\nswitch t 4\nhost a\nhost b\nlink a s:0\nlink s:1 t:1 delay 20000\nlink b t:0\n' \
    > "$tmp/far.topo"
expect_err "link s:1 - t:1: delay 20000 .* at most 19999" --topology "$tmp/far.topo"
printf 'switch s 4\nhost a\nlink a s:0\n' > "$tmp/one.topo"
expect_err "topology has 1 host" --topology "$tmp/one.topo"
"$rifl" sim switch "${small[@]}" --csv > "$tmp/c.csv" || fail "csv run"
head -1 "$tmp/c.csv" | grep -q ',fc_on_sent,fc_off_sent,' || fail "csv notice columns"
# routes round a ring of switches deadlock under full load: the run says it
# stalled and exits 1, instead of running for ever
{
  for k in 0 1 2 3 4 5; do
    printf 'switch s%d 4\nhost a%d\nhost b%d\nlink a%d s%d:0\nlink b%d s%d:1\n' $k $k $k $k $k $k $k
  done
  for k in 0 1 2 3 4 5; do printf 'link s%d:2 s%d:3 delay 2\n' $k $(( (k + 1) % 6 )); done
} > "$tmp/ring.topo"
rc=0
timeout 120 "$rifl" sim switch --topology "$tmp/ring.topo" --load 1 --bytes-per-pair 200KB \
    > "$tmp/ring.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "NOT FINISHED (stalled)" "$tmp/ring.out" &&
  grep -q "flow-control deadlock" "$tmp/ring.out" || fail "ring deadlock (rc $rc)"
# ... and the routes' cycle of VOQ waits is named before the run
grep -q "warning: option --topology: the routes can deadlock under load: the waits of their VOQs close a cycle of 6: s" \
  "$tmp/ring.out" || fail "ring: no warning of the wait cycle"
"$rifl" sim switch --topology leafspine:2x2x2 --bytes-per-pair 2KB > "$tmp/ls.out" 2>&1 ||
  fail "leaf-spine run"
! grep -q "can deadlock" "$tmp/ls.out" || fail "leaf-spine: a wait cycle named"
expect_err "K even" --topology fattree:65536
# hosts on links of delay 0: the round trip is what the cells take, so flow
# control keeps the VOQs from overflowing
printf 'switch s0 4\n' > "$tmp/d0.topo"
for h in 0 1 2 3; do printf 'host h%s\nlink h%s s0:%s delay 0\n' $h $h $h >> "$tmp/d0.topo"; done
"$rifl" sim switch --topology "$tmp/d0.topo" --bytes-per-pair 200000 --load 1 --traffic bursty \
    --json > "$tmp/d0.json" || fail "delay 0 run"
[ "$(val finished "$tmp/d0.json")" = true ] && [ "$(val dropped "$tmp/d0.json")" = 0 ] ||
  fail "delay 0 links dropped cells"
expect_err "latency" "${small[@]}" --latency 40000
expect_err "use single:N" --topology single:x4

# plot (gnuplot is a test dependency: scripts/install-deps.sh installs it)
command -v gnuplot > /dev/null || fail "gnuplot is missing (scripts/install-deps.sh installs gnuplot-nox)"
"$rifl" sim switch "${small[@]}" --csv --sweep "load=0.2:0.6:0.2" --plot "$tmp/p.png" \
    > /dev/null 2>&1 || fail "plot"
[ -s "$tmp/p.png" ] && [ -s "$tmp/p.dat" ] && [ -s "$tmp/p.gp" ] || fail "plot files"
echo "cli_sim_switch: all checks passed"
