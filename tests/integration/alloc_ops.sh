#!/bin/sh
# heaptape tests -- `heaptape ops`, `lifetimes` and `heapmap` on a program with
# known operations and lifetimes (tests/progs/alloc_known.c).
. "$(dirname "$0")/alloc_common.inc"
K=$T/known.tape
rec "$K" "$PROGS/alloc_known"
"$HEAPTAPE" ops "$K" >"$T/ops.txt"; ok "ops: exit 0" $?
grep -v '^#' "$T/ops.txt" >"$T/ops"
[ "$(wc -l <"$T/ops")" = 233 ]; ok "ops: 233 operations" $?
[ "$(awk '$3=="N"' "$T/ops" | wc -l)" = 119 ] && [ "$(awk '$3=="F"' "$T/ops" | wc -l)" = 114 ]
ok "ops: 119 New, 114 Free" $?
[ "$(awk '$3=="N"{print $4}' "$T/ops" | sort -n | uniq | wc -l)" = 119 ]; ok "ops: handles unique" $?
[ "$(awk '$3=="N" && $4 != ++h' "$T/ops" | wc -l)" = 0 ]; ok "ops: handles 1, 2, 3 ... in order" $?
awk '$3=="N" && $5==24 && $6=="C"' "$T/ops" | grep -q .; ok "ops: calloc as C" $?
awk '$3=="N" && $5==100 && $6=="A64"' "$T/ops" | grep -q .; ok "ops: posix_memalign as A64" $?
old=$(awk '$3=="N" && $5==10 {print $4}' "$T/ops")
awk -v o="$old" '$3=="F" && $4==o && $5=="R"' "$T/ops" | grep -q . &&
  awk -v o="R$old" '$3=="N" && $5==5000 && $6==o' "$T/ops" | grep -q .
ok "ops: realloc as F h R then N h' 5000 R<h>" $?
# Per handle: one New, at most one Free, after it.
awk '$3=="N"{n[$4]=NR} $3=="F"{ if (!($4 in n) || ($4 in f)) bad=1; f[$4]=1 } END{exit bad}' "$T/ops"
ok "ops: every Free follows its New, once" $?
tail -n 1 "$T/ops.txt" | grep -q '^# ops 233 handles 119 live 5 bytes 3885 '; ok "ops: summary line" $?
"$HEAPTAPE" ops -o "$T/ops2.txt" "$K" && cmp -s "$T/ops.txt" "$T/ops2.txt"; ok "ops: -o FILE" $?

"$HEAPTAPE" lifetimes "$K" --by-site -o "$T/life.svg" >"$T/life.txt"; ok "lifetimes: exit 0" $?
grep -q '^  never freed      5 (3885 bytes)$' "$T/life.txt"; ok "lifetimes: 5 never freed" $?
grep -Eq '^ +0\.000-5\.000 +104 ' "$T/life.txt"; ok "lifetimes: 104 blocks under 5% (100 + calloc, aligned, realloc x2)" $?
grep -Eq '^ +90\.000-95\.000 +10 ' "$T/life.txt"; ok "lifetimes: 10 blocks at 218/233 = 93.6%" $?
grep -Eq '^ +100 +100 +0 +0\.429 ' "$T/life.txt"; ok "lifetimes: by site, the 100 one-op blocks at 1/233" $?
grep -Eq '^ +10 +10 +0 +93\.562 ' "$T/life.txt"; ok "lifetimes: by site, the 10 long-lived blocks" $?
# Full traces read a clock published every millisecond: nothing is shown
# finer than that, and the operations count is the precise measure.
grep -q '^  clock            1 ms resolution: shorter lifetimes read as < 1 ms' "$T/life.txt"
ok "lifetimes: a full trace states its clock's resolution" $?
sed -n '/^LIFETIME IN TIME/,$p' "$T/life.txt" | grep -Eq ' 0 ns|[0-9] (ns|us) '; [ $? = 1 ]
ok "lifetimes: no '0 ns', no bucket or mean below the clock's resolution" $?
grep -Eq '^ +< 1 ms +1[0-9][0-9] ' "$T/life.txt"; ok "lifetimes: short blocks counted as '< 1 ms'" $?
grep -Eq '^ +100 +100 +0 +0\.429 +1\.0 +< 1 ms ' "$T/life.txt"
ok "lifetimes: by site, the one-op blocks live 1.0 operation, '< 1 ms'" $?
grep -Eq '^ +10 +10 +0 +93\.562 +218\.0 ' "$T/life.txt"; ok "lifetimes: by site, 218 operations" $?
"$HEAPTAPE" lifetimes --json --by-site "$K" | py -c '
import json, sys
d = json.load(sys.stdin)
assert d["clock_resolution_ns"] == 1000000, d["clock_resolution_ns"]
assert d["time"][0]["lo_ns"] == 0 and d["time"][0]["hi_ns"] == 1000000, d["time"][0]
assert all(t["lo_ns"] >= 1000000 for t in d["time"][1:]), d["time"]
assert sorted(s["mean_ops"] for s in d["sites"] if s["blocks"] in (10, 100)) == [1.0, 218.0]
'; ok "lifetimes: --json gives the resolution, the '< 1 ms' bucket and mean_ops" $?
S=$T/known_sampled.tape
env HEAPTAPE_SAMPLE=64 HEAPTAPE_SEED=1 LD_PRELOAD="$LIB" HEAPTAPE_OUTPUT="$S" "$PROGS/alloc_known" >/dev/null 2>&1
"$HEAPTAPE" lifetimes "$S" >"$T/life_s.txt" && ! grep -q '^  clock ' "$T/life_s.txt" &&
  "$HEAPTAPE" lifetimes --json "$S" | grep -q '"clock_resolution_ns": 1,'
