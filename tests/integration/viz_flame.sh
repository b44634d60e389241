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
ok "grow_step is a frame (in a chain box)" grep -q 'data-c="grow_step&#10;' "$TMP/shot.svg"

# A deep real program (python3's imports are towers of narrow frames): the
# root on top, single-child chains as one box, nothing shown under boxes
# narrower than 16 px until a click zooms in, the height fitted to what shows.
"$HEAPTAPE" record -o "$TMP/py.tape" -- /usr/bin/python3 -c 'import json, email.parser, http.client; print(len(json.dumps(list(range(30000)))))' >/dev/null 2>&1
"$HEAPTAPE" flamegraph "$TMP/py.tape" -o "$TMP/py.svg" 2>/dev/null
ok "python3 SVG: root on top, chains as boxes, deep slivers hidden, height fits" python3 - "$TMP/py.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
gs = [g for g in root.iter(ns + "g") if g.get("class") == "f"]
y = lambda g: float(g.find(ns + "rect").get("y"))
top = [g for g in gs if g.get("data-p") == "-1"][0]
assert y(top) == min(y(g) for g in gs), "root not on top"
assert any(g.get("data-n").endswith(" frames]") and g.get("data-c") for g in gs), "no chain box"
shown = [g for g in gs if g.get("style") != "display:none"]
hidden = [g for g in gs if g.get("style") == "display:none"]
assert hidden, "nothing hidden"
deepest = max(int(g.get("data-d")) for g in gs)
rows = max(int(g.get("data-d")) for g in shown) + 1
assert int(root.get("height")) == 56 + rows * 17 + 24 < 56 + (deepest + 1) * 17, (root.get("height"), rows, deepest)
PY
# Zoom into the narrow box above a hidden one: it shows, and the picture grows.
{ echo '<!DOCTYPE html><html><body>'; sed 1d "$TMP/py.svg"; cat <<'JS'
<script>
var svg = document.querySelector('svg'), hf = hfSetup(svg), h0 = +svg.getAttribute('height');
function fits() {
  var rows = 0;
  hf.nodes.forEach(function (n) { if (n.g.style.display !== 'none' && n.d + 1 > rows) rows = n.d + 1; });
  return +svg.getAttribute('height') === 56 + rows * 17 + 24;
}
var hid = hf.nodes.filter(function (n) { return n.g.style.display === 'none'; })[0];
var up = hf.nodes.filter(function (n) { return n.i === hid.p; })[0];
hf.zoom(up);
var res = (hid.g.style.display === '' ? 'shown' : 'hidden') + ' ' + (fits() ? 'fits' : 'nofit');
hf.zoom(null);
res += ' ' + (hid.g.style.display === 'none' ? 'hidden' : 'shown') + ' ' + (+svg.getAttribute('height') === h0 ? 'back' : 'not');
var ch = hf.nodes.filter(function (n) { return n.c && n.c.split('\n').length > 2; })[0];
var mid = ch.c.split('\n')[1].replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
res += ' ' + (hf.search(mid) > 0 && ch.hit ? 'found' : 'nofind');
document.body.setAttribute('data-res', res);
</script></body></html>
JS
} >"$TMP/zoom.html"
chrome --dump-dom "file://$TMP/zoom.html" >"$TMP/zoom.dom" 2>/dev/null
ok "python3 SVG: a click shows what was hidden, the height fits; reset hides it; search sees inside chains" \
  grep -q 'data-res="shown fits hidden back found"' "$TMP/zoom.dom"

: > "$TMP/empty.tape"
"$HEAPTAPE" flamegraph "$TMP/empty.tape" -o "$TMP/empty.svg" 2>"$TMP/err"; rc=$?
ok "empty tape: exit 1 and a message" sh -c '[ "$1" = 1 ] && grep -q "^heaptape: .*empty.tape: " "$2"' _ $rc "$TMP/err"
ok "empty tape: no SVG" [ ! -e "$TMP/empty.svg" ]
"$HEAPTAPE" flamegraph --metric bogus "$DATA/rep_basic.tape" -o "$TMP/b.svg" 2>/dev/null
ok "bad --metric: exit 2" [ $? = 2 ]
ok "-o a pipe: the SVG goes through it, the pipe stays" \
  via_pipe "$TMP/pipe.svg" "$HEAPTAPE" flamegraph "$DATA/rep_basic.tape" -o "$TMP/pipe.svg"
finish
