#!/usr/bin/env bash
# CLI checks for `rifl sim net`: the JSON keys, zero drops and loss, the
# unloaded one-switch path, seeds, and clear refusals.
# usage: cli_sim_net.sh RIFL_BINARY VECTORS_DIR SOURCE_DIR
set -euo pipefail
rifl=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# has WANT CMD...: CMD succeeds and its output holds WANT (the output is
# read whole, never cut off by a pipe)
has() { local want=$1; shift; "$@" > "$tmp/has.out" && grep -q -- "$want" "$tmp/has.out"; }
val() { grep -o "\"$1\": [^,}]*" "$2" | head -1 | sed 's/^[^:]*: *//; s/"//g'; }
ok() { awk "BEGIN { exit !($1) }"; }

has "--topology" "$rifl" sim net --help || fail "--help lacks --topology"
# refusals name the problem
expect_err() {
  local want=$1; shift
  if "$rifl" sim net "$@" > "$tmp/out" 2> "$tmp/err"; then fail "accepted: $*"; fi
  grep -q -- "$want" "$tmp/err" || fail "message for '$*' lacks '$want': $(cat "$tmp/err")"
}


# defaults: single:32 at 10% load; p50 is the unloaded 17 cell times
"$rifl" sim net --json --time-us 20 > "$tmp/a.json"
for k in latency_ns latency_head_ns mct_us p50 p99 p999 max delivered_cells \
         completed_messages dropped lost replays fc_frames max_voq_cells links hops; do
  grep -q "\"$k\": " "$tmp/a.json" || fail "JSON lacks $k"
done
[ "$(val finished "$tmp/a.json")" = true ] || fail "finished"
[ "$(val dropped "$tmp/a.json")" = 0 ] && [ "$(val lost "$tmp/a.json")" = 0 ] || fail "drops"
p50=$(val p50 "$tmp/a.json"); cell=$(val cell_ns "$tmp/a.json")
ok "$p50 == 17 * $cell" || fail "p50 $p50 ns is not 17 cell times of $cell ns"

# three hops with bit errors: replays, nothing lost; per-link detail
"$rifl" sim net --topology leafspine:2x2x2 --load 0.8 --ber 1e-6 --time-us 10 \
  --warmup-us 2 --json --links --seed 3 > "$tmp/b.json"
[ "$(val dropped "$tmp/b.json")" = 0 ] && [ "$(val lost "$tmp/b.json")" = 0 ] || fail "BER drops"
ok "$(val replays "$tmp/b.json") > 0" || fail "no replays at BER 1e-6"
[ "$(grep -c "\"from\": " "$tmp/b.json")" = 16 ] || fail "expected 16 link directions"
# the same seed gives the same run
"$rifl" sim net --topology leafspine:2x2x2 --load 0.8 --ber 1e-6 --time-us 10 \
  --warmup-us 2 --json --links --seed 3 > "$tmp/c.json"
cmp -s "$tmp/b.json" "$tmp/c.json" || fail "same seed, different output"

# a finite workload is labelled so
"$rifl" sim net --topology single:4 --bytes-per-flow 20KB --load 0.5 --json > "$tmp/f.json"
grep -q '"measure": "finite workload: 20000 bytes per flow' "$tmp/f.json" || fail "finite label"
[ "$(val finished "$tmp/f.json")" = true ] || fail "finite run not finished"
has '"measure": "steady state' "$rifl" sim net --time-us 5 --json || fail "window label"
# the window is the steady state's: a finite workload refuses it (but not
# --drain-us, its limit after the last message), unless a sweep varies it
expect_err "option --warmup-us: --warmup-us has no effect with --bytes-per-flow" \
  --topology single:4 --bytes-per-flow 20KB --warmup-us 2
expect_err "option --time-us: --time-us has no effect with --bytes-per-flow" \
  --topology single:4 --bytes-per-flow 20KB --time-us 2
printf 'bytes-per-flow = 20KB\ntime-us = 2\n' > "$tmp/f.conf"
expect_err "f.conf:2: time-us: --time-us has no effect with --bytes-per-flow" \
  --topology single:4 --config "$tmp/f.conf"
"$rifl" sim net --topology single:4 --bytes-per-flow 20KB --drain-us 500 --json > /dev/null ||
  fail "--drain-us with a finite workload"
