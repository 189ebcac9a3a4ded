#!/usr/bin/env bash
# The shared libraries' exported symbols, three ways that must agree: what
# each .so exports (nm -D), what its public headers declare RIFL_API, and the
# list kept in tests/symbols/<library>.txt.  Everything exported is named
# rifl_*; nothing private leaks; a change to the interface shows up as a
# change to a list in review.
# usage: exported_symbols.sh BINARY_DIR SOURCE_DIR
set -u
bin=${1:?usage: exported_symbols.sh BINARY_DIR SOURCE_DIR}
src=${2:?missing SOURCE_DIR}
if ! command -v nm > /dev/null; then
  echo "FAIL: nm is not installed (Debian package binutils)"
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# names declared RIFL_API in the given headers: a declaration runs from the
# line with RIFL_API to the next ';'; its name is the last identifier before
# the first '(' (a function) or before the ';' (data)
declared() {
  awk '
    /^[ \t]*#/ { next }
    /^RIFL_API / { decl = ""; on = 1 }
    on { decl = decl " " $0
         if (index($0, ";")) {
           on = 0
           p = index(decl, "(")
           head = p ? substr(decl, 1, p - 1) : substr(decl, 1, index(decl, ";") - 1)
           n = split(head, w, /[^A-Za-z0-9_]+/)
           while (n > 0 && w[n] == "") n--
           print w[n]
         } }' "$@" | sort
}

check() { # library, list file, headers...
  local lib=$1 list=$2
  shift 2
  local so=$bin/$lib.so
  if [ ! -e "$so" ]; then
    echo "FAIL: $so not built"
    fail=1
    return
  fi
  nm -D --defined-only "$so" | awk 'NF == 3 && $2 != "A" {print $3}' | sort > "$tmp/$lib.exported"
  declared "$@" > "$tmp/$lib.declared"
  sort "$list" > "$tmp/$lib.list"
  local n
  n=$(grep -c . "$tmp/$lib.exported")
  echo "$lib.so exports $n symbols"
  if grep -v '^rifl_' "$tmp/$lib.exported" > "$tmp/$lib.bad"; then
    echo "FAIL: $lib.so exports names outside rifl_*:"
    sed 's/^/  /' "$tmp/$lib.bad"
    fail=1
  fi
  if ! diff "$tmp/$lib.declared" "$tmp/$lib.exported" > "$tmp/$lib.d1"; then
    echo "FAIL: $lib.so does not export exactly what its headers declare RIFL_API"
    echo "  (< declared only: defined? > exported only: missing RIFL_API or a static?)"
    sed 's/^/  /' "$tmp/$lib.d1"
    fail=1
  fi
  if ! diff "$tmp/$lib.list" "$tmp/$lib.exported" > "$tmp/$lib.d2"; then
    echo "FAIL: $lib.so exports differ from $list"
    echo "  (< listed only, > exported only); if the interface change is meant, update the list"
    sed 's/^/  /' "$tmp/$lib.d2"
    fail=1
  fi
}

check librifl "$src/tests/symbols/librifl.txt" "$src"/include/rifl/*.h
check librifl-sim "$src/tests/symbols/librifl-sim.txt" "$src"/include/rifl/sim/*.h
[ "$fail" -eq 0 ] && echo "exported symbols: as listed"
exit "$fail"
