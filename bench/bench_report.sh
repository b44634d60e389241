#!/bin/sh
# heaptape bench -- analysis throughput and peak RSS of `heaptape report`
# against heaptrack_print, on the same programs recorded by both: the real
# workloads of bench/workloads.sh plus a synthetic churn with a small live set.
# usage: sh bench/bench_report.sh [BUILD_DIR] [RUNS]
#        (BENCH_WORKLOADS="python churn" to run some of them; BENCH_READERS=0
#        leaves out the table of the commands reading the events)
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}; RUNS=${2:-3}
HT="$PWD/$B/heaptape"
W=$(mktemp -d /tmp/ht-bench-report.XXXXXX); trap 'rm -rf "$W"' EXIT
. bench/workloads.sh

# A synthetic churn: 2M allocations from 64 sites 8 frames deep, 1000 live.
cc -O1 -g -fno-omit-frame-pointer -o "$W/churn" bench/churn.c
wl_churn() { "$@" "$W/churn"; }

# A long run (issue 12: at least 100 M events): the python3 workload six
# times over in one process, about 114 M events with a bounded live set.
cat > "$W/pylong.py" <<'PYEOF'
import json
for r in range(6):
    d = [{'a': i, 'b': str(i) * 3, 'c': [i] * 5} for i in range(200000)]
    s = json.dumps(d); e = json.loads(s)
print(len(s))
PYEOF
wl_long() { PYTHONMALLOC=malloc "$@" "$PY" "$W/pylong.py"; }

# Median of the arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# CPU seconds (user + sys) and peak RSS in MiB of a command: "SECS MIB".
measure() {
  /usr/bin/time -f '%U %S %M' -o "$W/time" "$@" > /dev/null 2> "$W/err" || { cat "$W/err" >&2; exit 1; }
  awk '{ printf "%.3f %.0f\n", $1 + $2, $3 / 1024 }' "$W/time"
}
# Wall seconds, CPU seconds and peak RSS in MiB: "WALL SECS MIB".
measure3() {
  /usr/bin/time -f '%e %U %S %M' -o "$W/time" "$@" > /dev/null 2> "$W/err" || { cat "$W/err" >&2; exit 1; }
  awk '{ printf "%.3f %.3f %.0f\n", $1, $2 + $3, $4 / 1024 }' "$W/time"
}

# The commands that read a sealed tape's events (issue 12: at least 3x
# faster than heaptrack_print, 150 M events/s on both cores), each against
# heaptrack_print on the same program, runs alternating; with
# HEAPTAPE_READ_THREADS=1 (one core) beside the default (two threads
# decoding the blocks ahead). Rows into READROWS.
READERS="ops lifetimes heapmap at snaps"
reader() {  # reader NAME TAPE: the command line of reader NAME
  case $1 in
    ops) echo "$HT ops -o $W/o.txt $2" ;;
    lifetimes) echo "$HT lifetimes --by-site $2" ;;
    heapmap) echo "$HT heapmap -o $W/m.png $2" ;;
    at) echo "$HT report --at $3 $2" ;;
    snaps) echo "$HT report --heap-snap-interval $4 $2" ;;
  esac
}
READROWS=""
bench_readers() {  # bench_readers WORKLOAD SEALED HTFILE EVENTS
  bw=$1 bt=$2 bh=$3 be=$4
  dur=$("$HT" stats "$bt" | awk '/duration/ { print $2 }')
  at=$(awk -v d="$dur" 'BEGIN { printf "%.3f", d / 2 }')
  snap=$(awk -v d="$dur" 'BEGIN { printf "%.3f", d / 10 }')
  for rd in $READERS; do
    cmd=$(reader "$rd" "$bt" "$at" "$snap")
    r_tw="" r_tc="" r_tr="" r_ow="" r_oc="" r_hw="" r_hc="" r_hr=""
    i=0
    while [ $i -lt "$RUNS" ]; do
      set -- $(measure3 $cmd); r_tw="$r_tw $1"; r_tc="$r_tc $2"; r_tr="$r_tr $3"
      set -- $(measure3 env HEAPTAPE_READ_THREADS=1 $cmd); r_ow="$r_ow $1"; r_oc="$r_oc $2"
      set -- $(measure3 heaptrack_print "$bh"); r_hw="$r_hw $1"; r_hc="$r_hc $2"; r_hr="$r_hr $3"
      i=$((i + 1))
    done
    READROWS="$READROWS$(awk -v w="$bw" -v rd="$rd" -v e="$be" -v r_tw="$(median $r_tw)" \
      -v r_tc="$(median $r_tc)" -v r_tr="$(median $r_tr)" -v r_ow="$(median $r_ow)" -v r_oc="$(median $r_oc)" \
      -v r_hw="$(median $r_hw)" -v r_hc="$(median $r_hc)" -v r_hr="$(median $r_hr)" \
      'BEGIN { rate = (rd == "at" || r_tw <= 0) ? "-" : sprintf("%.0f M events/s", e / r_tw / 1e6)
        printf "| %s | %s | %.2f s, %.2f s CPU | %.2f s, %.2f s CPU, %d MiB (%s) | %.2f s, %.2f s CPU, %d MiB | %.1fx | %.1fx |\n",
          w, rd, r_ow, r_oc, r_tw, r_tc, r_tr, rate, r_hw, r_hc, r_hr, (r_tw > 0 ? r_hw / r_tw : 0),
          (r_tc > 0 ? r_hc / r_tc : 0) }')
"
  done
}