"$rifl" sim net --topology single:4 --sweep "bytes-per-flow=0,4KB" --time-us 2 --warmup-us 1 \
  --csv > "$tmp/bf.csv" 2> "$tmp/bf.err" ||
  fail "the window with a sweep of bytes-per-flow: $(cat "$tmp/bf.err")"

# message sizes from a CDF file
printf '# sizes\n100 0.5\n700 1\n' > "$tmp/s.cdf"
"$rifl" sim net --topology single:4 --msg-cdf "$tmp/s.cdf" --time-us 5 --json > "$tmp/cdf.json"
grep -q '"msg_cdf": ' "$tmp/cdf.json" || fail "msg_cdf not in the JSON"
[ "$(val dropped "$tmp/cdf.json")" = 0 ] || fail "CDF run drops"
printf '100 0.5\n' > "$tmp/bad.cdf"
expect_err "must be 1" --msg-cdf "$tmp/bad.cdf"
expect_err "drop --msg-bytes" --msg-cdf "$tmp/s.cdf" --msg-bytes 100

# CSV and the summary
has "^load,ber,latency_p50_ns" "$rifl" sim net --time-us 5 --csv || fail csv
has "latency (from generation)" "$rifl" sim net --time-us 5 || fail summary

# sweeps: one row per point, the same output whatever the number of jobs
"$rifl" sim net --sweep "load=0.3,0.9 fc=voq,link" --time-us 5 --csv --jobs 1 > "$tmp/s1.csv"
"$rifl" sim net --sweep "load=0.3,0.9 fc=voq,link" --time-us 5 --csv --jobs 2 > "$tmp/s2.csv"
[ "$(wc -l < "$tmp/s1.csv")" = 5 ] || fail "sweep CSV rows: $(cat "$tmp/s1.csv")"
head -1 "$tmp/s1.csv" | grep -q "^load,fc,latency_p50_ns" || fail "sweep CSV header"
cmp -s "$tmp/s1.csv" "$tmp/s2.csv" || fail "sweep output depends on --jobs"
"$rifl" sim net --sweep "ber=0,1e-6" --time-us 5 --json > "$tmp/s.json"
[ "$(grep -c '"latency_ns"' "$tmp/s.json")" = 2 ] || fail "sweep JSON runs"
"$rifl" sim net --sweep "load=0.3:0.9:0.3" --time-us 5 --csv > "$tmp/p.csv"
"$rifl" plot "$tmp/p.csv" --x load --y latency_p99_ns,head_p99_ns --out "$tmp/p.png" > /dev/null ||
  fail "rifl plot of a sweep CSV"
[ -s "$tmp/p.png" ] || fail "no plot written"

# a topology file's links with settings of their own (docs/examples)
src=$3
"$rifl" sim net --topology "$src/docs/examples/rack-links.topo" --load 0.5 --time-us 100 \
  --links --json > "$tmp/own.json"
python3 - "$tmp/own.json" <<'PY' || fail "per-link settings: $(cat "$tmp/own.json")"
import json, sys
def once(pairs):
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), "a key twice: %s" % keys
    return dict(pairs)
d = json.load(open(sys.argv[1]), object_pairs_hook=once)
assert d["dropped"] == 0 and d["lost"] == 0 and d["corrupt"] == 0, d
assert d["link_count"] * 2 == len(d["links"]), d["link_count"]
links = {(l["from"], l["to"]): l for l in d["links"]}
bad = links[("leaf0:0", "a")]
assert bad["ber"] == 1e-6 and bad["replays"] > 0, bad
up = links[("leaf0:2", "spine:0")]
other = links[("leaf1:2", "spine:1")]
assert up["cable_m"] == 30 and other["cable_m"] == 2, (up, other)
assert up["delay_frames"] == other["delay_frames"] + 55, (up, other)  # 28 m more: 140 ns
for k, l in links.items():
    if k != ("leaf0:0", "a"):
        assert l["ber"] == 0 and l["replays"] == 0, l
    slow = "d" in k
    assert l["rate_gbps"] == (25 if slow else 100) and 0 < l["utilisation"] <= 1, l
    if slow:
        assert l["delay_frames"] == 9, l  # 90 ns in 10.24 ns slots
