#!/bin/sh
# heaptape bench -- overhead of the Ruby extension (docs/RUBY.md) beside
# ObjectSpace.trace_object_allocations and the memory_profiler gem (Debian's
# ruby-memory-profiler), and heaptape's native recording of the same script.
# usage: [B=build] [B2=other-build] [RUNS=3] [DEPTH=17] [MODES="bare ..."] bench/bench_ruby.sh
# Script: bench/ruby/trees.rb 17 (binary trees of arrays, hashes of strings).
# Modes, each run RUNS times, interleaved run by run:
#   bare            ruby script
#   trace_alloc     ObjectSpace.trace_object_allocations_start for the run
#   memory_profiler MemoryProfiler.report { load script }, report to /dev/null
#   module          the extension started as `heaptape record --ruby` starts it
#                   (RUBYLIB + RUBYOPT=-rheaptape_record), every object, stacks
#   module-512K     the same with HEAPTAPE_SAMPLE=512K
#   module-512K-b2  the same with the extension of build B2 (B2 set: added to
#                   the default modes), to compare two versions in one run
#   native          LD_PRELOAD libheaptape.so: malloc with native stacks
#   hooks-gc        empty internal GC event hooks (bench/ruby/hookfloor.c),
#                   always on: what they cost (module-512K has them on
#                   only from the GC before a sample point to the point)
#   hooks-obj       empty NEWOBJ/FREEOBJ hooks: the floor of a hook per object
# Medians of CPU time (user + sys, all threads) and wall time; ratios to bare.
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
B=${B:-build}
RUNS=${RUNS:-3}
LIB=$ROOT/$B/libheaptape.so
RBDIR=$ROOT/$B/ruby
[ -f "$LIB" ] && [ -d "$RBDIR" ] || { echo "bench_ruby: build first (make B=$B)"; exit 1; }
command -v ruby >/dev/null || { echo "bench_ruby: no ruby"; exit 1; }
T=$(mktemp -d /tmp/ht-bench-rb.XXXXXX); trap 'rm -rf "$T"' EXIT
${CC:-cc} -O2 -shared -fPIC -I/usr/include/ruby-3.1.0 -I/usr/include/x86_64-linux-gnu/ruby-3.1.0 \
  -o "$T/hookfloor.so" bench/ruby/hookfloor.c || { echo "bench_ruby: cannot build hookfloor.c"; exit 1; }
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print 0 }'; }
run1() {
  out=$1; shift
  /usr/bin/time -f '%U %S %e' -o "$T/time" "$@" >/dev/null 2>"$T/err" </dev/null || { cat "$T/err" >&2; return 1; }
  awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$T/time" >> "$out"
}
D=${DEPTH:-17}
S="bench/ruby/trees.rb $D"
mode() {
  m=$1
  # shellcheck disable=SC2086
  case $m in
  bare) run1 "$T/$m" ruby $S ;;
  trace_alloc) run1 "$T/$m" env RUBYOPT="-r$ROOT/bench/ruby/trace_alloc.rb" ruby $S ;;
  memory_profiler) run1 "$T/$m" ruby bench/ruby/memprof.rb $S ;;
  module) run1 "$T/$m" env RUBYLIB="$RBDIR" RUBYOPT=-rheaptape_record HEAPTAPE_RUBY_OUTPUT="$T/t.tape" ruby $S ;;
  module-512K) run1 "$T/$m" env RUBYLIB="$RBDIR" RUBYOPT=-rheaptape_record HEAPTAPE_RUBY_OUTPUT="$T/t.tape" \
                 HEAPTAPE_SAMPLE=512K ruby $S ;;
  module-512K-b2) run1 "$T/$m" env RUBYLIB="$ROOT/$B2/ruby" RUBYOPT=-rheaptape_record HEAPTAPE_RUBY_OUTPUT="$T/t.tape" \
                 HEAPTAPE_SAMPLE=512K ruby $S ;;
  native) run1 "$T/$m" env LD_PRELOAD="$LIB" HEAPTAPE_OUTPUT="$T/t.tape" ruby $S ;;
  hooks-gc) run1 "$T/$m" env HOOKFLOOR=gc ruby -I"$T" -rhookfloor $S ;;
  hooks-obj) run1 "$T/$m" env HOOKFLOOR=obj ruby -I"$T" -rhookfloor $S ;;
  esac
}
[ -z "${B2:-}" ] || [ -f "$ROOT/$B2/ruby/heaptape.so" ] || { echo "bench_ruby: no $B2/ruby/heaptape.so"; exit 1; }
MODES=${MODES:-"bare trace_alloc memory_profiler module module-512K${B2:+ module-512K-b2} native hooks-gc hooks-obj"}
echo "| script | mode | CPU s | wall s | CPU / bare | wall / bare |"
echo "|---|---|---|---|---|---|"
i=0
while [ $i -lt "$RUNS" ]; do
  for m in $MODES; do mode "$m" || exit 1; done
  i=$((i + 1))
done
bc=$(cut -d' ' -f1 "$T/bare" | median); bw=$(cut -d' ' -f2 "$T/bare" | median)
for m in $MODES; do
  c=$(cut -d' ' -f1 "$T/$m" | median); w=$(cut -d' ' -f2 "$T/$m" | median)
  awk -v m="$m" -v c="$c" -v w="$w" -v bc="$bc" -v bw="$bw" \
    -v d="$D" 'BEGIN { printf "| trees.rb %s | %s | %.2f | %.2f | %.2fx | %.2fx |\n", d, m, c, w, c / bc, w / bw }'
done
