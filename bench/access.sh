#!/bin/sh
# heaptape benchmarks -- record --access (heaptape's Valgrind tool) beside
# native, valgrind --tool=none, --tool=dhat, --tool=lackey --trace-mem=yes,
# and record --access --access-sample 100, on three real programs. Per
# variant: the median of ROUNDS runs of CPU time (user + sys: the machine is
# shared, wall time is noise) and wall time, every variant of a round run
# side by side (lackey, ~70x slower, in the first round only); native is
# timed over 20 runs (one run is below /usr/bin/time's 10 ms); ratios to
# --tool=none. Then the trace size per access:
# lackey's text (its whole output, I lines included, over its L/S/M lines)
# against the tape (bytes over accesses recorded). Prints markdown for
# docs/PERFORMANCE.md.
# usage: sh bench/access.sh [BUILD_DIR]   (ROUNDS=3 by default; PROGS="sqlite3
# python3 lua5.4 perl" by default; LACKEY=0
# leaves Lackey out, and the trace sizes with it: minutes less)
# Lackey's trace bytes are counted through a pipe (its text for python3 is
# gigabytes); the tape is the one record --access leaves (compressed).
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
H=$PWD/$B/heaptape
ROUNDS=${ROUNDS:-3}
T=$(mktemp -d /tmp/ht-bench-access.XXXXXX)
trap 'rm -rf "$T"' EXIT
command -v valgrind >/dev/null || { echo "valgrind missing"; exit 1; }
[ -x "$B/valgrind/heaptape-amd64-linux" ] || { echo "build $B/valgrind first (make)"; exit 1; }

. bench/access_workloads.sh

# cpu CMD...: "CPU WALL" seconds of one run (output discarded).
cpu() {
  /usr/bin/time -f '%U %S %e' -o "$T/time" "$@" >/dev/null 2>"$T/err" </dev/null
  awk '{printf "%.3f %.3f\n", $1 + $2, $3}' "$T/time"
}
# median FILE COLUMN
median() { awk -v c="$2" '{print $c}' "$1" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

variants="native none dhat lackey access sample100"
[ "${LACKEY:-1}" = 0 ] && variants="native none dhat access sample100"
run() {  # run VARIANT PROG ARGS...
  v=$1; shift
  case $v in
    native) cpu sh -c 'i=0; while [ $i -lt 20 ]; do "$@"; i=$((i+1)); done' sh "$@" |
            awk '{printf "%.4f %.4f\n", $1 / 20, $2 / 20}' ;;
    none) cpu valgrind -q --tool=none "$@" ;;
    dhat) cpu valgrind -q --tool=dhat --dhat-out-file="$T/dhat.out" "$@" ;;
    lackey) cpu valgrind -q --tool=lackey --trace-mem=yes --log-file="$T/lackey.out" "$@"
            rm -f "$T/lackey.out" ;;
    access) cpu "$H" record --access -o "$T/a.tape" -- "$@" ;;
    sample100) cpu "$H" record --access --access-sample 100 -o "$T/s.tape" -- "$@" ;;
  esac
}

echo "| program | variant | CPU s (median) | wall s | CPU / none |"
echo "|---|---|---|---|---|"
for prog in ${PROGS:-sqlite3 python3 lua5.4 perl}; do
  access_argv "$prog"; set -- "$AW1" "$AW2" "$AW3"
  for v in $variants; do : >"$T/$v.times"; done
  r=0
  while [ $r -lt "$ROUNDS" ]; do
    for v in $variants; do
      [ $v = lackey ] && [ $r -gt 0 ] && continue
      run $v "$@" >>"$T/$v.times"
    done
    r=$((r + 1))
  done
  none=$(median "$T/none.times" 1)
  for v in $variants; do
    c=$(median "$T/$v.times" 1); w=$(median "$T/$v.times" 2)
    echo "| $prog | $v | $c | $w | $(awk -v a="$c" -v b="$none" 'BEGIN {printf "%.2f", a / b}') |"
  done
  [ "${LACKEY:-1}" = 0 ] && continue
  # Trace bytes per access: lackey's text against the tape.
  valgrind -q --tool=lackey --trace-mem=yes --log-fd=3 "$@" 3>&1 >/dev/null 2>/dev/null </dev/null |
    awk '{b += length($0) + 1} /^ [LSM] / {n++} END {printf "%d %d\n", b, n}' >"$T/lk"
  "$H" record --access -o "$T/a.tape" -- "$@" >/dev/null 2>&1 </dev/null
  tb=$(stat -c %s "$T/a.tape")
  tn=$("$H" ops --access "$T/a.tape" 2>/dev/null | tail -n 1 | sed 's/.* accesses //')
  read lb ln <"$T/lk"
  echo "$prog $lb $ln $tb $tn" >>"$T/bytes"
done
[ "${LACKEY:-1}" = 0 ] && exit 0
echo
echo "| program | lackey text bytes | lackey accesses | bytes/access | tape bytes | heap accesses | bytes/access | tape / lackey per access |"
echo "|---|---|---|---|---|---|---|---|"
while read p lb ln tb tn; do
  awk -v p="$p" -v lb="$lb" -v ln="$ln" -v tb="$tb" -v tn="$tn" 'BEGIN {
    printf "| %s | %d | %d | %.2f | %d | %d | %.3f | 1/%.0f |\n", p, lb, ln, lb / ln, tb, tn,
           tb / tn, (lb / ln) / (tb / tn) }'
done <"$T/bytes"