PY
"$rifl" sim switch --topology "$src/docs/examples/rack-links.topo" --json > /dev/null 2> "$tmp/sw.err" ||
  fail "sim switch on the same file: $(cat "$tmp/sw.err")"
grep -q "are for .rifl sim net." "$tmp/sw.err" || fail "sim switch warning: $(cat "$tmp/sw.err")"
expect_err "slower than the network's fastest" --topology "$src/docs/examples/rack-links.topo" \
  --pcap "$tmp/d.pcap" --pcap-host d
# links a topology file gives 200 Gbit/s: the capture and the summary are
# those of --link-gbps 200 (the frame slot of the fastest link is the step)
printf 'switch s0 4\nhost h0\nhost h1\nlink h0 s0:0 rate 200\nlink h1 s0:1 rate 200\n' \
  > "$tmp/fast.topo"
"$rifl" sim net --topology "$tmp/fast.topo" --pcap "$tmp/f1.pcap" --pcap-slots 1000 --time-us 5 \
  > /dev/null 2>&1 || fail "capture of a topology with link rates"
"$rifl" sim net --topology single:2 --link-gbps 200 --pcap "$tmp/f2.pcap" --pcap-slots 1000 \
  --time-us 5 > /dev/null 2>&1 || fail "capture at --link-gbps 200"
cmp -s "$tmp/f1.pcap" "$tmp/f2.pcap" || fail "captures of the same network at 200 Gbit/s differ"
"$rifl" sim net --topology "$tmp/fast.topo" --time-us 5 | grep -q "2 links at 200 Gbit/s" ||
  fail "summary of a topology with link rates does not give them"
printf 'switch s0 4\nhost h0\nhost h1\nlink h0 s0:0 rate 1 lanes 16\nlink h1 s0:1\n' > "$tmp/rt.topo"
expect_err "option --ber: 0.001 is not below 1e-3" --ber 0.001
expect_err "the link s0:0 - h0 has a round trip of 120005 cell times.*higher rate" \
  --topology "$tmp/rt.topo" --link-gbps 1000 --time-us 1
printf 'switch s 2\nhost a\nlink a s:0 cable 2000\n' > "$tmp/bad.topo"
expect_err "line 3: bad cable length '2000'" --topology "$tmp/bad.topo"

# a network that does not fit in memory gets a message naming the setting
# (2 GB of address space; not under AddressSanitizer, which needs far more;
# without the memory limit, which refuses it before allocating: see
# cli_sim_net_memory.sh)
if [ -z "${ASAN_OPTIONS:-}" ] && [ -z "${RIFL_TEST_SANITIZED:-}" ]; then
  rc=0
  (ulimit -v 2000000; "$rifl" sim net --nic-messages 16777216 --time-us 1 --max-memory-gb 0) \
    > /dev/null 2> "$tmp/oom.err" || rc=$?
  [ "$rc" = 2 ] && grep -q "out of memory for a network of 32 hosts.*--nic-messages" "$tmp/oom.err" ||
    fail "out of memory: exit $rc, $(cat "$tmp/oom.err")"
fi

# the NIC's host interface: the paper's PCIe DMA on top of the 17 cell times
"$rifl" sim net --load 0.05 --time-us 20 --pcie-gbps 90 --json > "$tmp/pcie.json"
grep -q '"pcie_gbps": 90, "pcie_rtt_ns": 2500' "$tmp/pcie.json" || fail "pcie fields: $(head -3 "$tmp/pcie.json")"
ok "$(val p50 "$tmp/pcie.json") > 4100 && $(val p50 "$tmp/pcie.json") < 4300" ||
  fail "latency with the host interface: $(grep latency_ns "$tmp/pcie.json")"
expect_err "add --pcie-gbps" --pcie-rtt-ns 100
expect_err "give 1 to 10000" --pcie-gbps 0.5

# --plot: a sweep of one setting drawn, its data and script beside the PNG
"$rifl" sim net --sweep "load=0.3,0.6" --time-us 5 --plot "$tmp/np.png" > /dev/null 2> "$tmp/np.err" ||
  fail "--plot: $(cat "$tmp/np.err")"
