#!/bin/sh
# heaptape tests -- 8 threads x 1M mixed heap operations with cross-thread frees
# and reallocs: the tape must show no ordering anomaly and every operation;
# again with the main thread working alone first (single-thread numbering,
# src/record/record.c "Sequence numbers") and then beside the others, and
# with the owner/flusher CAS protocol in place of membarrier fences.
. "$(dirname "$0")/record_common.inc"
OPS=${HT_STRESS_OPS:-1000000}

# stress LABEL TAPE ARGS...: run rec_stress ARGS recorded; the tape must be
# in order and hold every allocation the program counted. Sets out, sum.
stress() {
  label=$1 tape=$2; shift 2
  out=$(rec "$tape" "$PROGS/rec_stress" "$@"); rc=$?
  ok "$label runs (exit $rc): $out" $rc
  sum=$(check "$tape"); crc=$?
  echo "  tape: $sum"
  ok "$label: zero ordering anomalies, sequence strictly increasing" $crc
  pa=$(field allocs "$out"); pr=$(field reallocs "$out"); ta=$(field allocs "$sum")
  want=$((pa + pr))
  [ "$ta" -ge "$want" ] && [ "$ta" -le $((want + 1000)) ]; ok "$label: every allocation on the tape ($ta vs $want)" $?
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
finish
