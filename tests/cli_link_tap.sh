#!/bin/bash
# `rifl link up --tap`: two ends in two network namespaces joined by a veth
# pair, each with a TAP device, datagrams dropped each way (0.3% over UDP:
# a sanitizer build probes round trips of a millisecond, and at 1% its
# replays left TCP no room; 1% over raw Ethernet); TCP runs
# across the RIFL link (request/response, every byte checked), the counters
# show the replays, and `rifl link down` removes the TAP devices.  Over UDP,
# then over raw Ethernet on the same veth pair.
# Needs root, ip (iproute2), /dev/net/tun and python3; says what is missing
# and reports itself skipped (exit 77) without them.
# $1: rifl binary, $2: golden vectors dir, $3: source dir.
set -u
RIFL=$1
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces and TAP devices)"
command -v ip >/dev/null || skip "needs ip (iproute2; scripts/install-deps.sh installs it)"
[ -c /dev/net/tun ] || skip "needs /dev/net/tun (the tun module)"
command -v python3 >/dev/null || skip "needs python3"
TMP=$(mktemp -d)
A=rifl-ta-$$ B=rifl-tb-$$
cleanup() {
    for p in ${PIDS:-}; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    ip netns del "$A" 2>/dev/null
    ip netns del "$B" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
ip netns add "$A" 2>/dev/null || skip "cannot create network namespaces here"
ip netns add "$B" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
ip link add rtva$$ type veth peer name rtvb$$ || skip "cannot create a veth pair here"
ip link set rtva$$ netns "$A" && ip link set rtvb$$ netns "$B" || exit 1
ip -n "$A" addr add 10.231.0.1/24 dev rtva$$ && ip -n "$B" addr add 10.231.0.2/24 dev rtvb$$ || exit 1
for n in "$A" "$B"; do ip -n "$n" link set lo up; done
ip -n "$A" link set rtva$$ up && ip -n "$B" link set rtvb$$ up || exit 1

# echo_pair ADDR PORT N: a TCP echo server on ADDR:PORT in B, and a client in
# A that sends N requests of 1 KB and checks each answer
echo_pair() {
    ip netns exec "$B" python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(1); s.settimeout(30)
c, _ = s.accept(); c.settimeout(30)
while True:
    d = c.recv(65536)
    if not d: break
    c.sendall(d)
' "$1" "$2" &
    PIDS="$PIDS $!"
    sleep 0.3
    ip netns exec "$A" timeout 60 python3 - "$1" "$2" "$3" <<'PY'
import random, socket, sys, time
addr, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for attempt in range(50):
    try:
        s = socket.create_connection((addr, port), timeout=30); break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("cannot connect across the link")
rng = random.Random(port)
for i in range(n):
    msg = bytes(rng.getrandbits(8) for _ in range(1024))
    s.sendall(msg)
    got = b""
    while len(got) < len(msg):
        part = s.recv(len(msg) - len(got))
        if not part: sys.exit("connection closed")
        got += part
    if got != msg: sys.exit("request %d came back changed" % i)
s.close()
print("%d requests of 1 KB echoed unchanged across %s" % (n, addr))
PY
}

mkdir -p "$TMP/a" "$TMP/b"
ip netns exec "$A" "$RIFL" link up --phy udp --local 10.231.0.1:7000 --remote 10.231.0.2:7000 \
    --tap rtap0 --name t --state-dir "$TMP/a" --loss 0.003 --seed 1 --quiet 2>"$TMP/a.err" &
PIDS="$!"
start_b() {
    ip netns exec "$B" "$RIFL" link up --phy udp --local 10.231.0.2:7000 --remote 10.231.0.1:7000 \
        --tap rtap0 --name t --state-dir "$TMP/b" --loss 0.003 --seed 2 --quiet 2>>"$TMP/b.err" &
    PID_B=$!
    PIDS="$PIDS $PID_B"
}
start_b
up=0
for i in $(seq 1 200); do
    if "$RIFL" link status --name t --state-dir "$TMP/a" --json 2>/dev/null | grep -q '"state": "up' &&
       "$RIFL" link status --name t --state-dir "$TMP/b" --json 2>/dev/null | grep -q '"state": "up'; then
        up=1; break
    fi
    sleep 0.1
done
[ $up = 1 ] || { bad "the link did not come up: $(cat "$TMP/a.err" "$TMP/b.err")"; exit 1; }
ip -n "$A" addr add 10.232.0.1/24 dev rtap0 && ip -n "$B" addr add 10.232.0.2/24 dev rtap0 ||
    { bad "no TAP devices: $(cat "$TMP/a.err" "$TMP/b.err")"; exit 1; }

# a TCP echo server in B, a client in A: 300 requests of 1 KB, each checked
echo_pair 10.232.0.2 7100 300 || bad "TCP across the RIFL link failed"

sleep 1.2 # the state files are written every 0.5 s
"$RIFL" link status --name t --state-dir "$TMP/a" --json >"$TMP/a.json" || bad "status a"
"$RIFL" link status --name t --state-dir "$TMP/b" --json >"$TMP/b.json" || bad "status b"
python3 - "$TMP/a.json" "$TMP/b.json" <<'PY' || bad "counters"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for e in (a, b):
    assert e["running"] and e["tap"] == "rtap0", e
    assert e["tap_in"] > 300 and e["tap_out"] > 300, e
    assert e["datagrams_dropped"] > 0 and e["tap_write_failed"] == 0, e
assert a["replays"] + b["replays"] > 0, (a["replays"], b["replays"])
print("replays", a["replays"], b["replays"], "dropped", a["datagrams_dropped"], b["datagrams_dropped"])
PY
"$RIFL" link status --state-dir "$TMP/a" | grep -q "^t: up" || bad "human status"

# B crashes (SIGKILL) and starts again: A resets jointly with it on new
# epochs, and TCP runs across the link again (a new TAP device in B: its
# address again, and A forgets the old device's MAC address)
# (stderr off while the shell notices the kill: no "Killed" line)
exec 3>&2 2>/dev/null; kill -KILL "$PID_B"; wait "$PID_B"; exec 2>&3 3>&-
start_b
back=0
for i in $(seq 1 200); do
    if "$RIFL" link status --name t --state-dir "$TMP/a" --json 2>/dev/null |
           grep -q '"state": "up.*"resets": 1,' &&
       "$RIFL" link status --name t --state-dir "$TMP/b" --json 2>/dev/null | grep -q '"state": "up'; then
        back=1; break
    fi
    sleep 0.1
done
if [ $back = 1 ]; then
    ip -n "$B" addr add 10.232.0.2/24 dev rtap0 || bad "no TAP device after the restart"
    ip -n "$A" neigh flush dev rtap0
    echo_pair 10.232.0.2 7102 100 || bad "TCP across the RIFL link after B restarted failed"
    grep -q "the peer restarted" "$TMP/a.err" || bad "A's restart message: $(cat "$TMP/a.err")"
else
    bad "the link did not come back after B restarted: $(cat "$TMP/a.err" "$TMP/b.err")"
fi

"$RIFL" link down --name t --state-dir "$TMP/a" || bad "down a"
"$RIFL" link down --name t --state-dir "$TMP/b" || bad "down b"
ip -n "$A" link show rtap0 >/dev/null 2>&1 && bad "TAP device left behind after down"
[ -e "$TMP/a/t.json" ] && bad "state file left behind after down"
"$RIFL" link status --name t --state-dir "$TMP/a" >/dev/null 2>&1 && bad "status of a stopped link succeeded"
"$RIFL" link down --name t --state-dir "$TMP/a" 2>"$TMP/d.err" && bad "down of a stopped link succeeded"
grep -q "no link named 't' is up" "$TMP/d.err" || bad "down message: $(cat "$TMP/d.err")"

# the same over raw Ethernet on the veth pair (5 frames of 256 bytes fit its MTU)
MAC_A=$(ip -n "$A" link show rtva$$ | awk '/link\/ether/ {print $2}')
MAC_B=$(ip -n "$B" link show rtvb$$ | awk '/link\/ether/ {print $2}')
ip netns exec "$A" "$RIFL" link up --phy eth --interface rtva$$ --peer-mac "$MAC_B" \
    --frames-per-datagram 5 --tap rtap1 --name e --state-dir "$TMP/a" --loss 0.01 --quiet 2>"$TMP/ea.err" &
PIDS="$PIDS $!"
ip netns exec "$B" "$RIFL" link up --phy eth --interface rtvb$$ --peer-mac "$MAC_A" \
    --frames-per-datagram 5 --tap rtap1 --name e --state-dir "$TMP/b" --loss 0.01 --quiet 2>"$TMP/eb.err" &
PIDS="$PIDS $!"
up=0
for i in $(seq 1 200); do
    grep -q "is up" "$TMP/ea.err" && grep -q "is up" "$TMP/eb.err" && { up=1; break; }
    sleep 0.1
done
if [ $up = 1 ]; then
    ip -n "$A" addr add 10.233.0.1/24 dev rtap1 && ip -n "$B" addr add 10.233.0.2/24 dev rtap1
    echo_pair 10.233.0.2 7101 100 || bad "TCP across the raw-Ethernet RIFL link failed"
    sleep 1.2
    "$RIFL" link status --name e --state-dir "$TMP/a" --json | grep -q '"phy": "eth"' || bad "eth status"
    "$RIFL" link down --name e --state-dir "$TMP/a" || bad "down eth a"
    "$RIFL" link down --name e --state-dir "$TMP/b" || bad "down eth b"
else
    bad "the raw-Ethernet link did not come up: $(cat "$TMP/ea.err" "$TMP/eb.err")"
fi

# bad uses are refused with a reason
"$RIFL" link up --phy udp --local 127.0.0.1:1 2>"$TMP/e1" && bad "no --remote accepted"
grep -q "both ends' addresses" "$TMP/e1" || bad "missing address message: $(cat "$TMP/e1")"
"$RIFL" link up --phy eth --interface lo 2>"$TMP/e4" && bad "eth without a peer MAC accepted"
grep -q "needs --interface IF" "$TMP/e4" || bad "eth message: $(cat "$TMP/e4")"
"$RIFL" link up --phy eth0 --local 127.0.0.1:1 --remote 127.0.0.1:2 2>"$TMP/e2" && bad "bad phy accepted"
grep -q "not supported" "$TMP/e2" || bad "bad phy message"
"$RIFL" link up --phy udp --local 127.0.0.1:1 --remote 127.0.0.1:2 --name "a b" 2>"$TMP/e3" && bad "bad name accepted"
grep -q "cannot name a link" "$TMP/e3" || bad "bad name message"
exit $fail
