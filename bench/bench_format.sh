#!/bin/sh
# heaptape bench -- tape encode/decode throughput, bytes per event and the
# stack encoding, on tapes recorded from real programs (bench/workloads.sh).
# usage: sh bench/bench_format.sh [BUILD_DIR] [RUNS]
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}; RUNS=${2:-5}
HT="$PWD/$B/heaptape"
W=$(mktemp -d /tmp/ht-bench-format.XXXXXX); trap 'rm -rf "$W"' EXIT
. bench/workloads.sh
tapes=""
for w in $WORKLOADS; do
  "wl_$w" "$HT" record -o "$W/$w.tape" -- >/dev/null 2>&1 || { echo "bench_format: $w failed" >&2; exit 1; }
  tapes="$tapes $W/$w.tape"
done
# shellcheck disable=SC2086
"$B/bench/bench_format" --runs "$RUNS" $tapes
"$B/bench/bench_format" --runs "$RUNS"
