#!/bin/bash
# Experiment: 1 KB request/response latency over TCP, plain and through a
# RIFL link (rifl link up --tap), across a veth pair between two network
# namespaces that drops packets at random (iptables' statistic match, both
# directions).  One JSON object per (path, drop rate) on stdout; see
# docs/link-daemon.md, "TCP request/response with loss".
#
#   scripts/exp-tcp-rpc.sh [RIFL_BINARY] [REQUESTS] [DROP_RATES]
#   e.g. scripts/exp-tcp-rpc.sh build/rifl 10000 "0 0.001 0.01"
#
# Needs root, ip (iproute2), iptables, /dev/net/tun and python3; says what
# is missing.  Sends traffic only inside the namespaces it makes, and
# removes them on every exit.
set -u
RIFL=${1:-build/rifl}
N=${2:-10000}
DROPS=${3:-"0 0.001 0.01"}
need() { echo "exp-tcp-rpc: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || need "needs root (network namespaces, iptables, TAP devices)"
for t in ip iptables python3; do command -v $t >/dev/null || need "needs $t (apt-get install iproute2 iptables python3)"; done
[ -c /dev/net/tun ] || need "needs /dev/net/tun"
[ -x "$RIFL" ] || need "no rifl binary at $RIFL (build it, or give its path first)"
RIFL=$(readlink -f "$RIFL")
. "$(dirname "$0")/netns-pair.sh"
netns_pair x 10.241
MTU_VETH=$(ip -n "$A" -o link show "$VA" | sed 's/.* mtu \([0-9]*\).*/\1/')

netns_rifl x xtap0 10.242

# a TCP echo server in B on both paths
ip netns exec "$B" python3 - <<'PY' &
import socket, threading
def serve(addr):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, 7100)); s.listen(8)
    while True:
        c, _ = s.accept()
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        def echo(c=c):
            while True:
                d = c.recv(65536)
                if not d: return
                c.sendall(d)
        threading.Thread(target=echo, daemon=True).start()
for a in ("10.241.0.2", "10.242.0.2"):
    threading.Thread(target=serve, args=(a,), daemon=True).start()
threading.Event().wait()
PY
PIDS="$PIDS $!"
sleep 0.5

rpc() { # path, server address, drop rate
    ip netns exec "$A" python3 - "$1" "$2" "$3" "$N" "$MTU_VETH" <<'PY'
import json, socket, sys, time
path, addr, drop, n, mtu = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
s = socket.create_connection((addr, 7100), timeout=60)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
msg = bytes(range(256)) * 4
lat = []
for i in range(n):
    t = time.perf_counter_ns()
    s.sendall(msg)
    got = 0
    while got < len(msg):
        got += len(s.recv(len(msg) - got))
    lat.append(time.perf_counter_ns() - t)
lat.sort()
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] / 1e3
print(json.dumps({"path": path, "drop": drop, "requests": n, "request_bytes": 1024,
                  "rpc_us": {"p50": round(q(0.5), 1), "p99": round(q(0.99), 1),
                             "p999": round(q(0.999), 1), "max": round(lat[-1] / 1e3, 1)},
                  "veth_mtu": mtu}))
PY
}

for d in $DROPS; do
    netns_drop "$d"
    rpc plain 10.241.0.2 "$d"
    rpc rifl 10.242.0.2 "$d"
done
for n in a b; do "$RIFL" link status --name x --state-dir "$TMP/$n" --json; done