[ -s "$tmp/np.png" ] && [ "$(wc -l < "$tmp/np.csv")" = 3 ] && grep -q "head_p99_ns" "$tmp/np.gp" ||
  fail "--plot wrote: $(ls "$tmp")"
expect_err "not a number" --sweep "fc=voq,link" --plot "$tmp/x.png"
expect_err "of one setting" --sweep "load=0.3,0.6 ber=0,1e-6" --plot "$tmp/x.png"
expect_err "is not a column" --sweep "load=0.3,0.6" --plot "$tmp/x.png" --plot-y p99
expect_err "add --sweep" --plot "$tmp/x.png"

# refusals name the problem
expect_err "use voq, credit or link" --fc nope
expect_err "are for --fc credit" --vls 2
expect_err "are for --fc credit" --fc voq --credit-cells 8
expect_err "option --voq-cells: --voq-cells has no effect with --fc credit" --fc credit --voq-cells 4
expect_err "option --voq-cells: --voq-cells has no effect with --fc credit" --fc credit \
  --voq-cells 5000
"$rifl" sim net --topology single:4 --sweep "fc=voq,credit" --voq-cells 200 --time-us 2 \
  --warmup-us 1 --csv > "$tmp/vq.csv" 2> "$tmp/vq.err" ||
  fail "--voq-cells with a sweep of fc: $(cat "$tmp/vq.err")"
# an option the other settings make meaningless is refused, naming it,
# unless a sweep varies the setting that decides it
expect_err "option --burst-bytes: --burst-bytes has no effect with --traffic bernoulli" \
  --burst-bytes 2048
"$rifl" sim net --topology single:4 --sweep "traffic=bernoulli,bursty" --burst-bytes 2048 \
  --time-us 2 --warmup-us 1 --csv > "$tmp/bb.csv" 2> "$tmp/bb.err" ||
  fail "--burst-bytes with a sweep of traffic: $(cat "$tmp/bb.err")"
expect_err "option --incast: --incast has no effect with --pattern permutation" \
  --pattern permutation --incast 4
"$rifl" sim net --topology single:8 --sweep "pattern=uniform,incast" --incast 4 --time-us 2 \
  --warmup-us 1 --csv > "$tmp/ic.csv" 2> "$tmp/ic.err" ||
  fail "--incast with a sweep of pattern: $(cat "$tmp/ic.err")"

# credits per virtual lane: the run's VLs and credit in the JSON, nothing
# dropped at full load with bit errors, FCPs counted as flow-control frames
"$rifl" sim net --fc credit --vls 2 --topology leafspine:2x2x2 --load 1 --ber 1e-6 \
  --time-us 5 --warmup-us 2 --json --seed 2 > "$tmp/c.json"
[ "$(val fc "$tmp/c.json")" = credit ] || fail "credit: fc"
[ "$(val vls "$tmp/c.json")" = 2 ] || fail "credit: vls"
ok "$(val credit_cells "$tmp/c.json") > 0" || fail "credit: credit_cells"
[ "$(val dropped "$tmp/c.json")" = 0 ] && [ "$(val lost "$tmp/c.json")" = 0 ] || fail "credit drops"
ok "$(val fc_frames "$tmp/c.json") > 0" || fail "credit: no FCPs"
has "credits: 2 virtual lanes" "$rifl" sim net --fc credit --vls 2 --time-us 5 ||
  fail "credit: summary line"
# wide frames: flow-control and credit frames are read whatever F (at
# F = 512 and up they were left unread, and nothing was delivered)
for fc in credit voq; do
  "$rifl" sim net --fc $fc --frame-bits 1024 --pattern incast --incast 6 --load 1 --time-us 5 \
    --warmup-us 2 --json > "$tmp/wide.json" || fail "F=1024 --fc $fc run"
  [ "$(val dropped "$tmp/wide.json")" = 0 ] && [ "$(val lost "$tmp/wide.json")" = 0 ] &&
    [ "$(val generated_cells "$tmp/wide.json")" = "$(val delivered_cells "$tmp/wide.json")" ] &&
    ok "$(val delivered_cells "$tmp/wide.json") > 0" || fail "F=1024 --fc $fc: $(cat "$tmp/wide.json")"