ok "lifetimes: a sampled tape (events read the clock themselves) has no such limit" $?
"$HEAPTAPE" lifetimes "$K" --range 0-2 --bins 4 >"$T/life2.txt"
grep -Eq '^ +0\.000-0\.500 +102 ' "$T/life2.txt" && grep -q 'in range         102 ' "$T/life2.txt"
ok "lifetimes: --range 0-2 zooms (102 blocks of 1 op)" $?
py -c '
import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
bars = [float(x.get("height")) for x in r.iter(ns + "rect") if x.find(ns + "title") is not None]
fills = set(x.get("fill") for x in r.iter(ns + "rect"))
assert len(bars) >= 20 and max(bars) > 0 and len(fills) > 1, (len(bars), fills)
' "$T/life.svg"; ok "lifetimes: SVG parses, has bars, not blank" $?
"$HEAPTAPE" lifetimes --range 5-1 "$K" >/dev/null 2>&1; [ $? = 2 ]; ok "lifetimes: bad --range is a usage error" $?

"$HEAPTAPE" heapmap "$K" -o "$T/map.png" --frames "$T/fr" --nframes 4 >"$T/map.txt"; ok "heapmap: exit 0" $?
out=$(py "$T/pngcheck.py" "$T/map.png"); r=$?
[ $r = 0 ] && [ "${out%% *}" = 1024x768 ] && [ "${out#* }" -gt 2 ]; ok "heapmap: PNG valid, not blank ($out)" $?
[ "$(ls "$T/fr" | wc -l)" = 4 ]; ok "heapmap: 4 frames" $?
out=$(py "$T/pngcheck.py" "$T/fr/frame_00003.png"); r=$?
[ $r = 0 ] && [ "${out#* }" -gt 1 ]; ok "heapmap: frame valid, not blank ($out)" $?
grep -q 'site colours' "$T/map.txt"; ok "heapmap: legend" $?
# Listed as the picture's legend: most bytes first (lines 18, 25, 30 of
# alloc_known.c: 10 x 1000, the realloc's 5000, 5 x 777; then 16 x 100 ...).
"$HEAPTAPE" record -o "$T/sym.tape" -- "$PROGS/alloc_known" >/dev/null 2>&1 &&
  "$HEAPTAPE" heapmap "$T/sym.tape" -o "$T/sym.png" >"$T/sym.txt" &&
  [ "$(sed -n '/^site colours/,$p' "$T/sym.txt" | grep -o 'alloc_known.c:[0-9]*' | head -n 4 | tr '\n' ' ')" = \
    "alloc_known.c:18 alloc_known.c:25 alloc_known.c:30 alloc_known.c:19 " ]
ok "heapmap: legend lists the sites by bytes allocated, most first" $?
out=$(py "$HT_ROOT/tests/integration/viz_lib.py" heapmap "$T/map.png" "$T/map.txt"); r=$?
[ $r = 0 ]; ok "heapmap: title, tick labels, legend swatches in the site colours with their text${out:+ ($out)}" $?
"$HEAPTAPE" heapmap "$K" >/dev/null 2>&1; [ $? = 2 ]; ok "heapmap: nothing to write is a usage error" $?
"$HEAPTAPE" ops "$T/none.tape" >/dev/null 2>"$T/err"; r=$?
[ $r = 1 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q "^heaptape: $T/none.tape: " "$T/err"
ok "ops: missing tape is one line, exit 1" $?
finish
