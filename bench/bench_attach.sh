#!/bin/sh
# heaptape benchmarks -- heaptape attach on running programs: the program's
# own rate (allocation calls, or python3 loop iterations, per 1 s window)
# never attached, recorded from the start under LD_PRELOAD (heaptape
# record), while attached, after detach, and while heaptrack -p is
# attached; and the time from `heaptape attach` to the first event on the
# tape (heaptrack: to its first allocation in the output). Each attached
# window opens 1 s after the attach (the LD_PRELOAD window opens after
# start-up too: both past the unwinder's first sight of the code). Medians of
# ROUNDS rounds; every variant of a round runs side by side (one after the
# other) on the same machine. Prints a markdown table for docs/PERFORMANCE.md.
# usage: sh bench/bench_attach.sh [BUILD_DIR]   (ROUNDS=5 by default)
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
H=$PWD/$B/heaptape
LOOP=$PWD/$B/progs/attach_loop
ROUNDS=${ROUNDS:-5}
T=$(mktemp -d /tmp/ht-bench-attach.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ -x "$LOOP" ] || { echo "build $LOOP first (make test builds it)"; exit 1; }

cat >"$T/loop.py" <<'PY'
import os, signal, sys, time
w = [0, 0]                       # window open, iterations counted
def tog(*a):
    if w[0]: print("window", w[1], file=sys.stderr, flush=True)
    w[0] ^= 1; w[1] = 0
signal.signal(signal.SIGUSR1, tog)
signal.signal(signal.SIGUSR2, lambda *a: sys.exit(0))
print("ready", file=sys.stderr, flush=True)
d = {}
i = 0
while True:
    d[i % 500] = [str(i)] * (100 + i % 7)
    i += 1
    w[1] += w[0]
PY

# until_line FILE REGEX: wait at most 20 s.
until_line() {
  i=0
  while ! grep -Eq "$2" "$1" 2>/dev/null; do i=$((i + 1)); [ $i -gt 400 ] && return 1; sleep 0.05; done
}
# rate ERRFILE PID: open a 1 s window, print the count (the Nth window line).
rate() {
  n=$(grep -c '^window' "$1")
  kill -USR1 "$2"; sleep 1; kill -USR1 "$2"
  until_line "$1" "^window" && while [ "$(grep -c '^window' "$1")" -le "$n" ]; do sleep 0.02; done
  grep '^window' "$1" | tail -n 1 | awk '{print $2}'
}
now() { date +%s%N; }
# first_event TAPE T0: ms from T0 to the tape's first ALLOC/FREE.
first_event() {
  "$H" dump --no-stacks "$1" 2>/dev/null | awk -v t0="$2" '
    /^# clock/ { for (i = 1; i <= NF; i++) if ($i == "start") s = $(i + 1) }
    $4 == "ALLOC" || $4 == "FREE" { printf "%.0f\n", (s + $2 - t0) / 1e6; exit }'
}
# start NAME: run the workload in the background; sets P and E (its stderr).
start() {
  E=$T/$1.err
  case $1 in
  c) ATTACH_LOOP_BUSY=1 "$LOOP" >/dev/null 2>"$E" & P=$! ;;
  py) /usr/bin/python3 "$T/loop.py" >/dev/null 2>"$E" & P=$! ;;
  esac
  until_line "$E" '^ready'
}
start_pre() {
  E=$T/$1.perr
  case $1 in
  c) env LD_PRELOAD="$PWD/$B/libheaptape.so" HEAPTAPE_OUTPUT="$T/pre.tape" ATTACH_LOOP_BUSY=1 "$LOOP" >/dev/null 2>"$E" & P=$! ;;
  py) env LD_PRELOAD="$PWD/$B/libheaptape.so" HEAPTAPE_OUTPUT="$T/pre.tape" /usr/bin/python3 "$T/loop.py" >/dev/null 2>"$E" & P=$! ;;
  esac
  until_line "$E" '^ready'
}
stop() { kill -USR2 "$P"; wait "$P" 2>/dev/null; }
med() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

for w in c py; do
  : >"$T/$w.never"; : >"$T/$w.pre"; : >"$T/$w.att"; : >"$T/$w.after"; : >"$T/$w.first"
  : >"$T/$w.ht"; : >"$T/$w.htfirst"; : >"$T/$w.htafter"
  for r in $(seq "$ROUNDS"); do
    start "$w"
    rate "$E" "$P" >>"$T/$w.never"
    t0=$(now)
    "$H" attach --no-symbols -o "$T/a.tape" "$P" 2>"$T/att.err" & A=$!
    until_line "$T/att.err" 'recording process'
    sleep 1   # (warm-up: the unwinder's first sight of each return address, as after start-up)
    rate "$E" "$P" >>"$T/$w.att"
    kill -INT $A; wait $A
    first_event "$T/a.tape" "$t0" >>"$T/$w.first"
    rate "$E" "$P" >>"$T/$w.after"
    stop
    start_pre "$w"
    rate "$E" "$P" >>"$T/$w.pre"
    stop
    if command -v heaptrack >/dev/null; then
      start "$w"
      t0=$(now)
      heaptrack -r -p "$P" -o "$T/ht.$w.$r" >"$T/ht.log" 2>&1 & K=$!
      i=0; until [ -s "$T/ht.$w.$r.raw.zst" ] || [ -s "$T/ht.$w.$r.zst" ] || [ -s "$T/ht.$w.$r.raw" ] || [ $i -gt 600 ]; do i=$((i + 1)); sleep 0.01; done
      echo $(( ($(now) - t0) / 1000000 )) >>"$T/$w.htfirst"
      sleep 1
      rate "$E" "$P" >>"$T/$w.ht"
      kill -INT $K; sleep 1; kill $K 2>/dev/null; wait $K 2>/dev/null
      if kill -0 "$P" 2>/dev/null; then rate "$E" "$P" >>"$T/$w.htafter"; stop; else echo "heaptrack: $w process gone after detach" >&2; fi
      rm -f "$T"/ht.$w.$r*
    fi
  done
done

echo "| workload | never attached | LD_PRELOAD recording | attached | attached / LD_PRELOAD | after detach / never | heaptape attach to first event | heaptrack -p attached | heaptrack -p to first data | after heaptrack detach / never |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for w in c py; do
  n=$(med <"$T/$w.never"); p=$(med <"$T/$w.pre"); a=$(med <"$T/$w.att"); d=$(med <"$T/$w.after")
  f=$(med <"$T/$w.first"); h=$(med <"$T/$w.ht" 2>/dev/null); hf=$(med <"$T/$w.htfirst" 2>/dev/null)
  ha=$(med <"$T/$w.htafter" 2>/dev/null)
  name=$([ $w = c ] && echo "C loop, allocation calls/s" || echo "python3 loop, iterations/s")
  awk -v w="$name" -v n="$n" -v p="$p" -v a="$a" -v d="$d" -v f="$f" -v h="$h" -v hf="$hf" -v ha="$ha" 'BEGIN {
    printf "| %s | %d | %d | %d | %.2f | %.2f | %d ms | %s | %s | %s |\n", w, n, p, a, a / p, d / n, f,
      h == "" ? "-" : sprintf("%d", h), hf == "" ? "-" : hf " ms", ha == "" ? "-" : sprintf("%.2f", ha / n) }'
done
echo
echo "(medians of $ROUNDS rounds; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg))"
