#!/bin/sh
# heaptape bench -- overhead of the Python module (docs/PYTHON.md) beside
# tracemalloc and heaptape's native recording of the same scripts.
# usage: [B=build] [RUNS=5] bench/bench_python.sh
# Scripts: bench/python/trees.py (binary trees of tuples, dicts of strings:
# allocation-heavy, deep recursion) and bench/python/mixed.py (json, re,
# sqlite3, threads). Modes, each run RUNS times, interleaved run by run:
#   bare         /usr/bin/python3 script
#   tracemalloc  python3 -X tracemalloc=25 (whole stacks up to 25 frames)
#   module       the module started as `heaptape record --python` starts it
#                (PYTHONPATH + HEAPTAPE_PYTHON_OUTPUT), whole Python stacks
#   module-512K  the same with HEAPTAPE_SAMPLE=512K (sampled by bytes)
#   native       LD_PRELOAD libheaptape.so: malloc with native stacks (libunwind)
#   py+native    LD_PRELOAD and the module with HEAPTAPE_PYTHON_NATIVE=1
#                (`record --python=native`: mixed stacks, both domains)
# The recorded runs write the tape to a temporary file and stop (no
# symbolisation: that is `heaptape record`'s parent, after the run). Medians of
# CPU time (user + sys, all threads) and wall time; ratios to bare.
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
B=${B:-build}
RUNS=${RUNS:-5}
PY=/usr/bin/python3
LIB=$ROOT/$B/libheaptape.so
PYDIR=$ROOT/$B/python
[ -f "$LIB" ] && [ -d "$PYDIR" ] || { echo "bench_python: build first (make B=$B)"; exit 1; }
T=$(mktemp -d /tmp/ht-bench-py.XXXXXX); trap 'rm -rf "$T"' EXIT
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print 0 }'; }
# run1 OUT CMD...: append "cpu wall" of one run to OUT
run1() {
  out=$1; shift
  /usr/bin/time -f '%U %S %e' -o "$T/time" "$@" >/dev/null 2>"$T/err" </dev/null || { cat "$T/err" >&2; return 1; }
  awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$T/time" >> "$out"
}
# mode NAME SCRIPT ARGS: run the script once in mode NAME
mode() {
  m=$1; shift
  case $m in
  bare) run1 "$T/$m" $PY "$@" ;;
  tracemalloc) run1 "$T/$m" $PY -X tracemalloc=25 "$@" ;;
  module) run1 "$T/$m" env PYTHONPATH="$PYDIR" HEAPTAPE_PYTHON_OUTPUT="$T/t.tape" $PY "$@" ;;
  module-512K) run1 "$T/$m" env PYTHONPATH="$PYDIR" HEAPTAPE_PYTHON_OUTPUT="$T/t.tape" \
                 HEAPTAPE_SAMPLE=512K $PY "$@" ;;
  native) run1 "$T/$m" env LD_PRELOAD="$LIB" HEAPTAPE_OUTPUT="$T/t.tape" $PY "$@" ;;
  py+native) run1 "$T/$m" env LD_PRELOAD="$LIB" HEAPTAPE_OUTPUT="$T/t.tape" PYTHONPATH="$PYDIR" \
               HEAPTAPE_PYTHON_NATIVE=1 $PY "$@" ;;
  esac
}
MODES="bare tracemalloc module module-512K native py+native"
echo "| script | mode | CPU s | wall s | CPU / bare | wall / bare |"
echo "|---|---|---|---|---|---|"
for s in "trees.py 18" "mixed.py 60000"; do
  for m in $MODES; do rm -f "$T/$m"; done
  i=0
  while [ $i -lt "$RUNS" ]; do
    for m in $MODES; do
      # shellcheck disable=SC2086
      mode "$m" bench/python/$s || exit 1
    done
    i=$((i + 1))
  done
  bc=$(cut -d' ' -f1 "$T/bare" | median); bw=$(cut -d' ' -f2 "$T/bare" | median)
  for m in $MODES; do
    c=$(cut -d' ' -f1 "$T/$m" | median); w=$(cut -d' ' -f2 "$T/$m" | median)
    awk -v s="${s%% *}" -v m="$m" -v c="$c" -v w="$w" -v bc="$bc" -v bw="$bw" \
      'BEGIN { printf "| %s | %s | %.2f | %.2f | %.2fx | %.2fx |\n", s, m, c, w, c / bc, w / bw }'
  done
done
