#!/bin/sh
# heaptape tests -- `heaptape lifetimes` bins each freed block by comparing its
# operation count with each bin's first (src/output/lifetimes.c): the bins must
# be those of the expression 100 * d / ops, then (pct - lo) / (hi - lo) * bins,
# computed here from `heaptape ops` (Python's floats are the same doubles),
# on a journal and on its sealed tape, with ranges whose bin edges fall on
# whole operation counts (the rounding cases).
. "$(dirname "$0")/alloc_common.inc"
K=$T/known.tape
rec "$K" "$PROGS/alloc_known"
cp "$K" "$T/sealed.tape" && "$HEAPTAPE" seal "$T/sealed.tape" >/dev/null 2>&1
ok "sealed a copy" $?
"$HEAPTAPE" ops "$K" | grep -v '^#' >"$T/ops"
cat >"$T/bins.py" <<'PY'
import json, sys
ops, life, lo, hi, bins = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
born, ds, n = {}, [], 0
for line in open(ops):
    f = line.split()
    if f[2] == 'N': born[f[3]] = n
    else: ds.append(n - born[f[3]])
    n += 1
want, inr = [0] * bins, 0
for d in ds:
    pct = 100.0 * d / n
    if lo <= pct <= hi:
        b = int((pct - lo) / (hi - lo) * bins) if hi > lo else 0
        want[min(b, bins - 1)] += 1
        inr += 1
got = json.load(open(life))
have = [m['blocks'] for m in got['macro']]
sys.exit(0 if have == want and got['in_range'] == inr else 1)
PY
for tape in "$K" "$T/sealed.tape"; do
  name=journal; [ "$tape" = "$K" ] || name=sealed
  for r in "0 100 233" "0 100 20" "0 50 233" "0.429184549356223 93.56223175965665 218" \
           "33.3 66.7 7" "10 90 10000" "0 1 3"; do
    set -- $r
    "$HEAPTAPE" lifetimes --json --range "$1-$2" --bins "$3" "$tape" >"$T/life.json" &&
      py "$T/bins.py" "$T/ops" "$T/life.json" "$1" "$2" "$3"
    ok "$name: --range $1-$2 --bins $3: the bins of the division" $?
  done
done
finish
