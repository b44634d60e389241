#!/bin/sh
# heaptape tests -- `heaptape replay --killpercent P --rounds N` on a tape of
# known operations (tests/progs/alloc_known.c: 233 ops, 5 blocks of 777
# bytes live at the end): the documented number of frees per round, the
# live peak over all rounds, every allocator reported; bad values refused.
. "$(dirname "$0")/alloc_common.inc"
K=$T/known.tape
rec "$K" "$PROGS/alloc_known"

# Round r frees floor((kept + 5) * P / 100) blocks, kept being the blocks
# left alive by the earlier rounds: P=50 gives 2 (of 5), 4 (of 3+5), 4 (of
# 4+5); 5 + 5 blocks live at the end; 4 passes of 233 ops plus 10 frees.
"$HEAPTAPE" replay "$K" --allocator all --killpercent 50 --rounds 3 --allocstats "$T/k.json" \
  >"$T/k.txt" 2>"$T/k.err"
ok "killpercent 50, 3 rounds: exit 0" $?
grep -q '^killpercent 50, 3 rounds, seed 1: blocks freed per round 2, 4, 4;' "$T/k.txt"
ok "killpercent: frees per round in the text" $?
for a in glibc jemalloc mimalloc tcmalloc; do
  awk -v a=$a '$1==a && $NF=="0" && !/CORRUPT/' "$T/k.txt" | grep -q .; ok "killpercent: $a reported, no failures" $?
done
py -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert (d["killpercent"], d["rounds"], d["seed"]) == (50, 3, 1)
a = d["allocators"]
assert [x["driver"] for x in a] == ["glibc", "jemalloc", "mimalloc", "tcmalloc"]
for x in a:
    assert x["ok"] and x["round_kills"] == [2, 4, 4] and x["live_blocks"] == 10, x
    assert x["ops"] == 4 * 233 + 10 and x["corrupt"] == 0 and x["failures"] == 0, x
    # the tape peak (op 214) plus the 5 blocks of 777 bytes kept into the last pass
    assert x["live_peak"] == d["live_peak"] + 5 * 777 == 15124 + 3885, x["live_peak"]
    assert x["peak_rss"] > 0 and x["alloc_stats"][-1]["op_index"] == 4 * 233 - 1
    assert x["alloc_stats"][-1]["used"] == 10 * 777
' "$T/k.json"; ok "killpercent: JSON frees per round, live blocks, peak over all rounds" $?

# P=0 keeps everything (every pass adds its 5), P=100 frees all that is live.
"$HEAPTAPE" replay "$K" --allocator glibc --killpercent 0 --rounds 2 --allocstats "$T/k0.json" >/dev/null 2>&1
"$HEAPTAPE" replay "$K" --allocator glibc --killpercent 100 --rounds 2 --seed 7 --allocstats "$T/k100.json" >/dev/null 2>&1
py -c '
import json, sys
x = json.load(open(sys.argv[1]))["allocators"][0]; y = json.load(open(sys.argv[2]))["allocators"][0]
assert x["round_kills"] == [0, 0] and x["live_blocks"] == 15, x
assert y["round_kills"] == [5, 5] and y["live_blocks"] == 5, y
' "$T/k0.json" "$T/k100.json"; ok "killpercent 0 and 100: none and all freed" $?

# Bad values: one line naming the problem (then the usage), exit 2.
bad() {
  what=$1; shift
  "$HEAPTAPE" replay "$K" --allocator glibc "$@" >/dev/null 2>"$T/bad.err"; r=$?
  [ $r = 2 ] && head -n1 "$T/bad.err" | grep -q "^heaptape: replay: $what"; ok "refused: $* (exit $r)" $?
}
bad "--killpercent takes a whole number from 0 to 100, not '101'" --killpercent 101
bad "--killpercent takes a whole number from 0 to 100, not '-1'" --killpercent -1
bad "--killpercent takes a whole number" --killpercent x
bad "--rounds takes a whole number from 1 to" --killpercent 10 --rounds 0
bad "--rounds needs --killpercent" --rounds 2
bad "--seed needs --killpercent" --seed 3
finish
