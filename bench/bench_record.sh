#!/bin/sh
# heaptape bench -- the recorder against native runs and heaptrack on real
# programs: wall/CPU ratios, tape bytes per allocation call, peak memory.
#
# usage: sh bench/bench_record.sh [BUILD_DIR] [RUNS]      (defaults: build 3)
#
# Workloads: bench/workloads.sh (python3, sqlite3, perl, cc1plus) and fpapp,
# a C++ program of ours built with frame pointers (bench/rec_fpapp.cc), the
# one where --unwind fp gives full stacks (Debian's binaries have none).
# Modes, side by side in one run, each the median of RUNS runs:
#   native   the program alone
#   full     heaptape record -o T -- PROG          (libunwind, every event;
#            the tape sealed while PROG runs, the default)
#   journal  heaptape record --journal -o T -- PROG (the journal, symbolised:
#            what record left before sealing became the default)
#   jseal    the same, then heaptape seal T        (sealing after the run:
#            what record --seal cost before it sealed while PROG ran)
#   fp       heaptape record --unwind fp -o T -- PROG
#   s512     heaptape record --sample 512K -o T -- PROG
#   s512c    the same with an empty debug-file cache (debugcache.h): what
#            the first recording of these binaries costs; every other
#            heaptape mode runs with the bench's own cache, warm after the
#            first run
#   htrack   heaptrack -o H PROG                   (Debian's heaptrack)
# Wall is elapsed time; CPU is user+sys of every process of the mode (the
# recorder's writer thread, heaptape record's finalisation, heaptrack's
# heaptrack_interpret and compressor included). Peak memory is the sum over
# the processes of each one's peak RSS (VmHWM polled every 50 ms, from a
# thread, and the waited child's ru_maxrss). Bytes/call divides the finalised tape
# (symbols appended) and heaptrack's .zst by the same N, heaptrack_print's
# "calls to allocation functions". A heaptrack run killed after HT_TIMEOUT
# seconds is not repeated and is marked "timeout" (its figures are lower bounds).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-build}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
RUNS=${2:-3}
HT_TIMEOUT=${HT_TIMEOUT:-150}   # heaptrack on cc1plus grows past 6 GB; cap it
HT=$B/heaptape
[ -x "$HT" ] && [ -f "$B/libheaptape.so" ] || { echo "bench_record: build $B first (make B=$B)" >&2; exit 1; }
command -v heaptrack >/dev/null || { echo "bench_record: heaptrack is not installed" >&2; exit 1; }
W=$(mktemp -d /tmp/ht-brec.XXXXXX)
trap 'rm -rf "$W"' EXIT
export HEAPTAPE_CACHE="$W/cache"
. "$ROOT/bench/workloads.sh"

# fpapp: our C++ workload with frame pointers everywhere in its own code.
${CXX:-g++} -std=c++17 -O2 -g -fno-omit-frame-pointer -o "$W/fpapp" "$ROOT/bench/rec_fpapp.cc" || exit 1
wl_fpapp() { "$@" "$W/fpapp" 1; }
WORKLOADS="$WORKLOADS fpapp"
WORKLOADS=${ONLY:-$WORKLOADS}   # ONLY="fpapp perl": run just those
for w in $WORKLOADS; do
  command -v "wl_$w" >/dev/null || { echo "bench_record: no workload '$w' (there are: python sqlite perl cxx fpapp)" >&2; exit 2; }
done
MODES=${MODES:-"native full journal jseal fp s512 s512c htrack"}  # MODES="native full htrack": those

# Runs argv, polls the process tree's peak RSS; prints "wall cpu peak_kib".
cat > "$W/meas.py" <<'PYEOF'
import os, sys, time, resource, threading
def tree(root):
    kids, out = {}, []
    for p in os.listdir('/proc'):
        if p.isdigit():
            try:
                with open('/proc/%s/stat' % p) as f: st = f.read()
                kids.setdefault(int(st[st.rindex(')') + 2:].split()[1]), []).append(int(p))
            except OSError: pass
    todo = [root]
    while todo:
        p = todo.pop(); out.append(p); todo += kids.get(p, [])
    return out
def hwm(p):
    try:
        with open('/proc/%d/status' % p) as f:
            for l in f:
                if l.startswith('VmHWM:'): return int(l.split()[1])
    except OSError: pass
    return 0
# Peaks are the kernel's high-water marks, so a poll need only catch each
# process before it ends: every 50 ms, from a thread, while the main thread
# waits for the program (a 5 ms poll of /proc took a third of a core).
peak, done = {}, threading.Event()
def poll():
    while not done.wait(0.05):
        for p in tree(pid):
            peak[p] = max(peak.get(p, 0), hwm(p))
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY); os.dup2(fd, 1); os.dup2(fd, 2)
    os.execvp(sys.argv[1], sys.argv[1:])
th = threading.Thread(target=poll); th.start()
r = os.wait4(pid, 0)
wall = time.monotonic() - t0
done.set(); th.join()
peak[pid] = max(peak.get(pid, 0), r[2].ru_maxrss)  # its growth after the last poll
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print('%.3f %.3f %d %d' % (wall, ru.ru_utime + ru.ru_stime, sum(peak.values()), os.waitstatus_to_exitcode(r[1])))
PYEOF

