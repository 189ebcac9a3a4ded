#!/usr/bin/env bash
# Installs a build into a temporary prefix and uses it the way a user would:
# every examples/*.c is compiled with the pkg-config module its "Build:" line
# names (rifl or rifl-sim) and run, and the installed `rifl` runs, all with
# LD_LIBRARY_PATH unset.
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
for f in bin/rifl include/rifl/lane.h include/rifl/rifl.h include/rifl/phy.h \
         include/rifl/sim/sim.h include/rifl/sim/linksim.h; do
  [ -f "$prefix/$f" ] && ok || bad "$f not installed"
done
pcs=$(find "$prefix" -name 'rifl*.pc')
pc=$(printf '%s\n' "$pcs" | grep '/rifl\.pc$')
if [ "$(printf '%s\n' "$pc" | grep -c .)" -ne 1 ] ||
   [ "$(printf '%s\n' "$pcs" | grep -c '/rifl-sim\.pc$')" -ne 1 ]; then
  echo "FAIL: expected one installed rifl.pc and one rifl-sim.pc, found: ${pcs:-none}"
  exit 1
fi
libdir=$(dirname "$(dirname "$pc")")
for f in librifl.a librifl.so librifl-sim.a librifl-sim.so; do
  [ -e "$libdir/$f" ] && ok || bad "$f not next to pkgconfig/ in $libdir"
done

# the prefix configured at build time is not $prefix: the .pc files must
# still point into $prefix
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
real_prefix=$(realpath "$prefix")
for mod in rifl rifl-sim; do
  pkg-config --exists $mod && ok || bad "pkg-config does not find $mod in $PKG_CONFIG_PATH"
  flags=$(pkg-config --cflags --libs $mod) || bad "pkg-config --cflags --libs $mod"
  echo "pkg-config --cflags --libs $mod: $flags"
  # found through a relative PKG_CONFIG_PATH the folders are still absolute
  # (a relative rpath would follow the program's working directory)
  relflags=$(cd "$(dirname "$prefix")" &&
             PKG_CONFIG_PATH=${PKG_CONFIG_PATH#"$(dirname "$prefix")/"} pkg-config --cflags --libs $mod)
  for flag in $flags $relflags; do
    case $flag in
      -I*) d=${flag#-I} ;;
      -L*) d=${flag#-L} ;;
      -Wl,-rpath,*) d=${flag#-Wl,-rpath,} ;;
      *) continue ;;
    esac
    case $d in
      /*) ok ;;
      *) bad "$mod: $flag is a relative folder" ;;
    esac
    r=$(realpath -q "$d") || { bad "$mod: $flag: no such folder"; continue; }
    case $r/ in
      "$real_prefix"/*) ok ;;
      *) bad "$mod: $flag points outside the prefix $prefix" ;;
    esac
  done
  [ "$(pkg-config --modversion $mod)" = "$("$prefix/bin/rifl" --version | awk '{print $NF}')" ] &&
    ok || bad "$mod.pc version $(pkg-config --modversion $mod) is not the tool's ($("$prefix/bin/rifl" --version))"
done
# rifl-sim pulls in rifl
case " $(pkg-config --libs rifl-sim) " in
  *" -lrifl-sim "*" -lrifl "*) ok ;;
  *) bad "pkg-config --libs rifl-sim does not list -lrifl-sim before -lrifl" ;;
esac

# every example: built with the flags of the module its "Build:" line
# names, linked to the installed shared libraries, and it runs
n=0
for ex in "$src"/examples/*.c; do
  [ -f "$ex" ] || continue
  name=$(basename "$ex" .c)
  n=$((n + 1))
  mod=$(sed -n 's/.*Build:.*pkg-config --cflags --libs \([a-z-]*\)).*/\1/p' "$ex" | head -n 1)
  case $mod in
    rifl | rifl-sim) ;;
    *) bad "$name.c has no line 'Build: cc $name.c \$(pkg-config --cflags --libs rifl)' (or rifl-sim)"; continue ;;
  esac
  flags=$(pkg-config --cflags --libs "$mod")
  # shellcheck disable=SC2086 # the flags are words
  if ! "$cc" "$ex" $flags "${extra[@]}" -o "$tmp/$name" 2> "$tmp/cc.log"; then
    cat "$tmp/cc.log"
    bad "$name does not build with: $cc $name.c $flags ${extra[*]}"
    continue
  fi
  libs=librifl
  [ "$mod" = rifl-sim ] && libs="librifl librifl-sim"
  for lib in $libs; do
    so=$(ldd "$tmp/$name" | awk -v l="$lib" '$1 ~ "^" l "\\.so" {print $3}')
    case $(realpath -q "$so")/ in
      "$real_prefix"/*) ok ;;
      *) bad "$name does not load $lib.so from the prefix (ldd: ${so:-not linked})" ;;
    esac
  done
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
