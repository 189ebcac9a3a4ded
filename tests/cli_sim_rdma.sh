#!/usr/bin/env bash
# CLI checks for `rifl sim rdma`: the JSON keys, writes, reads and sends
# verified byte for byte, near the route's capacity; retransmission after
# damaged payloads and lost cells; a transfer into another protection domain
# refused without touching memory; clear refusals.
# usage: cli_sim_rdma.sh RIFL_BINARY VECTORS_DIR SOURCE_DIR
set -euo pipefail
rifl=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# has WANT CMD...: CMD succeeds and its output holds WANT (the output is
# read whole, never cut off by a pipe)
has() { local want=$1; shift; "$@" > "$tmp/has.out" && grep -q -- "$want" "$tmp/has.out"; }
# json FILE EXPR: FILE parses as JSON and EXPR (on it as d) holds
json() {
  python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert eval(sys.argv[2]), {k: d.get(k) for k in ("throughput_gbps", "capacity_gbps", "ratio",
    "verified", "finished", "completions", "failed", "first_error", "retransmitted_blocks",
    "nacks", "timeouts")}' "$1" "$2"
}

has "--op" "$rifl" sim rdma --help || fail "--help lacks --op"
grep -q -- "--fault" "$tmp/has.out" || fail "--help lacks --fault"

# small runs: 2 MB per sender in transfers of 64 KiB
small=(--bytes 2MB --size 64KiB --seed 1)
has "verified: yes" "$rifl" sim rdma "${small[@]}" || fail "write run not verified: $(cat "$tmp/has.out")"

# the JSON summary: its keys, verified, and near what the route carries
"$rifl" sim rdma "${small[@]}" --json > "$tmp/w.json" || fail "write --json run"
for k in throughput_gbps capacity_gbps ratio verified retransmitted_blocks nacks timeouts \
         completions; do
  json "$tmp/w.json" "'$k' in d" || fail "JSON lacks $k: $(cat "$tmp/w.json")"
done
json "$tmp/w.json" 'd["verified"] is True and d["completions"] > 0 and d["failed"] == 0' ||
  fail "write run not verified"
json "$tmp/w.json" 'd["ratio"] >= 0.9 and 0 < d["throughput_gbps"] <= d["capacity_gbps"]' ||
  fail "write throughput below 0.9 of capacity"

# reads and sends to a mailbox
has "verified: yes" "$rifl" sim rdma "${small[@]}" --op read || fail "read run not verified: $(cat "$tmp/has.out")"
has "verified: yes" "$rifl" sim rdma --bytes 200KB --op send --size 200 --seed 1 ||
  fail "send run not verified: $(cat "$tmp/has.out")"
# sends under 8 bytes (no room for their flow and number): each checked
# against its sender's messages not yet seen
for args in "--size 1" "--size 4" "--size 7" "--size 4 --mapping compact" \
            "--size 3 --senders 3 --flows 5" "--size 4 --net single:3"; do
  # shellcheck disable=SC2086
  has "verified: yes" "$rifl" sim rdma --op send --bytes 4KB $args ||
    fail "send run ($args) not verified: $(cat "$tmp/has.out")"
done
# sends whose ACKs are lost, resent after their receive contexts went to
# other blocks: ACKed again, never in the mailbox twice (each message of 8
# bytes or more checked against its flow's last number seen), and every
# send completed without an error found in the mailbox
for args in "--size 6 --bytes 4KB --seed 1" "--size 32 --bytes 200KB --seed 1" \
            "--size 100 --bytes 400KB --seed 1"; do
  # shellcheck disable=SC2086
  has "verified: yes" "$rifl" sim rdma --op send --fault page-fault:0.5,drop:0.1 $args ||
    fail "lossy send run ($args) not verified: $(cat "$tmp/has.out")"
  # shellcheck disable=SC2086
  "$rifl" sim rdma --op send --fault drop:0.1 $args --json > "$tmp/acked.json" 2>/dev/null ||
    fail "lossy send run ($args) exit status"
  grep -q '"acked_missing": 0,' "$tmp/acked.json" ||
    fail "lossy send run ($args): acknowledged sends missing: $(cat "$tmp/acked.json")"
