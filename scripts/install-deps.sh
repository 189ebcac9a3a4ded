#!/usr/bin/env bash
# Installs the Debian packages rifl needs to build, test, fuzz and plot, when
# they are missing.  Safe to run again: it prints nothing and does nothing when
# everything is present.  See docs/dependencies.md for why each one is there.
# Without root and without a usable sudo it prints the command to run and
# exits with status 1.
set -euo pipefail

need=() why=()
want() { need+=("$1"); why+=("$1 ($2)"); }
have_cmd() { command -v "$1" > /dev/null 2>&1; }

have_cmd cmake || want cmake "build system and test driver"
have_cmd ninja || want ninja-build "build tool CMake drives"
have_cmd gcc || want gcc "default compiler"
have_cmd clang || want clang "sanitizer build and fuzzers"
have_cmd gnuplot || want gnuplot-nox "PNG figures, checked by the CLI tests"
have_cmd pkg-config || want pkg-config "users' compiler flags, checked by install_check"
have_cmd python3 || want python3 "JSON checks in the CLI tests"
have_cmd tshark || want tshark "reads captures with the rifl dissector in the capture test"
have_cmd ip || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] ||
  want iproute2 "ip makes the veth pairs, network namespaces and TAP addresses of the link tests"
have_cmd iptables || [ -x /usr/sbin/iptables ] || [ -x /sbin/iptables ] ||
  want iptables "random drops on a veth pair for the TCP-over-RIFL test and experiments"
have_cmd iperf3 || want iperf3 "bulk TCP goodput in scripts/exp-iperf3.sh"
have_cmd ethtool || [ -x /usr/sbin/ethtool ] || [ -x /sbin/ethtool ] ||
  want ethtool "offload settings reported by scripts/exp-iperf3.sh"
# libFuzzer and the ASan/UBSan runtimes: ask clang to link a fuzzer
if have_cmd clang; then
  probe=$(mktemp -d)
  printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ return d && n; }\n' \
    > "$probe/f.c"
  if ! clang -fsanitize=fuzzer,address,undefined "$probe/f.c" -o "$probe/f" > /dev/null 2>&1; then
    want libclang-rt-dev "clang's sanitizer and libFuzzer runtimes"
  fi
  rm -rf "$probe"
else
  want libclang-rt-dev "clang's sanitizer and libFuzzer runtimes"
fi

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi

cmd="apt-get install -y --no-install-recommends ${need[*]}"
echo "install-deps: installing ${why[*]}" | sed 's/) /), /g' >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if have_cmd sudo && { sudo -n true 2> /dev/null || [ -t 0 ]; }; then
    sudo=(sudo)
  else
    echo "install-deps: error: installing packages needs root, and sudo is not available here." >&2
    echo "  Run as root:  apt-get update && $cmd" >&2
    echo "  then run make again." >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo[@]}" apt-get update -qq > /dev/null ||
   ! "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" > /dev/null; then
  echo "install-deps: error: apt-get failed (output above); the command was:" >&2
  echo "  ${sudo[*]}${sudo:+ }$cmd" >&2
  exit 1
fi
