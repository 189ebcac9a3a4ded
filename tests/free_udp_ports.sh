# Sourced by the link tests: free_udp_ports sets PA and PB to two free UDP
# ports of 127.0.0.1 below the kernel's ephemeral range (so that no socket
# bound to port 0 elsewhere, e.g. by a test running beside, takes them
# between this check and the ends' start), or fails the test.  Needs python3.
free_udp_ports() {
    read -r PA PB < <(python3 - $$ <<'PY'
import random, socket, sys
random.seed(int(sys.argv[1]))  # the test's process ID: tests beside it draw others
lo, hi = map(int, open("/proc/sys/net/ipv4/ip_local_port_range").read().split())
pool = list(range(10000, lo)) if lo > 11000 else list(range(hi + 1, 65536))
got = []
for p in random.sample(pool, 200):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind(("127.0.0.1", p)); got.append(p)
    except OSError:
        pass
    s.close()
    if len(got) == 2: break
print(*got)
PY
)
    [ -n "${PB:-}" ] || { echo "FAIL: no two free UDP ports on 127.0.0.1"; exit 1; }
}