done

# damaged payloads: NACKed, the blocks sent again, every byte right
"$rifl" sim rdma "${small[@]}" --fault payload-crc:0.01 --json > "$tmp/crc.json" ||
  fail "payload-crc run"
json "$tmp/crc.json" 'd["retransmitted_blocks"] > 0 and d["nacks"] > 0' ||
  fail "no retransmission with damaged payloads"
json "$tmp/crc.json" 'd["verified"] is True and d["failed"] == 0' || fail "payload-crc run not verified"

# lost cells: the blocks time out and go again, every byte right
"$rifl" sim rdma "${small[@]}" --fault drop:0.001 --json > "$tmp/drop.json" || fail "drop run"
json "$tmp/drop.json" 'd["timeouts"] > 0 and d["retransmitted_blocks"] > 0' ||
  fail "no timeouts with lost cells"
json "$tmp/drop.json" 'd["verified"] is True and d["failed"] == 0' || fail "drop run not verified"

# the target in another domain: every transfer fails with the remote's
# refusal, the target's memory untouched, and the run itself succeeds
"$rifl" sim rdma "${small[@]}" --fault pd --json > "$tmp/pd.json" || fail "pd run exit status $?"
json "$tmp/pd.json" 'd["completions"] > 0 and d["failed"] == d["completions"]' ||
  fail "pd run: not every transfer failed"
json "$tmp/pd.json" 'd["first_error"] == "E_REMOTE_PROTECTION"' || fail "pd run: first_error"
json "$tmp/pd.json" 'd["verified"] is True' || fail "pd run: memory touched"
# reads: the data's node refuses the request, the reader's memory untouched
"$rifl" sim rdma "${small[@]}" --fault pd --op read --json > "$tmp/pdr.json" ||
  fail "pd read run exit status $?"
json "$tmp/pdr.json" 'd["completions"] > 0 and d["failed"] == d["completions"] and d["first_error"] == "E_REMOTE_PROTECTION" and d["verified"] is True' ||
  fail "pd read run"

# the mappings: one packet per cell, and compact bundles carrying more than
# the spec's over the same link
"$rifl" sim rdma "${small[@]}" --mapping cell --json > "$tmp/cell.json" || fail "cell mapping run"
json "$tmp/cell.json" 'd["verified"] is True and d["mapping"] == "cell" and d["cells"] == d["bundles"]' ||
  fail "cell mapping run"
"$rifl" sim rdma "${small[@]}" --mapping compact --json > "$tmp/compact.json" ||
  fail "compact mapping run"
json "$tmp/compact.json" 'd["verified"] is True and d["bundle_packets"] == 11' ||
  fail "compact mapping run"
python3 -c 'import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert b["throughput_gbps"] > 1.02 * a["throughput_gbps"], (a["throughput_gbps"], b["throughput_gbps"])' \
  "$tmp/w.json" "$tmp/compact.json" || fail "compact mapping not faster than bundles"

# over a sim net network: NICs, a switch and lanes; near capacity, bytes
# verified, link errors repaired by replays underneath
net=(--net single:4 --link-gbps 100 --bytes 4MB --seed 1)
"$rifl" sim rdma "${net[@]}" --json > "$tmp/net.json" || fail "network run"
json "$tmp/net.json" 'd["verified"] is True and d["net"] == "single:4" and d["ratio"] >= 0.97' ||
  fail "network run below 0.97 of capacity or not verified: $(cat "$tmp/net.json")"
"$rifl" sim rdma "${net[@]}" --ber 1e-6 --op read --paths 2 --json > "$tmp/ber.json" ||
  fail "network run with bit errors"
json "$tmp/ber.json" 'd["replays"] > 0 and d["verified"] is True and d["retransmitted_blocks"] == 0' ||
  fail "bit errors not repaired by the links alone: $(cat "$tmp/ber.json")"
