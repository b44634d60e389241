#!/bin/sh
# heaptape tests -- `heaptape replay` of real programs (python3, sqlite3) under
# glibc, jemalloc, mimalloc and tcmalloc; live bytes equal the tape's at every
# operation; a driver that fails allocations is reported, not crashed on.
. "$(dirname "$0")/alloc_common.inc"
[ -e "$FAILDRV" ] || { echo "FAIL missing $FAILDRV (make test builds it)"; echo "0 passed, 1 failed"; exit 1; }
PYBIN=/usr/bin/python3
P=$T/py.tape S=$T/sql.tape
PYTHONMALLOC=malloc rec "$P" "$PYBIN" -c 'import json; d={str(i): [i]*(i%7) for i in range(3000)}; s=json.dumps(d); print(len(s), len(json.loads(s)))'
rec "$S" sqlite3 :memory: 'create table t(a,b); with recursive c(x) as (select 1 union all select x+1 from c where x<5000) insert into t select x, hex(randomblob(x%200)) from c; create index i on t(b); select count(*), sum(length(b)) from t;'

for tape in "$P" "$S"; do
  n=$(basename "$tape" .tape)
  "$HEAPTAPE" replay "$tape" --allocator all --allocstats "$T/$n.json" --plot "$T/$n.svg" >"$T/$n.txt" 2>"$T/$n.err"
  ok "$n: replay under all four allocators, exit 0" $?
  for a in glibc jemalloc mimalloc tcmalloc; do
    awk -v a=$a '$1==a && $NF=="0" && !/CORRUPT/' "$T/$n.txt" | grep -q .; ok "$n: $a completes, no failures, contents intact" $?
  done
  py -c '
import json, sys
d = json.load(open(sys.argv[1]))
a = d["allocators"]
assert [x["driver"] for x in a] == ["glibc", "jemalloc", "mimalloc", "tcmalloc"]
for x in a:
    assert x["ok"] and x["ops"] == d["ops"] > 1000 and x["failures"] == 0 and x["corrupt"] == 0, x["driver"]
    assert x["peak_rss"] > 0 and x["time_ns"] > 0 and len(x["alloc_stats"]) > 100, x["driver"]
    s = x["alloc_stats"]
    assert all(s[i]["op_index"] < s[i+1]["op_index"] for i in range(len(s) - 1))
    assert max(p["used"] for p in s) == d["live_peak"]
' "$T/$n.json"; ok "$n: allocstats JSON (series, peak, times)" $?
  py -c '
import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot(); ns = "{http://www.w3.org/2000/svg}"
assert len(list(r.iter(ns + "polyline"))) == 5
assert len(set(x.get("fill") for x in r.iter(ns + "rect"))) > 3
' "$T/$n.svg"; ok "$n: SVG plot parses (4 allocators + live bytes)" $?
done

# The live-bytes curve of the replay equals the tape's at every operation:
# the tape's from `heaptape dump`, the replay's from the runner (used) and
# from the driver's own byte count (except right after a realloc's Free,
# where the driver still holds the old block until the New completes it).
"$HEAPTAPE" dump --no-stacks "$P" | awk '
  $4=="ALLOC" { if ($6 in s) live -= s[$6]; s[$6]=$7; live += $7; print live }
  $4=="FREE" && ($6 in s) { live -= s[$6]; delete s[$6]; print live }' >"$T/curve.tape"
"$HEAPTAPE" ops "$P" | grep -v '^#' | awk '{print ($3=="F" && $5=="R") ? 1 : 0}' >"$T/rfree"
"$HEAPTAPE" replay "$P" --driver "$FAILDRV:0" --interval 1 --allocstats "$T/curve.json" >/dev/null
py -c '
import json, sys
s = json.load(open(sys.argv[1]))["allocators"][0]["alloc_stats"]
tape = [int(l) for l in open(sys.argv[2])]
rf = [int(l) for l in open(sys.argv[3])]
assert len(s) == len(tape) == len(rf), (len(s), len(tape))
for i, p in enumerate(s):
    assert p["op_index"] == i and p["used"] == tape[i], (i, p, tape[i])
    assert rf[i] or p["alloc_in_use"] == tape[i], (i, p["alloc_in_use"], tape[i])
print(len(s), "ops")
' "$T/curve.json" "$T/curve.tape" "$T/rfree"; ok "python: live bytes equal the tape's at every operation" $?

# A driver failing every 7th allocation: reported, replay completes.
"$HEAPTAPE" replay "$S" --driver "$FAILDRV:7" --allocstats "$T/fail.json" >"$T/fail.txt" 2>&1
ok "failing driver: exit 0" $?
py -c '
import json, sys
d = json.load(open(sys.argv[1])); x = d["allocators"][0]
n = sum(x["calls"].values()) - x["calls"]["free"]
assert x["ok"] and x["failures"] > 0 and x["corrupt"] == 0 and abs(x["failures"] - n / 7) < n / 50 + 2, x
' "$T/fail.json"; ok "failing driver: about 1 in 7 allocations counted as failures" $?
awk '$1=="failing" && $NF > 0' "$T/fail.txt" | grep -q .; ok "failing driver: failures in the table" $?

"$HEAPTAPE" replay "$S" --driver "$T/nonexistent.so" >"$T/nx.txt" 2>"$T/nx.err"; r=$?
[ $r = 1 ] && grep -q 'driver could not be loaded' "$T/nx.err"; ok "missing driver: reported, exit 1" $?
"$HEAPTAPE" replay "$S" --allocator nosuch >/dev/null 2>&1; [ $? = 2 ]; ok "unknown allocator: usage error" $?

# A heap larger than the machine's memory (seal_wide: pool blocks of 5 GiB,
# 510 GiB live at the peak): touching it would have the kernel kill
# processes, so replay refuses in one line; --touch none replays it.
"$HEAPTAPE" record -o "$T/wide.tape" -- "$HT_BUILD/progs/seal_wide" >/dev/null 2>&1
"$HEAPTAPE" replay "$T/wide.tape" --allocator glibc >"$T/wide.txt" 2>"$T/wide.err"; r=$?
[ $r = 1 ] && [ "$(wc -l <"$T/wide.err")" = 1 ] && grep -q '^heaptape: replay: .*wide.tape: its heap peaks at 510 GiB live, more than the .* of memory available' "$T/wide.err"
ok "heap larger than memory: refused in one line, exit 1 ($r: $(cat "$T/wide.err"))" $?
"$HEAPTAPE" replay "$T/wide.tape" --allocator glibc --touch none >"$T/wide.txt" 2>&1
ok "heap larger than memory: --touch none replays it" $?
finish