# meas OUTFILE CMD...: one measured run appended to OUTFILE.
meas() { o=$1; shift; python3 "$W/meas.py" "$@" >>"$o"; }
# median FILE COLUMN
median() { cut -d' ' -f"$2" "$1" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# run WORKLOAD MODE: one run of a workload in a mode (wl_* supplies stdin etc).
run() {
  case $2 in
    native) wl_$1 python3 "$W/meas.py" ;;
    full)   wl_$1 python3 "$W/meas.py" "$HT" record -o "$W/$1.full.tape" -- ;;
    journal) wl_$1 python3 "$W/meas.py" "$HT" record --journal -o "$W/$1.journal.tape" -- ;;
    jseal)  wl_$1 python3 "$W/meas.py" sh -c 't=$1; shift; "$0" record --journal -o "$t" -- "$@" && "$0" seal "$t" >/dev/null' \
              "$HT" "$W/$1.jseal.tape" ;;
    fp)     wl_$1 python3 "$W/meas.py" "$HT" record --unwind fp -o "$W/$1.fp.tape" -- ;;
    s512)   wl_$1 python3 "$W/meas.py" "$HT" record --sample 512K -o "$W/$1.s512.tape" -- ;;
    s512c)  rm -rf "$W/cold"
            wl_$1 env HEAPTAPE_CACHE="$W/cold" python3 "$W/meas.py" "$HT" record --sample 512K -o "$W/$1.s512c.tape" -- ;;
    htrack) [ -f "$W/$1.htskip" ] && return
            rm -f "$W/$1.ht.zst"
            wl_$1 python3 "$W/meas.py" timeout "$HT_TIMEOUT" heaptrack -o "$W/$1.ht" >"$W/one"
            cat "$W/one"
            [ "$(cut -d' ' -f4 "$W/one")" = 124 ] && : >"$W/$1.htskip" ;;
  esac
}

echo "bench_record: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), RUNS=$RUNS, $(heaptrack --version 2>/dev/null | head -n 1)"
# wall_oh, cpu_oh: the mode's excess over native / heaptrack's (the issue's
# goal for record: at most 0.5).
printf '%-7s %-7s %7s %7s %6s %6s %7s %6s %9s %9s %8s\n' workload mode wall_s cpu_s wall_x cpu_x wall_oh cpu_oh peak_MiB bytes/call "tape_B"
for w in $WORKLOADS; do
  for r in $(seq "$RUNS"); do
    for m in $MODES; do run "$w" "$m" >>"$W/$w.$m.txt"; done
  done
  n=$(heaptrack_print "$W/$w.ht.zst" 2>/dev/null | sed -n 's/^calls to allocation functions: \([0-9]*\).*/\1/p')
  nw=$(median "$W/$w.native.txt" 1); nc=$(median "$W/$w.native.txt" 2)
  hw=$(median "$W/$w.htrack.txt" 1 2>/dev/null); hc=$(median "$W/$w.htrack.txt" 2 2>/dev/null)
  for m in $MODES; do
    f=$W/$w.$m.txt
    wall=$(median "$f" 1); cpu=$(median "$f" 2); pk=$(median "$f" 3)
    case $m in native) t= ;; htrack) t=$W/$w.ht.zst ;; *) t=$W/$w.$m.tape ;; esac
    size=-; bpc=-
    if [ -n "$t" ] && [ -f "$t" ]; then
      size=$(stat -c %s "$t")
      [ -n "$n" ] && bpc=$(awk -v s="$size" -v n="$n" 'BEGIN {printf "%.3f", s / n}')
    fi
    printf '%-7s %-7s %7.2f %7.2f %6.2f %6.2f %7s %6s %9.1f %9s %8s\n' "$w" "$m" "$wall" "$cpu" \
      "$(awk -v a="$wall" -v b="$nw" 'BEGIN {print a / b}')" \
      "$(awk -v a="$cpu" -v b="$nc" 'BEGIN {print a / b}')" \
      "$(awk -v a="$wall" -v n="$nw" -v h="$hw" 'BEGIN {if (h > n) printf "%.2f", (a - n) / (h - n); else print "-"}')" \
      "$(awk -v a="$cpu" -v n="$nc" -v h="$hc" 'BEGIN {if (h > n) printf "%.2f", (a - n) / (h - n); else print "-"}')" \
      "$(awk -v k="$pk" 'BEGIN {print k / 1024}')" "$bpc" "$size"
    [ "$m" = htrack ] && [ -f "$W/$w.htskip" ] && echo "        (heaptrack killed after $HT_TIMEOUT s: timeout)"
  done
  calls=$("$HT" stats "$W/$w.full.tape" 2>/dev/null | awk '$1 == "alloc" {print $2}')
  echo "        (N = $n calls per heaptrack_print; heaptape counted $calls allocations)"
  # The sealing pass's rate, offline on the journal; and how much of it was
  # left when the program ended in one more (unmeasured) sealed recording.
  if [ -f "$W/$w.journal.tape" ]; then
    cp "$W/$w.journal.tape" "$W/rate.tape"
    set -- $(python3 "$W/meas.py" "$HT" seal "$W/rate.tape")
    ev=$("$HT" stats "$W/rate.tape" 2>/dev/null | awk '$1 == "events" {print $2}')
    tl=$(HEAPTAPE_SEAL_LOG=1 wl_$w "$HT" record -o "$W/tail.tape" -- 2>&1 >/dev/null | sed -n 's/.*: sealed //p')
    echo "        (heaptape seal: $ev events in $1 s wall, $2 s CPU: $(awk -v e="$ev" -v c="$2" 'BEGIN {printf "%.1f", e / c / 1e6}') M events per CPU second; record: sealed $tl)"
  fi
done