# a topology file whose links give their own rates: the capacity is theirs
# (here 100 Gbit/s against --link-gbps 10), and the ratio stays below 1
printf 'switch s0 4\nhost h0\nhost h1\nlink h0 s0:0 rate 100\nlink h1 s0:1 rate 100\n' \
  > "$tmp/r100.topo"
"$rifl" sim rdma --net "$tmp/r100.topo" --bytes 2MB --size 64k --json > "$tmp/r100.json" ||
  fail "network run over a topology with link rates"
json "$tmp/r100.json" 'd["verified"] is True and 70 < d["capacity_gbps"] < 80 and 0.9 < d["ratio"] <= 1' ||
  fail "capacity of a topology's own link rates: $(cat "$tmp/r100.json")"
# bonded links of four lanes, errors on each: still verified, the links
# repair them
"$rifl" sim rdma "${net[@]}" --lanes 4 --group-lanes 1 --ber 1e-6 --json > "$tmp/bond.json" ||
  fail "network run over bonded links"
json "$tmp/bond.json" 'd["lanes"] == 4 and d["group_lanes"] == 1 and d["replays"] > 0 and d["verified"] is True and d["retransmitted_blocks"] == 0' ||
  fail "bonded links: $(cat "$tmp/bond.json")"
has "verified: yes" "$rifl" sim rdma --net leafspine:2x2x2 --senders 3 --paths 2 --op send \
  --size 200 --bytes 100KB --link-gbps 100 || fail "send over a leaf-spine: $(cat "$tmp/has.out")"

# an incast of writes with a victim flow from one of the senders: per-VOQ
# flow control lets the victim through, link-level flow control holds it
# behind the congested destination (head-of-line blocking)
inc=(--net single:6 --senders 4 --victim --flows 8 --bytes 2MB --link-gbps 100 --seed 1)
"$rifl" sim rdma "${inc[@]}" --fc voq --json > "$tmp/voq.json" || fail "incast, per-VOQ"
"$rifl" sim rdma "${inc[@]}" --fc link --json > "$tmp/link.json" || fail "incast, link-level"
"$rifl" sim rdma "${inc[@]}" --fc credit --json > "$tmp/credit.json" || fail "incast, credit"
python3 -c 'import json, sys
v, l, c = (json.load(open(p)) for p in sys.argv[1:4])
for d in (v, l, c):
    assert d["verified"] and d["ratio"] >= 0.95, d
assert c["fc"] == "credit" and c["vls"] == 4, (c["fc"], c.get("vls"))
assert v["victim_gbps"] > 2.5 * l["victim_gbps"], (v["victim_gbps"], l["victim_gbps"])
# the victim (host 5) is on VL 1, the congested host 0 on VL 0
assert c["victim_gbps"] > 2.5 * l["victim_gbps"], (c["victim_gbps"], l["victim_gbps"])
assert l["victim_gbps"] < 1.2 * l["sender_gbps_max"], (l["victim_gbps"], l["sender_gbps_max"])' \
  "$tmp/voq.json" "$tmp/link.json" "$tmp/credit.json" || fail "victim flow: per-VOQ, credit, link-level"

# reads from several senders: host 0 posts all of them in its one domain
"$rifl" sim rdma --op read --senders 3 --flows 16 --size 4096 --bytes 131072 > "$tmp/r3.txt" 2>&1 ||
  fail "reads from 3 senders: $(tail -2 "$tmp/r3.txt")"
grep -q "verified: yes" "$tmp/r3.txt" || fail "reads from 3 senders not verified"

# large reads queue longer than 100 ms behind each other: none times out
"$rifl" sim rdma --op read --size 4194304 --flows 32 --bytes 268435456 > "$tmp/rl.txt" 2>&1 ||
  fail "large reads: $(tail -3 "$tmp/rl.txt")"
