#!/usr/bin/env bash
# CLI checks for the memory limit of `rifl sim net` (--max-memory-gb): a
# network whose estimate is above it is refused at once, before anything
# is allocated, with the estimate in GB and the fix; one below it runs.
# usage: cli_sim_net_memory.sh RIFL_BINARY VECTORS_DIR SOURCE_DIR
set -euo pipefail
rifl=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { awk "BEGIN { exit !($1) }"; }

# refused WANT ARGS...: exit 2 within 10 s, nothing on stdout, WANT (an
# extended regular expression) on stderr.  Outside the sanitizers the
# address space is held to 4 GB too: a network allocated in spite of its
# estimate then fails on that, with another message, instead of taking
# the machine's memory.
refused() {
  local want=$1 rc=0
  shift
  if [ -z "${ASAN_OPTIONS:-}" ] && [ -z "${RIFL_TEST_SANITIZED:-}" ]; then
    (ulimit -v 4000000; timeout 10 "$rifl" sim net "$@") > "$tmp/out" 2> "$tmp/err" || rc=$?
  else
    timeout 10 "$rifl" sim net "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
  fi
  [ "$rc" != 124 ] || fail "not refused within 10 s: $*"
  [ "$rc" = 2 ] || fail "exit $rc, want 2: $* ($(cat "$tmp/err"))"
  [ ! -s "$tmp/out" ] || fail "printed on stdout before refusing: $*"
  grep -Eq -- "$want" "$tmp/err" || fail "message for '$*' lacks '$want': $(cat "$tmp/err")"
}
# the estimate, GB, from the message of the last refusal
estimate() { sed -n 's/.*would take about \([0-9.e+]*\) GB of memory.*/\1/p' "$tmp/err"; }

# the large fat tree: about 11 GB, above the default limit of 8 GB; the
# message names every fix (fewer paths, a smaller topology, a higher limit)
refused "would take about [0-9.]+ GB of memory, more than the limit of 8 GB" \
  --topology fattree:22 --paths 64
for want in "2662 hosts, 64 paths per host pair" "routes [0-9.]+ GB" \
            "NIC receive contexts [0-9.]+ GB" "fewer paths per host pair .*--paths" \
            "a smaller topology" "--max-memory-gb; 0: none"; do
  grep -Eq -- "$want" "$tmp/err" || fail "fattree:22 message lacks '$want': $(cat "$tmp/err")"
done
est=$(estimate)
# 2662^2 pairs x 64 paths: 7 bytes of route and 16 of receive context each
ok "$est > 10 && $est < 13" || fail "fattree:22, 64 paths: estimate $est GB"
# a limit given is the one applied and named
refused "more than the limit of 2.5 GB" --topology fattree:22 --paths 64 --max-memory-gb 2.5
# a config file gives it as well
printf 'max-memory-gb = 5\n' > "$tmp/m.conf"
refused "more than the limit of 5 GB" --topology fattree:22 --paths 64 --config "$tmp/m.conf"

# message slots: the fix is --nic-messages (32 NICs x 2^24 messages)
refused "would take about [0-9.]+ GB.*fewer messages per NIC .*--nic-messages" \
  --nic-messages 16777216 --time-us 1

# a small network under the limit runs, with the default limit and without
# one, and gives the same results both ways
"$rifl" sim net --topology fattree:4 --time-us 2 --json > "$tmp/a.json" ||
  fail "fattree:4 under the default limit"
"$rifl" sim net --topology fattree:4 --time-us 2 --json --max-memory-gb 0 > "$tmp/b.json" ||
  fail "fattree:4 without a limit"
grep -q '"finished": true' "$tmp/a.json" || fail "fattree:4 did not finish"
cmp -s "$tmp/a.json" "$tmp/b.json" || fail "the limit changed the results"
# ... and is refused by a limit below its estimate
refused "would take about [0-9.e-]+ GB of memory, more than the limit of 1e-05 GB" \
  --topology fattree:4 --max-memory-gb 0.00001

# a sweep checks every point before any runs: the point above the limit is named
refused "point 2 of option --sweep: this network would take about" \
  --topology fattree:8 --sweep paths=1,64 --max-memory-gb 0.05 --time-us 1

# the limit itself: a number from 0 up
refused "option --max-memory-gb" --max-memory-gb -1
refused "option --max-memory-gb" --max-memory-gb nan

# points run at once add up: three points of about 0.047 GB each under a
# limit of 0.1 GB run two at a time, said on stderr, all three printed
"$rifl" sim net --topology fattree:8 --time-us 1 --sweep load=0.1,0.2,0.3 --jobs 3 \
  --max-memory-gb 0.1 --csv > "$tmp/j.csv" 2> "$tmp/j.err" || fail "sweep under a shared limit"
grep -q "^note: 3 sweep points at once could take about 0.1[0-9]* GB, more than the limit of 0.1 GB (option --max-memory-gb); running 2 at a time" \
  "$tmp/j.err" || fail "jobs under the memory limit: $(cat "$tmp/j.err")"
[ "$(wc -l < "$tmp/j.csv")" = 4 ] || fail "sweep under a shared limit: $(cat "$tmp/j.csv")"
# with room for all of them, no note
"$rifl" sim net --topology fattree:8 --time-us 1 --sweep load=0.1,0.2,0.3 --jobs 3 \
  --max-memory-gb 0.2 --csv > "$tmp/j.csv" 2> "$tmp/j.err" || fail "sweep with room"
! grep -q "at a time" "$tmp/j.err" || fail "a note although all points fit: $(cat "$tmp/j.err")"
echo "cli_sim_net_memory: ok"

