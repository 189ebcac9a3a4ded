#!/bin/bash
# `rifl link status` and `rifl link down` read state files that name a
# process to signal.  A file that names no `rifl link up` process (a process
# ID beyond pid_t that would wrap to another process, or a live process of
# another program, as a crash and a reused ID leave behind) is stale: down
# removes it and signals nothing.  A state directory others may write to is
# refused.  No network, no root.
# $1: rifl binary, $2: golden vectors dir, $3: source dir.
set -u
RIFL=$1
TMP=$(mktemp -d)
CANARY=""
cleanup() {
    [ -n "$CANARY" ] && kill "$CANARY" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# a process of another program, which no state file may get signalled
sleep 60 &
CANARY=$!
mkdir -m 700 "$TMP/s"
plant() { # plant NAME PID
    printf '{"name": "%s", "pid": %s, "phy": "udp", "state": "up"}\n' "$1" "$2" > "$TMP/s/$1.json"
}
alive() { kill -0 "$CANARY" 2>/dev/null; }

# 2^32 + the canary's ID: cut to a pid_t it is the canary
plant wrap $((4294967296 + CANARY))
"$RIFL" link status --name wrap --state-dir "$TMP/s" --json > "$TMP/st.json" 2> "$TMP/st.err"
grep -q '"running": false' "$TMP/st.json" || bad "a pid beyond pid_t shown running: $(cat "$TMP/st.json" "$TMP/st.err")"
"$RIFL" link down --name wrap --state-dir "$TMP/s" --wait-s 1 2> "$TMP/down.err"
rc=$?
[ $rc -eq 0 ] || bad "down of a stale file: exit $rc: $(cat "$TMP/down.err")"
grep -q "stale state is removed" "$TMP/down.err" || bad "down message: $(cat "$TMP/down.err")"
[ -e "$TMP/s/wrap.json" ] && bad "the stale file was kept"
alive || bad "link down signalled the process a wrapped pid names"

# a live process that is not rifl link up
alive || { CANARY=""; sleep 60 & CANARY=$!; }
plant other "$CANARY"
"$RIFL" link down --name other --state-dir "$TMP/s" --wait-s 1 2> "$TMP/down.err"
rc=$?
[ $rc -eq 0 ] || bad "down of another program's pid: exit $rc: $(cat "$TMP/down.err")"
alive || bad "link down signalled a process that is not rifl link up"
[ -e "$TMP/s/other.json" ] && bad "the stale file naming another program was kept"

# no pid at all, or a negative one
for pid in -1 0 '"x"'; do
    plant odd "$pid"
    "$RIFL" link down --name odd --state-dir "$TMP/s" --wait-s 1 2> "$TMP/down.err" ||
        bad "down with pid $pid: $(cat "$TMP/down.err")"
done
alive || bad "the canary died"

# without --name: the only link up, and none or several refused
mkdir -m 700 "$TMP/one"
"$RIFL" link down --state-dir "$TMP/one" --wait-s 1 2> "$TMP/down.err"
rc=$?
[ $rc -eq 1 ] || bad "down with no link up: exit $rc"
grep -q "no link is up" "$TMP/down.err" || bad "message: $(cat "$TMP/down.err")"
printf '{"name": "la", "pid": -1}\n' > "$TMP/one/la.json"
printf '{"name": "lb", "pid": -1}\n' > "$TMP/one/lb.json"
"$RIFL" link down --state-dir "$TMP/one" --wait-s 1 2> "$TMP/down.err"
rc=$?
[ $rc -eq 1 ] || bad "down with two links up and no --name: exit $rc"
grep -q "2 links are up (l[ab], l[ab]): name the one to stop with --name" "$TMP/down.err" ||
    bad "message: $(cat "$TMP/down.err")"
[ -e "$TMP/one/la.json" ] && [ -e "$TMP/one/lb.json" ] || bad "a state file went without --name"
rm "$TMP/one/la.json"
"$RIFL" link down --state-dir "$TMP/one" --wait-s 1 2> "$TMP/down.err" ||
    bad "down of the only link: $(cat "$TMP/down.err")"
grep -q "lb was not running" "$TMP/down.err" || bad "message: $(cat "$TMP/down.err")"
[ -e "$TMP/one/lb.json" ] && bad "the only link's stale state was kept"

# a state directory others may write to: refused, naming it
mkdir -m 777 "$TMP/open"
chmod 777 "$TMP/open" # (whatever the umask)
"$RIFL" link status --state-dir "$TMP/open" > /dev/null 2> "$TMP/open.err"
rc=$?
[ $rc -eq 2 ] || bad "an others-writable state directory: exit $rc"
grep -q "others may write to it" "$TMP/open.err" || bad "message: $(cat "$TMP/open.err")"
ln -s "$TMP/s" "$TMP/link"
"$RIFL" link status --state-dir "$TMP/link" > /dev/null 2> "$TMP/link.err"
rc=$?
[ $rc -eq 2 ] || bad "a state directory that is a symbolic link: exit $rc"
grep -q "not a directory" "$TMP/link.err" || bad "message: $(cat "$TMP/link.err")"
# an option that does nothing without another: refused before anything runs
"$RIFL" link up --phy udp --local 127.0.0.1:1 --remote 127.0.0.1:2 --pcap-frames 5 \
    --state-dir "$TMP/s" > /dev/null 2> "$TMP/pf.err"
rc=$?
[ $rc -eq 2 ] || bad "--pcap-frames without --pcap: exit $rc"
grep -q "has no effect without --pcap" "$TMP/pf.err" || bad "message: $(cat "$TMP/pf.err")"

# a state directory path too long to hold is refused, never cut short to
# another directory
mkdir -m 700 "$TMP/long"
long="$TMP/long$(printf '/.%.0s' $(seq 1 1100))/sub"
for cmd in status down; do
    "$RIFL" link $cmd --name x --state-dir "$long" > /dev/null 2> "$TMP/long.err"
    rc=$?
    [ $rc -eq 2 ] && grep -q "state directory path is [0-9]* characters long" "$TMP/long.err" ||
        bad "link $cmd with a long --state-dir: exit $rc, $(cat "$TMP/long.err")"
done
[ -z "$(ls -A "$TMP/long")" ] || bad "a long --state-dir left files in its start: $(ls -A "$TMP/long")"
exit $fail
