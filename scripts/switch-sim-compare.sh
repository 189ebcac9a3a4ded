#!/usr/bin/env bash
# Runs `rifl sim switch` over a set of configurations with two builds and
# compares the outputs byte for byte (the wall-clock seconds of the summary
# aside): a change to the simulator's speed must not change its results.
# usage: scripts/switch-sim-compare.sh OLD_RIFL NEW_RIFL [SOURCE_DIR]
set -euo pipefail
old=$1
new=$2
src=${3:-$(cd "$(dirname "$0")/.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a chain of three switches, so that flow control from a downstream switch
# pauses queues (small VOQs and a long middle link make it happen)
cat > "$tmp/chain.topo" <<'T'
switch a 4
switch b 4
switch c 4
host a0
host a1
host a2
host c0
host c1
host c2
host b0
link a0 a:0
link a1 a:1
link a2 a:2
link c0 c:0
link c1 c:1
link c2 c:2
link b0 b:0
link a:3 b:1 delay 30
link b:2 c:3 delay 3
T

configs=(
  "--ports 4 --bytes-per-pair 200KB"
  "--ports 4 --scheduler safc --bytes-per-pair 200KB --load 1"
  "--ports 32 --bytes-per-pair 40KB"
  "--ports 32 --bytes-per-pair 40KB --load 0.3"
  "--ports 32 --bytes-per-pair 40KB --load 1"
  "--ports 32 --bytes-per-pair 40KB --load 1 --iterations 1"
  "--ports 32 --bytes-per-pair 40KB --load 0.95 --iterations 8"
  "--ports 32 --bytes-per-pair 40KB --scheduler safc"
  "--ports 32 --bytes-per-pair 40KB --traffic bursty --burst-bytes 4096"
  "--ports 32 --bytes-per-pair 40KB --traffic bursty --scheduler safc --load 1"
  "--ports 32 --bytes-per-pair 40KB --packet-bytes 0 --var-min 64 --var-max 2048"
  "--ports 32 --bytes-per-pair 40KB --packet-bytes 1024 --load 1"
  "--ports 32 --bytes-per-pair 40KB --host-queue fifo --load 1"
  "--ports 32 --bytes-per-pair 40KB --host-queue fifo --traffic bursty --host-fifo-cells 4"
  "--ports 32 --bytes-per-pair 40KB --voq-cells 40 --fc-on 4 --fc-off 1 --load 1"
  "--ports 32 --bytes-per-pair 40KB --voq-cells 40 --fc-on 4 --fc-off 1 --host-queue fifo --traffic bursty"
  "--ports 32 --bytes-per-pair 40KB --no-fabric-check --load 1"
  "--ports 32 --bytes-per-pair 40KB --latency 101 --load 1"
  "--ports 32 --bytes-per-pair 40KB --max-slots 3000 --load 1"
  "--ports 33 --bytes-per-pair 20KB --load 1 --seed 7"
  "--ports 64 --bytes-per-pair 10KB --load 1"
  "--ports 65 --bytes-per-pair 10KB --load 0.9 --traffic bursty"
  "--ports 100 --bytes-per-pair 4KB --scheduler safc --load 1"
  "--ports 256 --bytes-per-pair 2KB"
  "--ports 256 --bytes-per-pair 2KB --load 1 --seed 3"
  "--ports 256 --bytes-per-pair 2KB --load 0.3"
  "--ports 256 --bytes-per-pair 2KB --scheduler safc --load 1"
  "--ports 256 --bytes-per-pair 2KB --traffic bursty --host-queue fifo"
  "--ports 256 --bytes-per-pair 4KB --load 1 --voq-cells 30 --fc-on 3 --fc-off 1"
  "--topology $src/docs/examples/two-racks.topo --bytes-per-pair 200KB --load 1"
  "--topology $src/docs/examples/two-racks.topo --bytes-per-pair 200KB --scheduler safc --traffic bursty"
  "--topology $tmp/chain.topo --bytes-per-pair 100KB --load 1 --voq-cells 100 --fc-on 8 --fc-off 2"
  "--topology $tmp/chain.topo --bytes-per-pair 100KB --load 1 --host-queue fifo --traffic bursty"
  "--topology $tmp/chain.topo --bytes-per-pair 100KB --load 1 --scheduler safc --voq-cells 100 --fc-on 8"
)
n=0
if [ -n "${VERBOSE:-}" ]; then for c in "${configs[@]}"; do echo "== $c"; "$new" sim switch $c --csv 2>&1 | tail -1 || true; done; fi
bad=0
for c in "${configs[@]}"; do
  for fmt in --json --csv; do
    # shellcheck disable=SC2086
    "$old" sim switch $c $fmt > "$tmp/old" 2> /dev/null || true
    # shellcheck disable=SC2086
    "$new" sim switch $c $fmt > "$tmp/new" 2> /dev/null || true
    n=$((n + 1))
    if ! cmp -s "$tmp/old" "$tmp/new"; then
      echo "DIFFERENT: $c $fmt"
      diff "$tmp/old" "$tmp/new" | head -10
      bad=$((bad + 1))
    fi
  done
done
# sweeps (the human summary too, without its wall time)
sweeps=(
  "--ports 16 --bytes-per-pair 20KB --csv --sweep load=0.1:1:0.1"
  "--ports 16 --bytes-per-pair 20KB --json --sweep scheduler=islip,safc traffic=bernoulli,bursty load=0.5,1"
  "--ports 8 --bytes-per-pair 20KB --sweep seed=1:4:+1 host-queue=per-dest,fifo"
)
# a build with --jobs runs each sweep one point at a time and three at once
jobs=("")
if "$new" sim switch --help | grep -q -- --jobs; then jobs=("--jobs 1" "--jobs 3"); fi
for c in "${sweeps[@]}"; do
  # shellcheck disable=SC2086
  "$old" sim switch $c 2> /dev/null | sed 's/, [0-9.]* s wall$//' > "$tmp/old" || true
  for j in "${jobs[@]}"; do
    # shellcheck disable=SC2086
    "$new" sim switch $c $j 2> /dev/null | sed 's/, [0-9.]* s wall$//' > "$tmp/new" || true
    n=$((n + 1))
    if ! cmp -s "$tmp/old" "$tmp/new"; then
      echo "DIFFERENT: $c $j"
      diff "$tmp/old" "$tmp/new" | head -10
      bad=$((bad + 1))
    fi
  done
done
echo "switch-sim-compare: $((n - bad)) of $n outputs identical"
[ "$bad" -eq 0 ]
