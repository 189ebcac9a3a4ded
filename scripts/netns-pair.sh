# Sourced by the experiment scripts (exp-iperf3.sh, exp-tcp-rpc.sh): two
# network namespaces joined by a veth pair, a RIFL link with a TAP device
# across it, and random drops on the veth.  The sourcing script defines
# need() (print and exit), sets RIFL (an absolute path) and may add process
# IDs to PIDS; everything made here is removed on exit.

TMP=$(mktemp -d)
PIDS=""
netns_cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    [ -n "${A:-}" ] && ip netns del "$A" 2>/dev/null
    [ -n "${B:-}" ] && ip netns del "$B" 2>/dev/null
    rm -rf "$TMP"
}
trap netns_cleanup EXIT

# netns_pair TAG NET [MTU]: namespaces A and B (names from TAG and this
# process), the veth ends VA in A and VB in B with NET.0.1 and NET.0.2/24,
# their MTU set when given.
netns_pair() {
    A=rifl-$1a-$$ B=rifl-$1b-$$ VA=$1va$$ VB=$1vb$$
    ip netns add "$A" && ip netns add "$B" || need "cannot create network namespaces"
    ip link add "$VA" type veth peer name "$VB" || need "cannot create a veth pair"
    ip link set "$VA" netns "$A"; ip link set "$VB" netns "$B"
    if [ -n "${3:-}" ]; then
        ip -n "$A" link set "$VA" mtu "$3"; ip -n "$B" link set "$VB" mtu "$3"
    fi
    ip -n "$A" addr add "$2.0.1/24" dev "$VA"; ip -n "$B" addr add "$2.0.2/24" dev "$VB"
    for n in "$A" "$B"; do ip -n "$n" link set lo up; done
    ip -n "$A" link set "$VA" up; ip -n "$B" link set "$VB" up
    VNET=$2
}

# netns_rifl NAME TAP TAPNET [link up options...]: `rifl link up` in both
# namespaces over the veth (UDP port 7000), the TAP devices with TAPNET.0.1
# and TAPNET.0.2/24 once both ends are up; PID_A and PID_B are the ends,
# their state in $TMP/a and $TMP/b, their messages in $TMP/a.err, b.err.
netns_rifl() {
    local name=$1 tap=$2 net=$3
    shift 3
    mkdir -p "$TMP/a" "$TMP/b"
    ip netns exec "$A" "$RIFL" link up --phy udp --local "$VNET.0.1:7000" \
        --remote "$VNET.0.2:7000" --tap "$tap" --name "$name" --state-dir "$TMP/a" --quiet \
        "$@" ${RIFL_LINK_OPTS:-} 2>"$TMP/a.err" &
    PID_A=$!
    ip netns exec "$B" "$RIFL" link up --phy udp --local "$VNET.0.2:7000" \
        --remote "$VNET.0.1:7000" --tap "$tap" --name "$name" --state-dir "$TMP/b" --quiet \
        "$@" ${RIFL_LINK_OPTS:-} 2>"$TMP/b.err" &
    PID_B=$!
    PIDS="$PIDS $PID_A $PID_B"
    for _ in $(seq 1 300); do
        grep -q "is up" "$TMP/a.err" 2>/dev/null && grep -q "is up" "$TMP/b.err" 2>/dev/null &&
            break
        sleep 0.1
    done
    grep -q "is up" "$TMP/a.err" || need "the RIFL link did not come up: $(cat "$TMP/a.err" "$TMP/b.err")"
    ip -n "$A" addr add "$net.0.1/24" dev "$tap"; ip -n "$B" addr add "$net.0.2/24" dev "$tap"
}

# netns_drop RATE: iptables drops that share of each end's input from the
# veth (0: none).
netns_drop() {
    for n in "$A" "$B"; do
        ip netns exec "$n" iptables -F INPUT
        if [ "$1" != 0 ]; then
            local dev=$([ "$n" = "$A" ] && echo "$VA" || echo "$VB")
            ip netns exec "$n" iptables -A INPUT -i "$dev" -m statistic --mode random \
                --probability "$1" -j DROP
        fi
    done
}
