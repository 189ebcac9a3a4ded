#!/bin/bash
# `rifl link up` across a restart of one end: two ends on loopback UDP (no
# root, no TAP device).  End B is killed (SIGKILL, as in a crash) and
# started again on the same port: A sees B's new epoch, drops its lane and
# takes a new epoch itself, both probe again and the link comes back up on
# the new epochs (a joint reset, never one-sided).  The state files say so.
# $1: rifl binary, $2: golden vectors dir, $3: source dir.
set -u
RIFL=$1
TMP=$(mktemp -d)
PIDS=""
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
command -v python3 >/dev/null || { echo "FAIL: python3 is missing (scripts/install-deps.sh installs it)"; exit 1; }
. "$(dirname "$0")/free_udp_ports.sh"
free_udp_ports
mkdir -p "$TMP/a" "$TMP/b"
# a lane rate of 0.25 Gbit/s: at it 11 frame-ID bits cover round trips up to
# 7.7 ms, which the probes of a loaded machine can measure (4.1 ms seen with
# the sanitizer build and the tests run in parallel; 1 Gbit/s covers 1.9)
start() { # start END LOCAL REMOTE
    "$RIFL" link up --phy udp --local 127.0.0.1:"$2" --remote 127.0.0.1:"$3" --name r \
        --state-dir "$TMP/$1" --quiet --connect-s 20 --rate-gbps 0.25 2>>"$TMP/$1.err" &
}
state() { "$RIFL" link status --name r --state-dir "$TMP/$1" --json 2>/dev/null; }
start a "$PA" "$PB"; PID_A=$!
start b "$PB" "$PA"; PID_B=$!
PIDS="$PID_A $PID_B"
up=0
for i in $(seq 1 100); do
    state a | grep -q '"state": "up' && state b | grep -q '"state": "up' && { up=1; break; }
    sleep 0.1
done
[ $up = 1 ] || { bad "the link did not come up: $(cat "$TMP/a.err" "$TMP/b.err")"; exit 1; }
sleep 0.6 # a state file written after both were up
state a >"$TMP/a1.json" && state b >"$TMP/b1.json" || bad "status before the restart"

# B dies and starts again: a new process, a new epoch
# (stderr off while the shell notices the kill: no "Killed" line)
exec 3>&2 2>/dev/null; kill -KILL "$PID_B"; wait "$PID_B"; exec 2>&3 3>&-
sleep 0.3
start b "$PB" "$PA"; PID_B=$!
PIDS="$PID_A $PID_B"
back=0
for i in $(seq 1 150); do
    state a >"$TMP/a2.json" && state b >"$TMP/b2.json" &&
    python3 - "$TMP/a2.json" "$TMP/b2.json" <<'PY' && { back=1; break; }
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if a["resets"] == 1 and a["state"].startswith("up") and b["state"].startswith("up")
         and a["peer_epoch"] == b["epoch"] and b["peer_epoch"] == a["epoch"] else 1)
PY
    sleep 0.2
done
[ $back = 1 ] || bad "the link did not come back after B restarted: $(cat "$TMP/a2.json" "$TMP/b2.json" "$TMP/a.err" "$TMP/b.err")"
python3 - "$TMP/a1.json" "$TMP/b1.json" "$TMP/a2.json" "$TMP/b2.json" <<'PY' || bad "epochs and counters"
import json, sys
a1, b1, a2, b2 = (json.load(open(p)) for p in sys.argv[1:5])
ok = True
def want(cond, what):
    global ok
    if not cond:
        print(what); ok = False
want(a1["peer_epoch"] == b1["epoch"] and b1["peer_epoch"] == a1["epoch"], "epochs before")
want(a1["resets"] == 0 and b1["resets"] == 0, "no reset before")
want(b2["epoch"] != b1["epoch"], "the restarted end has a new epoch")
want(a2["epoch"] != a1["epoch"], "the surviving end took a new epoch (joint reset)")
want(a2["resets"] == 1 and b2["resets"] == 0, "resets %d %d" % (a2["resets"], b2["resets"]))
want(a2["datagrams_foreign"] > 0, "the new epoch was seen")
print("epochs A %08x -> %08x, B %08x -> %08x; A resets %d, stale datagrams at A %d, at B %d; frames missing at B %d" %
      (a1["epoch"], a2["epoch"], b1["epoch"], b2["epoch"], a2["resets"],
       a2["datagrams_stale"], b2["datagrams_stale"], b2["frames_missing"]))
sys.exit(0 if ok else 1)
PY
grep -q "the peer restarted (new epoch" "$TMP/a.err" || bad "A's message: $(cat "$TMP/a.err")"
[ "$(grep -c "is up" "$TMP/a.err")" -eq 2 ] || bad "A came up twice: $(cat "$TMP/a.err")"
"$RIFL" link status --name r --state-dir "$TMP/a" > "$TMP/st.txt"
grep -q "joint resets 1" "$TMP/st.txt" || bad "human status"
grep -q "receive queue overflows 0 frames; datagrams dropped by --loss 0; TAP frames too long" \
    "$TMP/st.txt" || bad "human status lacks the drop counters: $(cat "$TMP/st.txt")"
state a | python3 -c 'import json, sys; d = json.load(sys.stdin)
assert all(k in d for k in ("frames_overflow", "erasures", "tap_in_dropped")), d' ||
    bad "state lacks the drop counters"
"$RIFL" link down --name r --state-dir "$TMP/a" || bad "down a"
"$RIFL" link down --name r --state-dir "$TMP/b" || bad "down b"

# ends sized from other settings both stop at once and say why, whichever
# learns of the other first (one lane rate 0.25, the other 0.5 Gbit/s)
mkdir -p "$TMP/c" "$TMP/d"
"$RIFL" link up --phy udp --local 127.0.0.1:"$PA" --remote 127.0.0.1:"$PB" --name m \
    --state-dir "$TMP/c" --quiet --connect-s 20 --rate-gbps 0.25 2> "$TMP/c.err" &
PID_C=$!
PIDS="$PIDS $PID_C"
sleep 0.3
timeout 20 "$RIFL" link up --phy udp --local 127.0.0.1:"$PB" --remote 127.0.0.1:"$PA" --name m \
    --state-dir "$TMP/d" --quiet --connect-s 20 --rate-gbps 0.5 2> "$TMP/d.err"
rc_d=$?
t0=$(date +%s)
wait "$PID_C"
rc_c=$?
waited=$(( $(date +%s) - t0 ))
for e in c d; do
    grep -q "sizes its lane from other settings" "$TMP/$e.err" ||
        bad "end $e does not name the mismatch: $(cat "$TMP/$e.err")"
done
[ "$rc_c" = 2 ] && [ "$rc_d" = 2 ] || bad "mismatched ends exit $rc_c and $rc_d, not 2"
[ "$waited" -le 5 ] || bad "the first end waited $waited s after the other stopped"
exit $fail
