#!/bin/sh
# heaptape -- analysis throughput and peak RSS of `heaptape report` against
# heaptrack_print, on the same workload recorded by both. Usage:
#   sh bench/bench_report.sh [BUILD_DIR] [ALLOCATIONS]
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
N=${2:-2000000}
HT="$PWD/$B/heaptape"
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT

# A workload: N allocations from 64 call sites (8 levels deep), a sliding
# window of 1000 live blocks, and a few leaks.
cat > "$w/churn.c" <<'C'
#include <stdlib.h>
#define NI __attribute__((noinline))
static void *win[1000];
NI static void *leaf(int s, size_t n) { return s & 1 ? malloc(n) : calloc(1, n); }
NI static void *l1(int s, size_t n) { return leaf(s, n); }
NI static void *l2(int s, size_t n) { return s & 2 ? l1(s, n) : leaf(s, n); }
NI static void *l3(int s, size_t n) { return s & 4 ? l2(s, n) : l1(s, n); }
NI static void *l4(int s, size_t n) { return s & 8 ? l3(s, n) : l2(s, n); }
NI static void *l5(int s, size_t n) { return s & 16 ? l4(s, n) : l3(s, n); }
NI static void *l6(int s, size_t n) { return s & 32 ? l5(s, n) : l4(s, n); }
int main(int argc, char **argv)
{
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  unsigned x = 12345;
  for (long i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    int k = (int)(i % 1000);
    free(win[k]);
    win[k] = l6((int)(x >> 10) & 63, 16 + (x >> 20) % 2000);
  }
  for (int i = 0; i < 10; i++) win[i] = NULL;  /* leak 10 blocks */
  return 0;
}
C
cc -O1 -g -fno-omit-frame-pointer -o "$w/churn" "$w/churn.c"

# Wall seconds and peak RSS (KiB) of a command, as "SECONDS KIB".
measure() {
  /usr/bin/time -f '%e %M' -o "$w/time" "$@" > "$w/out" 2> "$w/err" || { cat "$w/err" >&2; exit 1; }
  cat "$w/time"
}

"$HT" record -o "$w/churn.tape" -- "$w/churn" "$N" 2>/dev/null
heaptrack -o "$w/churn.ht" "$w/churn" "$N" > /dev/null 2>&1
htfile=$(ls "$w"/churn.ht* | head -n 1)
ev=$("$HT" stats "$w/churn.tape" | sed -n 's/^  events *\([0-9]*\).*/\1/p')

echo "workload: $N allocations ($ev tape events); tape $(stat -c %s "$w/churn.tape") bytes, heaptrack file $(stat -c %s "$htfile") bytes"
for run in 1 2 3; do
  set -- $(measure "$HT" report "$w/churn.tape"); hs=$1 hr=$2
  set -- $(measure "$HT" report --memprof "$w/churn.tape"); ms=$1 mr=$2
  set -- $(measure heaptrack_print "$htfile"); ts=$1 tr=$2
  echo "run $run: heaptape report ${hs}s ${hr}KiB; report --memprof ${ms}s ${mr}KiB; heaptrack_print ${ts}s ${tr}KiB"
done
awk -v e="$ev" -v s="$hs" 'BEGIN { if (s > 0) printf "heaptape report: %.1f M events/s\n", e / s / 1e6 }'