echo "| workload | allocation calls | tape events | heaptape report | heaptrack_print | speed-up | RSS heaptape / heaptrack_print |"
echo "|---|---|---|---|---|---|---|"
SEALROWS=""
for w in ${BENCH_WORKLOADS:-$WORKLOADS churn long}; do
  "wl_$w" "$HT" record --journal -o "$W/$w.tape" -- > /dev/null 2>&1
  "wl_$w" heaptrack -o "$W/$w.ht" > /dev/null 2>&1 || true
  htfile=$(ls "$W/$w.ht"* | head -n 1)
  ev=$("$HT" stats "$W/$w.tape" | sed -n 's/^  events *\([0-9]*\).*/\1/p')
  calls=$(heaptrack_print "$htfile" 2>/dev/null | sed -n 's/^calls to allocation functions: \([0-9]*\).*/\1/p')
  hs="" ts="" hr="" tr=""
  i=0
  while [ $i -lt "$RUNS" ]; do
    set -- $(measure "$HT" report "$W/$w.tape"); hs="$hs $1"; hr="$hr $2"
    set -- $(measure heaptrack_print "$htfile"); ts="$ts $1"; tr="$tr $2"
    i=$((i + 1))
  done
  # Sealing (issue 12): its rate, the sealed size, report on the sealed tape.
  cp "$W/$w.tape" "$W/$w.sealed"
  /usr/bin/time -f '%e %U %S %M' -o "$W/stime" "$HT" seal "$W/$w.sealed" 2>/dev/null
  ss="" sr="" ps="" pr="" fs="" fr="" gs="" gr="" ms="" mr=""
  i=0
  while [ $i -lt "$RUNS" ]; do
    set -- $(measure "$HT" report "$W/$w.sealed"); ss="$ss $1"; sr="$sr $2"
    set -- $(measure "$HT" pprof -o "$W/p.pb.gz" "$W/$w.sealed"); ps="$ps $1"; pr="$pr $2"
    set -- $(measure "$HT" flamegraph --folded -o "$W/f.folded" "$W/$w.sealed"); fs="$fs $1"; fr="$fr $2"
    set -- $(measure "$HT" stats "$W/$w.sealed"); gs="$gs $1"; gr="$gr $2"
    set -- $(measure "$HT" html -o "$W/r.html" "$W/$w.sealed"); ms="$ms $1"; mr="$mr $2"
    i=$((i + 1))
  done
  [ "${BENCH_READERS:-1}" = 0 ] || bench_readers "$w" "$W/$w.sealed" "$htfile" "$ev"
  # Speed-ups against heaptrack_print; CPU time is counted in 10 ms ticks.
  SEALROWS="$SEALROWS$(awk -v w="$w" -v c="$calls" -v e="$ev" -v jb="$(wc -c < "$W/$w.tape")" \
    -v sb="$(wc -c < "$W/$w.sealed")" -v hb="$(wc -c < "$htfile")" -v s="$(median $ss)" \
    -v srss="$(median $sr)" -v t="$(median $ts)" -v trss="$(median $tr)" -v p="$(median $ps)" \
    -v f="$(median $fs)" -v stime="$(cat "$W/stime")" -v prss="$(median $pr)" \
    -v frss="$(median $fr)" -v g="$(median $gs)" -v grss="$(median $gr)" -v hm="$(median $ms)" \
    -v hrss="$(median $mr)" \
    'function x(v) { return v < 0.01 ? sprintf(">%.0fx", t / 0.01) : sprintf("%.0fx", t / v) }
     BEGIN { split(stime, st, " ")
      printf "| %s | %.2f s wall, %.2f s CPU (%.1f M events/s), %d MiB | %.2f | %.2f | %.2f | %.2f s (%s), %d / %d MiB | %.2f s (%s), %d MiB | %.2f s (%s), %d MiB | %.2f s (%s), %d MiB | %.2f s (%s), %d MiB |\\n",
        w, st[1], st[2] + st[3], e / (st[2] + st[3]) / 1e6, st[4] / 1024, jb / c, sb / c, hb / c,
        s, x(s), srss, trss, p, x(p), prss, f, x(f), frss, g, x(g), grss, hm, x(hm), hrss }')"
  h=$(median $hs); t=$(median $ts)
  awk -v w="$w" -v c="$calls" -v e="$ev" -v h="$h" -v t="$t" -v hr="$(median $hr)" -v tr="$(median $tr)" \
    'BEGIN { printf "| %s | %s | %s | %.2f s (%.1f M events/s) | %.2f s | %.2fx | %d / %d MiB |\n", w, c, e, h, e / h / 1e6, t, t / h, hr, tr }'
  rm -f "$W/$w.tape" "$W/$w.sealed" "$W/$w".ht*
done
echo "(CPU seconds, user + sys, median of $RUNS runs)"
echo
echo "| workload | heaptape seal | journal bytes / call | sealed bytes / call | heaptrack bytes / call | report on the sealed tape (speed-up on heaptrack_print), RSS / heaptrack_print's | pprof on it, RSS | flamegraph --folded on it, RSS | stats on it, RSS | html on it, RSS |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf "$SEALROWS"
echo
echo "Reading the sealed tape's events (wall, CPU, peak RSS; events/s by wall, all of the tape's events; at reads a few blocks; speed-ups: heaptrack_print's wall, CPU / heaptape's with two threads):"
echo
echo "| workload | command | one thread (HEAPTAPE_READ_THREADS=1) | default (two decoding threads) | heaptrack_print | speed-up (wall) | (CPU) |"
echo "|---|---|---|---|---|---|---|"
printf '%s' "$READROWS"
