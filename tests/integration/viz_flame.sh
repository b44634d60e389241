#!/bin/sh
# heaptape -- flame graphs: SVG and folded totals equal the report's for every
# metric; the SVG is well-formed and renders in headless Chromium; damage.
. "$(dirname "$0")/viz_common.inc"

"$HEAPTAPE" record -o "$TMP/grow.tape" -- "$HT_BUILD/progs/viz_grow" 0.3 >/dev/null 2>&1
for t in "$DATA/rep_basic.tape" "$DATA/rep_lua.tape" "$DATA/rep_sampled.tape" "$TMP/grow.tape"; do
  n=$(basename "$t" .tape)
  "$HEAPTAPE" report --json "$t" > "$TMP/$n.json" 2>/dev/null
  for m in alloc inuse peak leaks temporary; do
    "$HEAPTAPE" flamegraph --metric $m "$t" -o "$TMP/$n.$m.svg" 2>/dev/null
    "$HEAPTAPE" flamegraph --folded --metric $m "$t" -o "$TMP/$n.$m.folded" 2>/dev/null
    ok "$n $m: SVG and folded totals = report" python3 - "$TMP/$n.json" "$TMP/$n.$m.svg" "$TMP/$n.$m.folded" $m <<'PY'
import json, sys, xml.etree.ElementTree as ET
rep, svg, folded, m = sys.argv[1:5]
s = json.load(open(rep))["summary"]
want = {"alloc": s["bytes"], "inuse": s["leaked"], "peak": s["peak"],
        "leaks": s["leaked"], "temporary": s["temporary"]}[m]
root = ET.parse(svg).getroot()
ns = "{http://www.w3.org/2000/svg}"
gs = [g for g in root.iter(ns + "g") if g.get("class") == "f"]
top = [g for g in gs if g.get("data-p") == "-1"]
tot = int(top[0].get("data-v")) if top else -1
kids = sum(int(g.get("data-v")) for g in gs if g.get("data-p") == "0")
fsum = sum(int(l.rsplit(" ", 1)[1]) for l in open(folded) if l.strip())
ok = tot == want == int(root.get("data-total")) == fsum and (kids == want or not want)
if not ok: print("  want", want, "svg", tot, "children", kids, "folded", fsum)
sys.exit(0 if ok else 1)
PY
  done
done
"$HEAPTAPE" flamegraph --metric alloc "$TMP/grow.tape" -o "$TMP/shot.svg" 2>/dev/null
chrome --enable-logging=stderr --v=0 --window-size=1220,900 --screenshot="$TMP/shot.png" \
  "file://$TMP/shot.svg" >"$TMP/chrome.log" 2>&1
ok "SVG renders in Chromium without console errors" sh -c \
  '! grep -E "CONSOLE|Uncaught" "$1" | grep -qiE "error|uncaught"' _ "$TMP/chrome.log"
ok "SVG screenshot is not blank" [ "$(python3 "$LIB" png "$TMP/shot.png")" -gt 20 ]
ok "SVG has hover, zoom and search script" grep -q "hfSetup" "$TMP/shot.svg"
ok "grow_step is a frame" grep -q 'data-n="grow_step"' "$TMP/shot.svg"

: > "$TMP/empty.tape"
"$HEAPTAPE" flamegraph "$TMP/empty.tape" -o "$TMP/empty.svg" 2>"$TMP/err"; rc=$?
ok "empty tape: exit 1 and a message" sh -c '[ "$1" = 1 ] && grep -q "^heaptape: .*empty.tape: " "$2"' _ $rc "$TMP/err"
ok "empty tape: no SVG" [ ! -e "$TMP/empty.svg" ]
"$HEAPTAPE" flamegraph --metric bogus "$DATA/rep_basic.tape" -o "$TMP/b.svg" 2>/dev/null
ok "bad --metric: exit 2" [ $? = 2 ]
finish
