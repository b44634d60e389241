#!/bin/sh
# heaptape tests -- the recorder never hangs, kills or changes the program (issue 17):
# descriptors the program closes or dup2s over, pthread_getattr_np, seccomp,
# _exit in a handler, pthread_exit from main, SIGEV_THREAD timers, aligned
# allocators and errno, quick_exit, failed execs, RLIMIT_AS, 1000 threads.
# Every recorded run is compared with a plain one and bounded by timeout.
. "$(dirname "$0")/record_common.inc"
. "$(dirname "$0")/record_hard.inc"
F=$PROGS/hard_fds TH=$PROGS/hard_threads X=$PROGS/hard_exit

# -- Descriptors ---------------------------------------------------------------
# A daemon closes fds 3..1023, then uses a blocking pipe and a log file.
plain "$F" daemon "$T/log0"
for how in preload cli; do
  recorded $how "$T/dm-$how.tape" "$F" daemon "$T/log-$how"
  same "fds daemon ($how)"
  reads "fds daemon ($how)" "$T/dm-$how.tape"
  has "fds daemon ($how): after the close" "$T/dm-$how.tape" 3917 200
done

# Files dup2'd over fds 3, 4, 5, written while allocating.
mkdir "$T/d0" "$T/d-preload" "$T/d-cli"
plain "$F" dup2 "$T/d0"
for how in preload cli; do
  recorded $how "$T/du-$how.tape" "$F" dup2 "$T/d-$how"
  same "fds dup2 ($how)"
  reads "fds dup2 ($how)" "$T/du-$how.tape"
  has "fds dup2 ($how): after the dup2s" "$T/du-$how.tape" 3919 200
done

# No descriptor left to open: the writer reads its /proc files through the
# descriptors it opened at the start (it opened them every 100 ms: each
# took the lowest free number for a moment, and here none is free).
plain "$F" nofile
for how in preload cli; do
  recorded $how "$T/nf-$how.tape" "$F" nofile
  same "no descriptor free ($how)"
  n=$("$HEAPTAPE" stats "$T/nf-$how.tape" 2>/dev/null | awk '$1 == "rss" {print $2}')
  [ "${n:-0}" -ge 5 ]; ok "no descriptor free ($how): RSS still read (${n:-0} records over 0.7 s)" $?
done

# -- Threads -------------------------------------------------------------------
# A new thread's first allocation happens inside pthread_getattr_np.
plain "$TH" getattr
recorded preload "$T/ga.tape" "$TH" getattr
same "getattr first"
reads "getattr first" "$T/ga.tape"
has "getattr first" "$T/ga.tape" 2345 400

# main prints (buffered, stdout a pipe) and calls pthread_exit; a thread goes on.
plain "$TH" mainexit
for how in preload cli; do
  recorded $how "$T/me-$how.tape" "$TH" mainexit
  same "pthread_exit from main ($how)"
  reads "pthread_exit from main ($how)" "$T/me-$how.tape"
done

# A 1 ms SIGEV_THREAD timer whose callback allocates.
plain "$TH" timer
recorded preload "$T/tm.tape" "$TH" timer
same "SIGEV_THREAD timer"
reads "SIGEV_THREAD timer" "$T/tm.tape"
c=$(count_size "$T/tm.tape" 2468)
[ "$c" -gt 0 ]; ok "SIGEV_THREAD timer: callback allocations on the tape ($c)" $?

# 1000 threads with 64 KiB stacks, alive together, each allocating.
plain "$TH" many 1000
recorded preload "$T/mn.tape" "$TH" many 1000
same "1000 threads"
reads "1000 threads" "$T/mn.tape"
has "1000 threads" "$T/mn.tape" 1357 10000

# -- seccomp, signals, exits ----------------------------------------------------
# membarrier(2) denied (EPERM) on every thread, then threads allocate 300 ms.
plain "$PROGS/hard_seccomp"
for how in preload cli; do
  recorded $how "$T/sc-$how.tape" "$PROGS/hard_seccomp"
  same "seccomp denies membarrier ($how)"
  reads "seccomp denies membarrier ($how)" "$T/sc-$how.tape"
done

# A SIGALRM handler calls _exit(3) while main allocates in a tight loop; 5 runs
# (the handler lands at a different point each time), up to the first hang.
plain "$X" sigexit
exits="" hang="" unread=""
for i in 1 2 3 4 5; do
  recorded preload "$T/se$i.tape" "$X" sigexit
  exits="$exits $grc"
  [ "$got" = "$want" ] || exits="$exits(stdout differs)"
  "$HEAPTAPE" stats "$T/se$i.tape" >/dev/null 2>&1 || unread="$unread $i"
  hang=$(hung); [ -n "$hang" ] && break
done
[ -z "$hang" ] && [ "$(echo $exits)" = "$wrc $wrc $wrc $wrc $wrc" ]
ok "_exit(3) from a signal handler: exit $wrc in 5 runs, no hang (exits:$exits)$hang" $?
[ -z "$unread" ]; ok "_exit(3) from a signal handler: every tape reads (not:${unread:- none})" $?

# quick_exit(9) with an at_quick_exit handler allocating ten 7171-byte blocks.
plain "$X" quick
for how in preload cli; do
  tp=$T/qe-$how.tape
  recorded $how "$tp" "$X" quick
  same "quick_exit ($how)"
  reads "quick_exit ($how)" "$tp"
  [ "$(trailer "$tp")" = yes ]; ok "quick_exit ($how): trailer written" $?
  has "quick_exit ($how): the handler's" "$tp" 7171 10
