#!/bin/bash
# Experiment: the raw goodput of one lane, and its CPU cost, by frame width
# and frames per datagram: `rifl link bench --one-way --requests 0` (end A
# sends packets, B checks every byte; BYTES at 2048-bit frames, in
# proportion to the width at narrower ones, so that runs take alike long) over UDP on loopback and
# over raw Ethernet across a veth pair the bench makes (--phy eth; the same
# datagrams without IP and UDP).  The lane rate of each run is set to 3
# million slots a second (F x 3e6 bit/s), more than the ends keep up with
# on the development machine, so the figure is what the ends manage, not
# the pace.  CPU time is both ends' user + system time (getrusage of the
# bench's children, start-up and the last idle 100 ms included), given as
# cores per Gbit/s: CPU seconds per gigabit delivered.  One JSON object per
# configuration on stdout, from REPEAT runs of it (default 3): the run of
# median goodput, and every run's goodput (the machine's other load moves
# the figures much); see docs/udp.md, "Raw lane goodput".
#
#   scripts/exp-lane-goodput.sh [RIFL_BINARY] [MBYTES] [WIDTHS] [FRAMES_PER_DATAGRAM] [PATHS]
#   e.g. scripts/exp-lane-goodput.sh build/rifl 256 "256 512 1024 2048" "4 16 64" "udp eth"
#
# The udp runs need nothing special; the eth runs need root and ip (iproute2)
# and are skipped, saying so, without them.  Each run is bounded by the
# bench's --timeout (60 s); a datagram that does not fit the veth's MTU of
# 9000 bytes is not run (noted in the output).  The bench deletes the veth
# pair it makes, on every exit.
set -u
RIFL=${1:-build/rifl}
MBYTES=${2:-256}
WIDTHS=${3:-"256 512 1024 2048"}
FPDS=${4:-"4 16 64"}
PATHS=${5:-"udp eth"}
REPEAT=${REPEAT:-3}
need() { echo "exp-lane-goodput: $*" >&2; exit 2; }
command -v python3 >/dev/null || need "needs python3"
[ -x "$RIFL" ] || need "no rifl binary at $RIFL (build it, or give its path first)"
case " $PATHS " in *" eth "*)
    if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
        echo "exp-lane-goodput: the eth runs need root and ip (iproute2): skipped" >&2
        PATHS=$(echo "$PATHS" | sed 's/\beth\b//g')
    fi;;
esac
python3 - "$RIFL" "$MBYTES" "$WIDTHS" "$FPDS" "$PATHS" "$REPEAT" <<'PY'
import json, resource, subprocess, sys
rifl, mbytes, widths, fpds, paths, repeat = sys.argv[1:7]
def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
for path in paths.split():
    for F in map(int, widths.split()):
        for fpd in map(int, fpds.split()):
            rate = F * 3e6 / 1e9
            nbytes = int(mbytes) * 1000000 * F // 2048
            o = {"path": path, "frame_bits": F, "frames_per_datagram": fpd,
                 "rate_gbps": round(rate, 4), "bytes": nbytes}
            if path == "eth" and 20 + fpd * F // 8 > 9000:
                o["error"] = "a datagram of %d bytes does not fit the veth's MTU of 9000" % (20 + fpd * F // 8)
                print(json.dumps(o), flush=True)
                continue
            runs = []
            for k in range(int(repeat)):
                c0 = cpu()
                p = subprocess.run([rifl, "link", "bench", "--phy", path, "--one-way", "--requests",
                                    "0", "--bytes", str(nbytes), "--frame-bits", str(F),
                                    "--frames-per-datagram", str(fpd), "--rate-gbps", "%.4f" % rate,
                                    "--seed", str(k + 1), "--timeout", "60", "--json"],
                                   capture_output=True, text=True)
                c = cpu() - c0
                try:
                    j = json.loads(p.stdout)
                except ValueError:
                    o["error"] = (p.stderr.strip() or "exit %d" % p.returncode)[:300]
                    break
                bits = j["a_to_b"]["bytes_checked"] * 8
                runs.append({"goodput_gbps": j["a_to_b"]["goodput_gbps"], "lossless": j["lossless"],
                             "fid_bits": j["fid_bits"], "rtt_us": j["rtt_us"], "wall_s": j["wall_s"],
                             "cpu_s": round(c, 3),
                             "cores_per_gbps": round(c / (bits / 1e9), 3) if bits else None,
                             "replays": j["replays"], "missing_frames": j["missing_frames"],
                             "window_stalls": [e["window_stalls"] for e in j["ends"]],
                             "schedule_resets": [e["schedule_resets"] for e in j["ends"]]})
            if runs:
                o["goodput_runs_gbps"] = [r["goodput_gbps"] for r in runs]
                o["lossless_all"] = all(r["lossless"] for r in runs)
                o.update(sorted(runs, key=lambda r: r["goodput_gbps"])[len(runs) // 2])
            print(json.dumps(o), flush=True)
PY
