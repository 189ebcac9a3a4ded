#!/usr/bin/env bash
# layer_check.sh must catch what it is there for: on a copy of the sources,
# each of these breaks it with the right message, and the untouched copy
# passes.
# usage: layer_check_catches.sh SOURCE_DIR
set -u
src=${1:?usage: layer_check_catches.sh SOURCE_DIR}
check=$src/tests/layer_check.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 pass=0

fresh() {
  rm -rf "$tmp/t"; mkdir -p "$tmp/t"
  cp -r "$src/src" "$src/include" "$tmp/t/"
  mkdir -p "$tmp/t/tools" "$tmp/t/tests"
  cp "$src"/tools/*.c "$src"/tools/*.h "$src/tools/CMakeLists.txt" "$tmp/t/tools/"
}

# expect WHAT PATTERN: the check fails, saying PATTERN
expect() {
  if bash "$check" "$tmp/t" > "$tmp/out" 2>&1; then
    echo "FAIL: not caught: $1"; fail=$((fail + 1))
  elif ! grep -q -- "$2" "$tmp/out"; then
    echo "FAIL: $1: message lacks '$2':"; cat "$tmp/out"; fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
}

fresh
if bash "$check" "$tmp/t" > "$tmp/out" 2>&1; then pass=$((pass + 1)); else
  cat "$tmp/out"; echo "FAIL: the untouched copy does not pass"; fail=$((fail + 1))
fi

fresh; echo '#include "rifl/switch.h"' >> "$tmp/t/src/link/lane.c"
expect "link includes a header of a layer above" "switch.h belongs to layer switch, and link does not build on switch"

fresh; echo '#include "rifl/rifl.h"' >> "$tmp/t/src/switch/switch.c"
expect "an umbrella header brings in a layer above" "and switch does not build on"

fresh; echo '#include "lane_priv.h"' >> "$tmp/t/src/sim/pair.c"
expect "another layer's private header" "lane_priv.h\", which is not in its own folder"

fresh; echo '#include "../link/lane_priv.h"' >> "$tmp/t/src/phy/channel.c"
expect "an include that climbs out" "no include climbs out of its folder"

fresh; echo '#include "../src/link/lane_priv.h"' >> "$tmp/t/tools/cmd_demo.c"
expect "the tool reaching into the library" "no include climbs out of its folder"

fresh; echo '#include "rifl/l2.h"' >> "$tmp/t/include/rifl/lane.h"
expect "a public header of a layer above" "l2.h belongs to layer l2, and link does not build on l2"

fresh; sed -i 's/^sim:\(.*\) link common/sim:\1 common/' "$tmp/t/src/layers.txt"
expect "a layer's foundation left out" "list link for sim too"

fresh; mkdir "$tmp/t/src/extra"; echo 'int x;' > "$tmp/t/src/extra/x.c"
expect "a folder outside the table" "src/extra/ is not in"

fresh; echo '/* */' > "$tmp/t/include/rifl/new.h"
expect "a public header of no layer" "include/rifl/new.h belongs to no layer"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
