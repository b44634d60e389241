#!/bin/sh
# heaptape -- every benchmark in turn (`make bench`); each prints a markdown
# table for docs/PERFORMANCE.md. BENCH_B selects the build directory.
set -u
cd "$(dirname "$0")/.."
B=${BENCH_B:-build}
for s in bench_format bench_report bench_replay bench_record bench_lua bench_python bench_ruby bench_live bench_attach; do
  [ -f "bench/$s.sh" ] || continue
  echo "== $s"
  B=$B sh "bench/$s.sh" "$B" || echo "$s failed"
done
