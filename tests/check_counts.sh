# Sourced by the CLI test scripts that count their checks: `ok` and `bad
# MESSAGE` count a passed and a failed check, $tmp is a folder removed on
# exit, and `verdict` prints the counts and fails when any check failed.
fail=0 pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
verdict() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
