#!/usr/bin/env bash
# Runs every `rifl bench ...` command the tool has, one after the other.
# usage: bench/run.sh [path/to/rifl] [extra options passed to every bench]
set -euo pipefail
rifl=${1:-./build/rifl}
shift || true
benches=$("$rifl" --help | awk '$1 == "bench" {print $2}')
[ -n "$benches" ] || { echo "no benchmarks found in $rifl" >&2; exit 1; }
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -m) $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for b in $benches; do
  echo "## rifl bench $b"
  "$rifl" bench "$b" "$@"
  # the switch's second target is at 256 ports
  if [ "$b" = switch ]; then
    echo "## rifl bench switch --ports 256"
    "$rifl" bench switch --ports 256 --slots 100000 "$@"
  fi
done
