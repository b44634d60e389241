#!/bin/sh
# heaptape tests -- Poisson sampling by bytes: the estimator weight =
# size / (1 - exp(-size/T)) recovers total bytes within 5%; seeded runs repeat.
. "$(dirname "$0")/record_common.inc"
est() { "$HEAPTAPE" dump --no-stacks "$1" | awk -v T="$2" '$4=="ALLOC"{s=$7; w=s/(1-exp(-s/T)); b+=w; n++} END{printf "%d %.0f\n", n, b}'; }
for T0 in 65536 262144 1048576; do
  out=$(rec "$T/s.tape" HEAPTAPE_SAMPLE=$T0 HEAPTAPE_SEED=42 "$PROGS/rec_sample")
  bytes=$(field bytes "$out")
  set -- $(est "$T/s.tape" $T0)
  echo "  T=$T0 samples $1 estimate $2 true $bytes"
  awk -v e="$2" -v b="$bytes" 'BEGIN{d=(e-b)/b; if (d<0) d=-d; exit !(d < 0.05)}'
  ok "sampling T=$T0: estimate within 5% ($2 vs $bytes)" $?
  "$HEAPTAPE" dump "$T/s.tape" | head -n 4 | grep -q "sample $T0"; ok "sampling T=$T0: header says so" $?
done
rec "$T/a.tape" HEAPTAPE_SAMPLE=64K HEAPTAPE_SEED=9 "$PROGS/rec_sample" >/dev/null
rec "$T/b.tape" HEAPTAPE_SAMPLE=64K HEAPTAPE_SEED=9 "$PROGS/rec_sample" >/dev/null
sa=$("$HEAPTAPE" dump --no-stacks "$T/a.tape" | awk '$4=="ALLOC"{print $7}' | md5sum)
sb=$("$HEAPTAPE" dump --no-stacks "$T/b.tape" | awk '$4=="ALLOC"{print $7}' | md5sum)
[ "$sa" = "$sb" ]; ok "sampling: same seed, same samples (K suffix accepted)" $?
check "$T/a.tape" >/dev/null; ok "sampling: frees only of sampled blocks" $?
finish
