#!/usr/bin/env bash
# The project's copy of the golden vectors (tests/vectors/rifl/) against the
# original recording, file by file and byte by byte.
# usage: vectors_match_shared.sh COPY_DIR
# The original is the vectors/rifl/ folder inside $RIFL_SHARED_DIR.  With
# RIFL_SHARED_DIR unset or empty the test cannot run: it says so and exits 77,
# which CTest reports as skipped.  The original's README.md is not compared
# (the copy has its own, tests/vectors/README.md).
set -u
copy=${1:?usage: vectors_match_shared.sh COPY_DIR}
shared=${RIFL_SHARED_DIR:-}
if [ -z "$shared" ]; then
  echo "skipped: the original golden vectors are not available, so the copy in"
  echo "  $copy cannot be compared with them."
  echo "  Set RIFL_SHARED_DIR to the folder that holds vectors/rifl/ (environment at"
  echo "  test time, or cmake -DRIFL_SHARED_DIR=DIR); make sets it by itself when a"
  echo "  folder named shared with vectors/rifl/ in it sits beside the project."
  exit 77
fi
orig=$shared/vectors/rifl
if [ ! -d "$orig" ]; then
  echo "FAIL: RIFL_SHARED_DIR=$shared has no vectors/rifl/ folder;"
  echo "  point RIFL_SHARED_DIR at the folder that holds vectors/rifl/, or unset it to skip"
  exit 1
fi
if [ ! -d "$copy" ]; then
  echo "FAIL: the copy $copy does not exist"
  exit 1
fi

fail=0 same=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$orig" && find . -type f ! -path ./README.md | LC_ALL=C sort) > "$tmp/orig"
(cd "$copy" && find . -type f | LC_ALL=C sort) > "$tmp/copy"
[ -s "$tmp/orig" ] || bad "the original $orig holds no file"

# every file of the original is in the copy, with the same bytes
while IFS= read -r f; do
  if [ ! -f "$copy/$f" ]; then
    bad "${f#./} is missing from the copy (copy it from $orig)"
  elif ! cmp "$orig/${f#./}" "$copy/${f#./}" > "$tmp/cmp" 2>&1; then
    bad "${f#./} differs from the original: $(head -1 "$tmp/cmp")"
  else
    same=$((same + 1))
  fi
done < "$tmp/orig"
# and the copy holds nothing else
while IFS= read -r f; do
  [ -f "$orig/$f" ] || bad "${f#./} is in the copy but not in the original $orig"
done < "$tmp/copy"

echo "$same files identical to $orig, $fail problems"
[ "$fail" -eq 0 ]
