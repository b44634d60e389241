#!/bin/sh
# heaptape tests -- 8 threads x 1M mixed heap operations with cross-thread frees
# and reallocs: the tape must show no ordering anomaly and every operation;
# again with the main thread working alone first (single-thread numbering,
# src/record/record.c "Sequence numbers") and then beside the others, and
# with the owner/flusher CAS protocol in place of membarrier fences; then
# many threads at once (1000; 64 x OPS/10; key destructors that allocate),
# whose tapes `heaptape stats` and `heaptape record` must read.
. "$(dirname "$0")/record_common.inc"
OPS=${HT_STRESS_OPS:-1000000}

# stress LABEL TAPE ARGS...: run rec_stress ARGS recorded; the tape must be
# in order and hold every allocation the program counted (glibc adds one
# per thread created: its DTV). Sets out, sum.
stress() {
  label=$1 tape=$2; shift 2
  out=$(rec "$tape" "$PROGS/rec_stress" "$@"); rc=$?
  ok "$label runs (exit $rc): $out" $rc
  sum=$(check "$tape"); crc=$?
  echo "  tape: $sum"
  ok "$label: zero ordering anomalies, sequence strictly increasing" $crc
  pa=$(field allocs "$out"); pr=$(field reallocs "$out"); ta=$(field allocs "$sum")
  want=$((pa + pr))
  nt=$(field threads "$out")
  [ "$ta" -ge "$want" ] && [ "$ta" -le $((want + 1000 + nt)) ]; ok "$label: every allocation on the tape ($ta vs $want)" $?
}

stress stress "$T/s.tape" "$OPS"
[ "$(field lost "$sum")" = 0 ]; ok "stress: nothing lost" $?
"$HEAPTAPE" dump --no-stacks "$T/s.tape" | tail -n 1 | grep -q 'trailer yes'; ok "stress: trailer written" $?

# The same with the owners' CAS protocol instead of membarrier fences.
out=$(rec "$T/c.tape" HEAPTAPE_NO_MEMBARRIER=1 "$PROGS/rec_stress" "$((OPS / 2))"); rc=$?
sum=$(check "$T/c.tape"); crc=$?
[ $rc = 0 ] && [ $crc = 0 ]; ok "CAS protocol: runs, zero ordering anomalies ($sum)" $?

# The main thread alone first (numbers reserved in blocks), then beside 7
# others, trading blocks through the mailbox from their first operation.
stress "late threads" "$T/l.tape" "$((OPS / 2))" late

# The sharpest case of that change: blocks freed by the second thread are
# allocated again by the main thread right after, while the main thread
# still holds numbers reserved when it was alone. They must not be used.
out=$(rec "$T/h.tape" "$PROGS/rec_stress" 64 handoff); rc=$?
ok "handoff runs (exit $rc): $out" $rc
[ "$(field reused "$out")" -gt 0 ]; ok "handoff: glibc gave the freed blocks back to the main thread" $?
sum=$(check "$T/h.tape"); crc=$?
echo "  tape: $sum"
ok "handoff: zero ordering anomalies" $crc

# Many threads: packets of hundreds of threads open at once while new ones
# arrive (issue 17: the reader kept pointers into its growing stream table;
# `heaptape stats` and the finalisation in `heaptape record` crashed).
# stats_threads LABEL TAPE MIN: `heaptape stats` reads the tape, which names
# at least MIN threads.
stats_threads() {
  st=$("$HEAPTAPE" stats "$2" 2>&1); rc=$?
  ok "$1: heaptape stats reads it (exit $rc)" $rc
  n=$(printf '%s\n' "$st" | awk '$1 == "thread" { print $2 }')
  [ "${n:-0}" -ge "$3" ]; ok "$1: stats counts ${n:-no} threads (at least $3)" $?
}
stress "1000 threads" "$T/m.tape" 200 threads 1000
stats_threads "1000 threads" "$T/m.tape" 1001
stress "64 threads" "$T/w.tape" "$((OPS / 10))" threads 64
stats_threads "64 threads" "$T/w.tape" 65
# Each thread's key destructor allocates, reallocates to 3000 bytes and frees
# at exit, in two destructor rounds: all of it is on the tape.
stress "key destructors" "$T/k.tape" 200 keys 1000
stats_threads "key destructors" "$T/k.tape" 1001
n=$(count_size "$T/k.tape" 3000)
[ "$n" = 2000 ]; ok "key destructors: both rounds of every thread recorded ($n of 2000)" $?
# `heaptape record` finalises (symbolises) such a tape with the same reader,
# and seals it; the journal it was sealed from (kept) is in order.
out=$("$HEAPTAPE" record --keep-journal -o "$T/r.tape" -- "$PROGS/rec_stress" 200 threads 1000 2>&1); rc=$?
ok "heaptape record, 1000 threads: finalised (exit $rc)" $rc
"$HEAPTAPE" stats "$T/r.tape" | grep -q '^  symbolised *yes'; ok "heaptape record, 1000 threads: symbolised" $?
"$HEAPTAPE" stats "$T/r.tape" | grep -q '^  sealed *yes'; ok "heaptape record, 1000 threads: sealed" $?
sum=$(check "$T/r.tape.journal"); ok "heaptape record, 1000 threads: zero ordering anomalies in its journal ($sum)" $?
a1=$("$HEAPTAPE" stats "$T/r.tape" | awk '$1 == "alloc" {print $2}')
a2=$("$HEAPTAPE" stats "$T/r.tape.journal" | awk '$1 == "alloc" {print $2}')
[ -n "$a1" ] && [ "$a1" = "$a2" ]; ok "heaptape record, 1000 threads: the sealed tape has the journal's $a2 allocations" $?
finish
