#!/usr/bin/env bash
# Installs the Debian packages rifl needs to build, test, fuzz and plot, when
# they are missing.  Safe to run again: it does nothing when all are present.
# See docs/dependencies.md for why each one is there.
set -euo pipefail

need=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_cmd cmake || need+=(cmake)
have_cmd ninja || need+=(ninja-build)
have_cmd cc || need+=(gcc)
have_cmd clang || need+=(clang)
have_cmd gnuplot || need+=(gnuplot-nox)
have_cmd pkg-config || need+=(pkg-config)
# libFuzzer and the sanitizer runtimes for clang
if ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 &&
   ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1; then
  need+=(libclang-rt-dev)
fi

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi

echo "installing: ${need[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if have_cmd sudo; then SUDO=sudo; else
    echo "error: need root (or sudo) to install: ${need[*]}" >&2
    echo "       install them by hand, then run the command again" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