grep -q "(0 failed)" "$tmp/rl.txt" && grep -q "verified: yes" "$tmp/rl.txt" ||
  fail "large reads timed out: $(cat "$tmp/rl.txt")"

# refusals: exit status 2, naming the option
expect_err() {
  local want=$1; shift
  local rc=0
  "$rifl" sim rdma --bytes 2MB "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
  [ "$rc" = 2 ] || fail "exit status $rc, not 2, for: $*"
  grep -q -- "$want" "$tmp/err" || fail "message for '$*' lacks '$want': $(cat "$tmp/err")"
}
expect_err "--op" --op bogus
# a network too big for the memory limit is refused before it is built
expect_err "more than the limit of 0.1 GB.*--max-memory-gb" --net fattree:16 --paths 32 --max-memory-gb 0.1
expect_err "--max-memory-gb has no effect without --net" --max-memory-gb 1
expect_err "--fault" --fault nonsense:0.1
expect_err "--fault" --fault drop:2
expect_err "--frame-bits" --frame-bits 100
expect_err "option --size" --op send --size 300
expect_err "--mapping" --mapping bogus
expect_err "--mapping" --mapping compact --fault payload-crc:0.01
expect_err "--bundle" --mapping cell --bundle 7
expect_err "hold at most 224" --op send --mapping cell --size 225 --flows 2
expect_err "cell mapping over a network" --net single:4 --mapping cell
expect_err "--max-s" --net single:4 --max-s 2000
expect_err "--hops" --net single:4 --hops 2
expect_err "--victim" --victim
expect_err "--fc" --net single:4 --fc onoff
expect_err "--vls" --net single:4 --vls 2
expect_err "--credit-cells" --net single:4 --fc voq --credit-cells 8
expect_err "--senders" --net single:4 --senders 3 --victim
expect_err "--fault" --net single:4 --fault drop:0.01
expect_err "--net" --net nope:3
expect_err "--lanes" --lanes 4
expect_err "--group-lanes" --net single:4 --lanes 4 --group-lanes 8
expect_err "option --lanes: lanes is 3" --net single:4 --lanes 3
expect_err "option --group-lanes: --group-lanes has no effect without bonded links" \
  --net single:4 --group-lanes 4
printf 'switch s0 4\nhost h0\nhost h1\nlink h0 s0:0 lanes 2\nlink h1 s0:1 lanes 2\n' \
  > "$tmp/l2.topo"
has "verified: yes" "$rifl" sim rdma --net "$tmp/l2.topo" --group-lanes 2 --bytes 1MB ||
  fail "--group-lanes over a topology file's bonded links: $(cat "$tmp/has.out")"
expect_err "option --group-lanes: group_lanes is 8" --net single:4 --lanes 4 --group-lanes 8
expect_err "option --lanes: --lanes has no effect with this topology file (every link gives its own 'lanes')" \
  --net "$tmp/l2.topo" --lanes 4
expect_err "choose one output format" --json --csv
expect_err "option --link-gbps: 0.5 Gbit/s: with --net" --net single:4 --link-gbps 0.5
expect_err "would have no effect" --size 4096 --sizes 256,512
expect_err "separated by commas" --sizes 256,512,
expect_err "holds at most 1024; lower flows or senders" --op read --senders 3 --flows 1024
# a run estimated above a minute says so before it starts (stopped here
# after the warning); a default run does not
rc=0; timeout 3 "$rifl" sim rdma --bytes 100000000000 > /dev/null 2> "$tmp/long.err" || rc=$?
[ "$rc" = 124 ] && grep -q "warning: this run is estimated to take about 2.1 min" "$tmp/long.err" \
  || fail "no estimate warning for a long run (exit $rc): $(cat "$tmp/long.err")"
"$rifl" sim rdma --bytes 2MB > /dev/null 2> "$tmp/short.err"
! grep -q warning "$tmp/short.err" || fail "a short run warned: $(cat "$tmp/short.err")"
echo "cli_sim_rdma: ok"
