#!/usr/bin/env bash
# Installs a build into a temporary prefix and uses it the way a user would:
# every examples/*.c is compiled with `pkg-config --cflags --libs rifl` and
# run, and the installed `rifl` runs, all with LD_LIBRARY_PATH unset.
# usage: install_check.sh BINARY_DIR SOURCE_DIR CC [EXTRA_CFLAGS...]
# EXTRA_CFLAGS: only for sanitizer builds, whose library needs the sanitizer
# runtime linked into the program.
set -u
bin=${1:?usage: install_check.sh BINARY_DIR SOURCE_DIR CC [EXTRA_CFLAGS...]}
src=${2:?missing SOURCE_DIR}
cc=${3:?missing CC}
shift 3
extra=("$@")
unset LD_LIBRARY_PATH

fail=0 pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
if ! command -v pkg-config > /dev/null; then
  echo "FAIL: pkg-config is not installed; it is how users get rifl's compiler flags."
  echo "  Install it with scripts/install-deps.sh (or apt-get install pkg-config)."
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

if ! cmake --install "$bin" --prefix "$prefix" > "$tmp/install.log" 2>&1; then
  cat "$tmp/install.log"
  echo "FAIL: cmake --install $bin --prefix $prefix"
  exit 1
fi
for f in bin/rifl include/rifl/lane.h include/rifl/rifl.h; do
  [ -f "$prefix/$f" ] && ok || bad "$f not installed"
done
pc=$(find "$prefix" -name rifl.pc)
if [ "$(printf '%s\n' "$pc" | grep -c .)" -ne 1 ]; then
  echo "FAIL: expected one installed rifl.pc, found: ${pc:-none}"
  exit 1
fi
libdir=$(dirname "$(dirname "$pc")")
[ -f "$libdir/librifl.a" ] && ok || bad "librifl.a not next to pkgconfig/ in $libdir"
[ -e "$libdir/librifl.so" ] && ok || bad "librifl.so not next to pkgconfig/ in $libdir"

# the prefix configured at build time is not $prefix: rifl.pc must still
# point into $prefix
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
pkg-config --exists rifl && ok || bad "pkg-config does not find rifl in $PKG_CONFIG_PATH"
cflags=$(pkg-config --cflags rifl) || bad "pkg-config --cflags rifl"
libs=$(pkg-config --libs rifl) || bad "pkg-config --libs rifl"
echo "pkg-config --cflags --libs rifl: $cflags $libs"
real_prefix=$(realpath "$prefix")
for flag in $cflags $libs; do
  case $flag in
    -I*) d=${flag#-I} ;;
    -L*) d=${flag#-L} ;;
    -Wl,-rpath,*) d=${flag#-Wl,-rpath,} ;;
    *) continue ;;
  esac
  r=$(realpath -q "$d") || { bad "$flag: no such folder"; continue; }
  case $r/ in
    "$real_prefix"/*) ok ;;
    *) bad "$flag points outside the prefix $prefix" ;;
  esac
done
[ "$(pkg-config --modversion rifl)" = "$("$prefix/bin/rifl" --version | awk '{print $NF}')" ] &&
  ok || bad "rifl.pc version $(pkg-config --modversion rifl) is not the tool's ($("$prefix/bin/rifl" --version))"

# every example: built with the pkg-config flags alone, linked to the
# installed librifl.so, and it runs
n=0
for ex in "$src"/examples/*.c; do
  [ -f "$ex" ] || continue
  name=$(basename "$ex" .c)
  n=$((n + 1))
  # shellcheck disable=SC2086 # the flags are words
  if ! "$cc" "$ex" $cflags $libs "${extra[@]}" -o "$tmp/$name" 2> "$tmp/cc.log"; then
    cat "$tmp/cc.log"
    bad "$name does not build with: $cc $name.c $cflags $libs ${extra[*]}"
    continue
  fi
  so=$(ldd "$tmp/$name" | awk '$1 ~ /^librifl\.so/ {print $3}')
  case $(realpath -q "$so")/ in
    "$real_prefix"/*) ok ;;
    *) bad "$name does not load librifl.so from the prefix (ldd: ${so:-not linked})" ;;
  esac
  "$tmp/$name" > "$tmp/$name.out" 2>&1
  st=$?
  if [ "$st" -eq 0 ]; then ok; else
    cat "$tmp/$name.out"
    bad "$name exits with status $st"
  fi
done
[ "$n" -gt 0 ] && ok || bad "no example in $src/examples"

# the installed tool
"$prefix/bin/rifl" --version | grep -q "^rifl " && ok || bad "installed rifl --version"
if ldd "$prefix/bin/rifl" | grep -q 'librifl\.so.*not found'; then
  bad "installed rifl cannot find librifl.so"
fi
"$prefix/bin/rifl" demo --slots 20000 > "$tmp/demo.out" 2>&1 && ok || bad "installed rifl demo exit status"
grep -q "^lossless: yes" "$tmp/demo.out" && ok || { cat "$tmp/demo.out"; bad "installed rifl demo not lossless"; }

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