done
# sources that fall behind (a NIC of one message, an incast): the run is
# not over until they have made every message of the window
"$rifl" sim net --pattern incast --incast 8 --load 1 --nic-messages 1 --warmup-us 40 \
  --time-us 10 --json > "$tmp/lag.json" || fail "lagging sources run"
ok "$(val generated_cells "$tmp/lag.json") > 0" &&
  [ "$(val generated_cells "$tmp/lag.json")" = "$(val delivered_cells "$tmp/lag.json")" ] ||
  fail "a window of lagging sources ended before their messages: $(cat "$tmp/lag.json")"
# with the host interface a source waits (and counts a stall) at most once
# per cell time, however many of its messages wait for the NIC behind it
"$rifl" sim net --pattern incast --incast 8 --load 1 --nic-messages 16 --pcie-gbps 90 \
  --warmup-us 5 --time-us 20 --json > "$tmp/dma.json" || fail "host interface run"
ok "$(val source_stalls "$tmp/dma.json") > 0" &&
  ok "$(val source_stalls "$tmp/dma.json") <= 8 * $(val sim_us "$tmp/dma.json") * 1000 / $(val cell_ns "$tmp/dma.json")" ||
  fail "more stalls than cell times of the sources: $(cat "$tmp/dma.json")"
# a run whose sources never made the window's messages says so
"$rifl" sim net --pattern incast --incast 8 --load 1 --nic-messages 1 --pcie-gbps 90 \
  --warmup-us 5 --time-us 20 --drain-us 50 --json > "$tmp/behind.json" || fail "behind run"
[ "$(val finished "$tmp/behind.json")" = false ] && [ "$(val lagging_sources "$tmp/behind.json")" = 8 ] &&
  ok "$(val source_lag_us "$tmp/behind.json") > 0" ||
  fail "lagging sources not reported: $(cat "$tmp/behind.json")"
has "8 sources had not made all of the window's messages" "$rifl" sim net --pattern incast \
  --incast 8 --load 1 --nic-messages 1 --pcie-gbps 90 --warmup-us 5 --time-us 20 --drain-us 50 ||
  fail "summary lacks the lagging sources"
[ "$(val lagging_sources "$tmp/lag.json")" = 0 ] || fail "lagging sources in a finished run"
expect_err "use uniform, permutation" --pattern x
expect_err "incast" --topology single:4 --pattern incast --incast 3
expect_err "load" --load 0
expect_err "topology" --topology leafspine:0x1x1
expect_err "not both" --msg-bytes 100 --msg-min 10
# an empty size range names the setting that made it: the swept one, else
# the one given
expect_err "option --sweep (point 1: msg-max=100): msg-max 100 is below --msg-min 252 (its default)" \
  --sweep "msg-max=100,300"
expect_err "option --sweep (point 2: msg-min=300): msg-min 300 is above --msg-max 252 (its default)" \
  --sweep "msg-min=100,300"
expect_err "option --sweep (point 1: msg-max=100): msg-max 100 is below --msg-min 150," \
  --msg-min 150 --sweep "msg-max=100,300"
expect_err "option --msg-min: msg-min 300 is above --msg-max 252 (its default)" --msg-min 300
expect_err "option --msg-min and option --msg-max: the range 300..200 is empty" \
  --msg-min 300 --msg-max 200
expect_err "add --sweep" --jobs 2
expect_err "not a run" --sweep "topology=single:4,single:8"
expect_err "'msg-cdf' cannot be swept" --sweep "msg-cdf=a.cdf,b.cdf"
# a value out of range names where it came from
printf 'ber = 0.01\n' > "$tmp/ber.conf"
expect_err "ber.conf:1: 'ber' = 0.01 is out of range" --config "$tmp/ber.conf"
expect_err "option --load: 'load' = 2 is out of range" --load 2
expect_err "drop one of them" --sweep "load=0.1,0.2" --pcap "$tmp/x.pcap"
expect_err "add --pcap" --pcap-host h1
expect_err "add --pcap" --sweep "load=0.1,0.2" --pcap-host h1
expect_err "add --pcap" --sweep "load=0.1,0.2" --pcap-slots 5
# bonded links: four lanes a link, replays on each, nothing lost, each link
# reports its lanes; bad lane counts and groups are refused, and so is a
# capture of a bonded link
"$rifl" sim net --topology leafspine:2x2x2 --lanes 4 --group-lanes 2 --load 0.5 \
  --ber 1e-6 --time-us 10 --warmup-us 2 --json --links > "$tmp/bond.json"
