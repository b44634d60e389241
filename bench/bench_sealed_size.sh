#!/bin/sh
# heaptape bench -- bytes per allocation call of the journal, the sealed tape
# and heaptrack's output on the same programs (bench/workloads.sh), with the
# cost of naming each freed block: log2 of the blocks live at each free, the
# bits a uniform choice among them takes (docs/PERFORMANCE.md, sealed tapes).
# usage: sh bench/bench_sealed_size.sh [BUILD_DIR]   (SEAL_COLUMNS=1: where the
#        sealed bytes go, bench/seal_columns.py)
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
HT="$PWD/$B/heaptape"
W=$(mktemp -d /tmp/ht-bench-sealsize.XXXXXX); trap 'rm -rf "$W"' EXIT
. bench/workloads.sh
command -v heaptrack >/dev/null || { echo "bench_sealed_size: heaptrack not installed" >&2; exit 1; }
# Besides bench/workloads.sh: the synthetic churn and an interpreter's
# binary-trees (Lua 5.4's allocations, depth 14).
cc -O1 -g -fno-omit-frame-pointer -o "$W/churn" bench/churn.c
wl_churn() { "$@" "$W/churn"; }
wl_luatrees() { "$@" lua5.4 bench/lua/trees.lua 14; }
printf '%-8s %9s %9s %9s %9s %11s\n' workload calls journal sealed heaptrack naming-bound
for w in $WORKLOADS churn luatrees; do
  "wl_$w" "$HT" record -o "$W/$w.tape" -- >/dev/null 2>&1 || { echo "bench_sealed_size: $w failed" >&2; exit 1; }
  htok=1; "wl_$w" heaptrack -o "$W/ht.$w" >/dev/null 2>&1 || htok=0  # cc1plus dies under it here
  cp "$W/$w.tape" "$W/$w.sealed"
  "$HT" seal "$W/$w.sealed" >/dev/null 2>&1
  calls=$("$HT" stats "$W/$w.sealed" | awk '$1 == "alloc" {print $2; exit}')
  bound=$("$HT" ops "$W/$w.sealed" | awk '$3 == "N" {live++} $3 == "F" {if (live > 1) b += log(live) / log(2); live--} END {printf "%.0f", b / 8}')
  per() { awk -v n="$1" -v c="$calls" 'BEGIN {printf "%.3f", n / c}'; }
  ht=failed
  [ $htok = 1 ] && ht=$(per "$(stat -c %s "$(ls "$W"/ht."$w".* | head -n 1)")")
  printf '%-8s %9s %9s %9s %9s %11s\n' "$w" "$calls" "$(per "$(stat -c %s "$W/$w.tape")")" \
    "$(per "$(stat -c %s "$W/$w.sealed")")" "$ht" "$(per "$bound")"
  if [ "${SEAL_COLUMNS:-}" = 1 ]; then python3 bench/seal_columns.py "$W/$w.sealed"; fi
done
