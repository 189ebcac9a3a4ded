#!/bin/bash
# The namespace experiment, short: scripts/exp-tcp-rpc.sh with 300 requests
# of 1 KB at 1% drop on the veth, plain TCP and TCP through rifl0.  Through
# the RIFL link every lost datagram is replayed by the lanes, so no request
# waits for TCP's retransmission timeout (200 ms at the least); the JSON of
# the run and the ends' counters must say so.  In a sanitizer build
# (RIFL_TEST_SANITIZED=1, set by tests/CMakeLists.txt) the daemon is too slow
# for that bound: it is reported there, and everything else is checked.
# $1: rifl binary, $2: golden vectors dir, $3: source dir.
# Skips (77) without root, network namespaces, iptables or /dev/net/tun.
set -u
RIFL=$1
SRC=$3
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (network namespaces, iptables, a TAP device)"; exit 77; }
for t in ip iptables python3; do
    command -v $t >/dev/null || { echo "SKIP: needs $t (scripts/install-deps.sh installs it)"; exit 77; }
done
[ -c /dev/net/tun ] || { echo "SKIP: needs /dev/net/tun"; exit 77; }
probe=rifl-probe-$$
ip netns add "$probe" 2>/dev/null || { echo "SKIP: cannot create network namespaces"; exit 77; }
ip netns del "$probe"
ip netns exec "$(ip netns add "$probe" && echo "$probe")" iptables -L INPUT >/dev/null 2>&1
ok=$?
ip netns del "$probe" 2>/dev/null
[ $ok -eq 0 ] || { echo "SKIP: iptables does not work in a network namespace here"; exit 77; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
timeout 300 "$SRC/scripts/exp-tcp-rpc.sh" "$RIFL" 300 "0.01" >"$TMP/out.json" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: exp-tcp-rpc.sh exit $rc: $(cat "$TMP/err")"; exit 1; }
python3 - "$TMP/out.json" <<'PY'
import json, os, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
runs = {r["path"]: r for r in lines if "path" in r}
ends = [r for r in lines if "path" not in r]
ok = True
def check(cond, what):
    global ok
    if not cond:
        print("FAIL:", what); ok = False
check(set(runs) == {"plain", "rifl"}, "runs %s" % sorted(runs))
for p, r in runs.items():
    check(r["requests"] == 300 and r["drop"] == 0.01, "%s: %s" % (p, r))
sanitized = os.environ.get("RIFL_TEST_SANITIZED") == "1"
if "rifl" in runs:
    m = runs["rifl"]["rpc_us"]["max"]
    if sanitized and m >= 200000:
        print("note: through rifl0 a request took %.0f us (sanitizer build: not checked)" % m)
    else:
        check(m < 200000, "through rifl0 a request took %.0f us: a TCP timeout" % m)
# both ends report, and the drops were recovered by the lanes' replays
check(len(ends) == 2, "%d status reports" % len(ends))
text = json.dumps(ends)
def total(key):
    s = 0
    def walk(o):
        nonlocal s
        if isinstance(o, dict):
            for k, v in o.items():
                if k == key and isinstance(v, (int, float)):
                    s += v
                else:
                    walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(ends)
    return s
check(total("replays") > 0, "no replay at 1%% drop: %s" % text[:400])
print("plain max %.0f us, rifl0 max %.0f us, replays %d" % (
    runs.get("plain", {}).get("rpc_us", {}).get("max", -1),
    runs.get("rifl", {}).get("rpc_us", {}).get("max", -1), total("replays")))
sys.exit(0 if ok else 1)
PY