done
st=$("$HEAPTAPE" stats "$T/qe-preload.tape" 2>/dev/null | sed -n 's/.*exit status \([0-9]*\).*/\1/p')
[ "$st" = 9 ]; ok "quick_exit: status 9 in the trailer (found '$st')" $?

# Failed execvp x 8 while 3 threads allocate; 10 runs. Every tape (the first,
# and the one restarted after each failure: <tape>.<pid>[-N]) must read
# without damage and pass the ordering checker.
plain "$X" execfail
runs=0 hang="" diffs=0 tapes=0 unread="" damaged="" disorder=""
for i in 1 2 3 4 5 6 7 8 9 10; do
  recorded preload "$T/xf$i.tape" "$X" execfail
  runs=$i
  { [ "$grc" != "$wrc" ] || [ "$got" != "$want" ]; } && diffs=$((diffs + 1))
  hang=$(hung); [ -n "$hang" ] && break
  for tp in "$T/xf$i.tape" "$T/xf$i.tape".[0-9]*; do
    case $tp in *.err|*.stats) continue ;; esac
    [ -f "$tp" ] || continue
    tapes=$((tapes + 1))
    "$HEAPTAPE" stats "$tp" >/dev/null 2>"$T/xf.stats" || unread="$unread ${tp##*/}"
    grep -q 'impossible sequence' "$T/xf.stats" && damaged="$damaged ${tp##*/}"
    check "$tp" >/dev/null || disorder="$disorder ${tp##*/}"
  done
done
[ $diffs = 0 ] && [ -z "$hang" ]
ok "failed execs: $runs runs, same stdout and exit 0, no hang ($diffs differ)$hang" $?
[ $tapes -gt 0 ] && [ -z "$unread" ]; ok "failed execs: all $tapes tapes read (unreadable:${unread:- none})" $?
[ $tapes -gt 0 ] && [ -z "$damaged" ]; ok "failed execs: no impossible sequence range (in:${damaged:- none})" $?
[ $tapes -gt 0 ] && [ -z "$disorder" ]; ok "failed execs: every tape orderly (not:${disorder:- none})" $?

# A writer far behind: three threads allocate for 2 s while every packet is
# compressed at zstd level 19; the end must not wait for the backlog's
# compression (it took 36 s: a backlog is now stored raw).
plain "$X" churn
export HEAPTAPE_ZSTD=19; recorded preload "$T/churn.tape" "$X" churn; unset HEAPTAPE_ZSTD
same "a writer far behind (zstd 19)"
reads "a writer far behind (zstd 19)" "$T/churn.tape"

# -- Allocator semantics ---------------------------------------------------------
# aligned_alloc, posix_memalign, memalign, valloc, pvalloc: odd alignments, sizes.
plain "$PROGS/hard_alloc" align
recorded preload "$T/al.tape" "$PROGS/hard_alloc" align
same "aligned allocators, odd alignments"
# errno set to a sentinel survives every successful call (main, new thread).
plain "$PROGS/hard_alloc" errno
recorded preload "$T/er.tape" "$PROGS/hard_alloc" errno
same "errno kept across successful calls"

# -- Limits ----------------------------------------------------------------------
# 150 MiB touched in 1 MiB chunks under RLIMIT_AS 256 MiB (the recorder's own
# reservations must fit beside it).
plain sh -c 'ulimit -v 262144 && exec "$@"' sh "$PROGS/hard_limits" big 150
[ "$wrc" = 0 ]; ok "RLIMIT_AS 256 MiB: 150 MiB fits without the recorder ($want)" $?
lim=$LIM
{ got=$(timeout -k 5 "$lim" sh -c 'ulimit -v 262144 && exec "$@"' sh \
      env LD_PRELOAD="$LIB" HEAPTAPE_OUTPUT="$T/lim.tape" "$PROGS/hard_limits" big 150 2>/dev/null); grc=$?; } 2>/dev/null
same "RLIMIT_AS 256 MiB, 150 MiB heap"
reads "RLIMIT_AS 256 MiB" "$T/lim.tape"

# What the recorder adds to a single-threaded program: address space (VmPeak)
# at most 16 MiB, resident memory (VmHWM) at most 4 MiB.
plain "$PROGS/hard_limits" status
recorded preload "$T/st.tape" "$PROGS/hard_limits" status
# kb OUT NAME: the figure NAME in a status report; 999999999 when missing.
kb() { v=$(printf '%s\n' "$1" | awk -v k="$2" '$1==k {print $2}'); echo "${v:-999999999}"; }
dpeak=$(( $(kb "$got" VmPeak) - $(kb "$want" VmPeak) ))
dsize=$(( $(kb "$got" VmSize) - $(kb "$want" VmSize) ))
dhwm=$(( $(kb "$got" VmHWM) - $(kb "$want" VmHWM) ))
[ $grc = 0 ]; ok "overhead probe runs recorded (exit $grc)$(hung)" $?
echo "  recorder's cost: VmPeak +$dpeak kB, VmSize +$dsize kB, VmHWM +$dhwm kB (plain: $(printf '%s' "$want" | tr '\n' ' '))"
[ $dpeak -le 16384 ]; ok "overhead: extra address space (VmPeak) $dpeak kB <= 16384 kB" $?
[ $dhwm -le 4096 ]; ok "overhead: extra resident memory (VmHWM) $dhwm kB <= 4096 kB" $?
finish
