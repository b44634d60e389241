#!/bin/sh
# heaptape tests -- 8 threads x 1M mixed heap operations with cross-thread frees
# and reallocs: the tape must show no ordering anomaly and every operation.
. "$(dirname "$0")/record_common.inc"
OPS=${HT_STRESS_OPS:-1000000}
out=$(rec "$T/s.tape" "$PROGS/rec_stress" "$OPS"); rc=$?
ok "stress runs (exit $rc): $out" $rc
sum=$(check "$T/s.tape"); crc=$?
echo "  tape: $sum"
ok "stress: zero ordering anomalies, sequence strictly increasing" $crc
pa=$(field allocs "$out"); pr=$(field reallocs "$out"); ta=$(field allocs "$sum")
want=$((pa + pr))
[ "$ta" -ge "$want" ] && [ "$ta" -le $((want + 1000)) ]; ok "stress: every allocation on the tape ($ta vs $want)" $?
[ "$(field lost "$sum")" = 0 ]; ok "stress: nothing lost" $?
"$HEAPTAPE" dump --no-stacks "$T/s.tape" | tail -n 1 | grep -q 'trailer yes'; ok "stress: trailer written" $?
finish
