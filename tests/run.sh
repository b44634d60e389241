#!/bin/sh
# heaptape -- runs the whole test suite and ends with "N passed, N failed".
# Unit binaries and test scripts print their own "N passed, N failed" lines;
# CLI golden tests (tests/cli/<area>/<name>.sh) count one each.
set -u
cd "$(dirname "$0")/.."
B=${B:-build}
export HEAPTAPE="$PWD/$B/heaptape" HT_BUILD="$PWD/$B" HT_ROOT="$PWD"
passed=0 failed=0
# Uncompressed debug files are cached per user (src/analyze/debugcache.h):
# the suite keeps its own, made afresh on every run.
cache=$(mktemp -d); export HEAPTAPE_CACHE="$cache"
log=$(mktemp); trap 'rm -rf "$log" "$cache"' EXIT

# Add the counts of a "N passed, N failed" line from $log; a missing line is a failure.
tally() {
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  if [ -z "$line" ]; then
    echo "FAIL $1 (no summary line; exit $2)"; tail -n 20 "$log"; failed=$((failed + 1)); return
  fi
  p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}
  [ "$2" != 0 ] && [ "$f" = 0 ] && f=1
  passed=$((passed + p)); failed=$((failed + f))
  [ "$f" != 0 ] && { echo "FAIL $1"; grep -E 'FAIL|error' "$log" | head -n 30; }
  echo "$1: $line"
}

for t in "$B"/tests/test_*; do
  [ -x "$t" ] || continue
  "$t" >"$log" 2>&1; tally "$(basename "$t")" $?
done

for t in "$B"/san/regress_*; do
  [ -x "$t" ] || continue
  name=${t##*/regress_}
  "$t" "tests/fuzz/corpus/$name" >"$log" 2>&1; tally "fuzz corpus $name" $?
done

for t in tests/integration/*.sh; do
  [ -f "$t" ] || continue
  sh "$t" >"$log" 2>&1; tally "$(basename "$t" .sh)" $?
done

# Golden CLI tests: NAME.sh with NAME.stdout.exact or NAME.stdout.glob and NAME.exit.
for t in tests/cli/*/*.sh; do
  [ -f "$t" ] || continue
  base=${t%.sh}; want_exit=0
  [ -f "$base.exit" ] && want_exit=$(cat "$base.exit")
  out=$(cd "$(dirname "$t")" && sh "$(basename "$t")" 2>/dev/null); rc=$?
  ok=1
  [ "$rc" = "$want_exit" ] || ok=0
  if [ -f "$base.stdout.exact" ]; then
    [ "$out" = "$(cat "$base.stdout.exact")" ] || ok=0
  elif [ -f "$base.stdout.glob" ]; then
    # shellcheck disable=SC2254
    case "$out" in $(cat "$base.stdout.glob")) ;; *) ok=0 ;; esac
  fi
  if [ $ok = 1 ]; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAIL cli ${t#tests/cli/} (exit $rc, want $want_exit)"
    printf '%s\n' "$out" | head -n 20
  fi
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