[ "$(val lanes "$tmp/bond.json")" = 4 ] || fail "lanes not reported"
[ "$(val group_lanes "$tmp/bond.json")" = 2 ] || fail "group_lanes not reported"
[ "$(val dropped "$tmp/bond.json")" = 0 ] && [ "$(val lost "$tmp/bond.json")" = 0 ] &&
  [ "$(val corrupt "$tmp/bond.json")" = 0 ] || fail "bonded drops"
[ "$(val finished "$tmp/bond.json")" = true ] || fail "bonded run unfinished"
ok "$(val replays "$tmp/bond.json") > 0" || fail "no replays on bonded links at BER 1e-6"
grep -q '"lanes": 4, "cable_m"' "$tmp/bond.json" || fail "links lack their lanes"
# the example rack of bonded links runs clean
"$rifl" sim net --topology "$src/docs/examples/rack-bonded.topo" --group-lanes 1 --load 0.5 \
  --ber 1e-7 --time-us 20 --json --links > "$tmp/rb.json"
[ "$(val dropped "$tmp/rb.json")" = 0 ] && [ "$(val lost "$tmp/rb.json")" = 0 ] ||
  fail "rack-bonded drops"
[ "$(grep -c '"lanes": 4, "cable_m"' "$tmp/rb.json")" = 20 ] || fail "rack-bonded: not 20 bonded link directions"
expect_err "use 1, 2, 4, 8 or 16" --lanes 3
expect_err "group-lanes" --lanes 4 --group-lanes 8
expect_err "link of one lane" --lanes 2 --pcap "$tmp/b.pcap"
# --group-lanes needs a bonded link: --lanes, a topology file's, or a sweep
expect_err "option --group-lanes: --group-lanes has no effect without bonded links" \
  --group-lanes 2
printf 'switch s0 4\nhost h0\nhost h1\nlink h0 s0:0 lanes 1\nlink h1 s0:1 lanes 1\n' > "$tmp/one.topo"
expect_err "option --group-lanes: --group-lanes has no effect without bonded links (the topology file gives every link one lane" \
  --topology "$tmp/one.topo" --lanes 4 --group-lanes 2
# a setting every link of the topology file gives for itself changes nothing
expect_err "option --lanes: --lanes has no effect with this topology file (every link gives its own 'lanes')" \
  --topology "$tmp/one.topo" --lanes 4
printf 'switch s0 4\nhost h0\nhost h1\nlink h0 s0:0 cable 3\nlink h1 s0:1 cable 4 ber 1e-9\n' > "$tmp/cab.topo"
expect_err "option --cable-m: --cable-m has no effect with this topology file (every link gives its own 'cable')" \
  --topology "$tmp/cab.topo" --cable-m 7
"$rifl" sim net --topology "$tmp/cab.topo" --ber 1e-8 --lanes 2 --time-us 2 --warmup-us 1 \
  > /dev/null 2> "$tmp/cab.err" || fail "--ber and --lanes where a link takes them: $(cat "$tmp/cab.err")"
"$rifl" sim net --topology "$tmp/one.topo" --sweep "lanes=1,2" --time-us 2 --warmup-us 1 \
  --csv > /dev/null 2> "$tmp/one.err" || fail "a sweep of --lanes: $(cat "$tmp/one.err")"
"$rifl" sim net --topology single:4 --sweep "lanes=1,2" --group-lanes 2 --time-us 2 \
  --warmup-us 1 --csv > "$tmp/gl.csv" 2> "$tmp/gl.err" ||
  fail "--group-lanes with a sweep of lanes: $(cat "$tmp/gl.err")"

# the benchmark runs and reports its rates
"$rifl" bench net --us 5 --json > "$tmp/bench.json"
ok "$(val lane_slots_per_s "$tmp/bench.json") > 0 && $(val cell_hops_per_s "$tmp/bench.json") > 0" ||
  fail "bench net: $(cat "$tmp/bench.json")"
echo "cli_sim_net: ok"
