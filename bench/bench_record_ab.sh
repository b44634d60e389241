#!/bin/sh
# heaptape bench -- the recorder of two builds side by side: each workload
# recorded by build A's and by build B's libheaptape.so, runs alternating
# (A B A B ...), so that the machine's drift hits both alike.
#
# usage: sh bench/bench_record_ab.sh BUILD_A BUILD_B [RUNS]     (default 5)
#
# Each run is plain LD_PRELOAD with HEAPTAPE_OUTPUT (every event, libunwind
# stacks), no finalisation: the cost paid inside the program. Prints, per
# workload, the median wall and CPU (user+sys) seconds of each build and
# the ratio B/A. Workloads: bench/workloads.sh (python3, sqlite3, perl) and
# fpapp (bench/rec_fpapp.cc); ONLY="perl fpapp" picks some.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: sh bench/bench_record_ab.sh BUILD_A BUILD_B [RUNS]" >&2; exit 2; }
A=$1 B=$2 RUNS=${3:-5}
case $A in /*) ;; *) A=$ROOT/$A ;; esac
case $B in /*) ;; *) B=$ROOT/$B ;; esac
for d in "$A" "$B"; do
  [ -f "$d/libheaptape.so" ] || { echo "bench_record_ab: no $d/libheaptape.so" >&2; exit 1; }
done
W=$(mktemp -d /tmp/ht-bab.XXXXXX)
trap 'rm -rf "$W"' EXIT
. "$ROOT/bench/workloads.sh"
${CXX:-g++} -std=c++17 -O2 -g -fno-omit-frame-pointer -o "$W/fpapp" "$ROOT/bench/rec_fpapp.cc" || exit 1
wl_fpapp() { "$@" "$W/fpapp" 1; }
WORKLOADS=${ONLY:-"python sqlite perl fpapp"}

# Runs argv with its output discarded; prints "wall cpu" in seconds.
cat > "$W/meas.py" <<'PYEOF'
import os, resource, subprocess, sys, time
r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
t1 = time.monotonic(); r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
print("%.3f %.3f" % (t1 - t0, cpu))
PYEOF

# Median of the numbers on stdin.
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "| workload | wall A s | wall B s | wall B/A | CPU A s | CPU B s | CPU B/A |"
echo "|---|---|---|---|---|---|---|"
for w in $WORKLOADS; do
  : > "$W/a" ; : > "$W/b"
  i=0
  while [ $i -lt "$RUNS" ]; do
    for side in a b; do
      lib=$A; [ $side = b ] && lib=$B
      wl_$w python3 "$W/meas.py" env LD_PRELOAD="$lib/libheaptape.so" \
        HEAPTAPE_OUTPUT="$W/t.tape" >> "$W/$side"
      rm -f "$W/t.tape"
    done
    i=$((i + 1))
  done
  wa=$(cut -d' ' -f1 "$W/a" | median) wb=$(cut -d' ' -f1 "$W/b" | median)
  ca=$(cut -d' ' -f2 "$W/a" | median) cb=$(cut -d' ' -f2 "$W/b" | median)
  awk -v w="$w" -v wa="$wa" -v wb="$wb" -v ca="$ca" -v cb="$cb" 'BEGIN {
    printf "| %s | %.2f | %.2f | %.3f | %.2f | %.2f | %.3f |\n", w, wa, wb, wb / wa, ca, cb, cb / ca }'
done
