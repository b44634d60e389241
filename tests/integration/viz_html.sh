#!/bin/sh
# heaptape -- the HTML report: its data equals the report's, it works offline,
# renders in headless Chromium without errors, and #t=SECONDS selects a time
# whose heap equals `heaptape report --at`. The rendered page (C and C++
# programs): call trees (bottom-up, top-down, caller/callee) sum to the
# report's totals, charts over time end at them, the size histogram equals
# `heaptape stats`, RSS is drawn as its samples, axes sit on round values,
# the flame graph has no empty band, no slivers and no sideways scroll.
. "$(dirname "$0")/viz_common.inc"

"$HEAPTAPE" record -o "$TMP/grow.tape" -- "$HT_BUILD/progs/viz_grow" 1.2 >/dev/null 2>&1
for t in "$DATA/rep_basic.tape" "$DATA/rep_lua.tape" "$TMP/grow.tape"; do
  n=$(basename "$t" .tape)
  ok "$n: html writes a page" "$HEAPTAPE" html "$t" -o "$TMP/$n.html" 2>/dev/null
  "$HEAPTAPE" report --json "$t" > "$TMP/$n.json" 2>/dev/null
  ok "$n: page data = report" python3 - "$TMP/$n.html" "$TMP/$n.json" "$LIB" <<'PY'
import json, sys, importlib.util
spec = importlib.util.spec_from_file_location("lib", sys.argv[3]); lib = importlib.util.module_from_spec(spec); spec.loader.exec_module(lib)
d = lib.html_data(sys.argv[1]); s = json.load(open(sys.argv[2]))["summary"]
sites = d["sites"]; ds = d["summary"]
checks = [(ds[k], s[k]) for k in ("allocs", "bytes", "peak", "peak_ns", "leaked", "leaked_blocks", "temporary")]
checks += [(sum(x[3] for x in sites), s["bytes"]), (sum(x[4] for x in sites), s["peak"]),
           (sum(x[5] for x in sites), s["leaked"]), (sum(x[7] for x in sites), s["temporary"])]
for k, v in enumerate(d["snap"]["v"]):
    checks.append((sum(v[1::2]), d["snap"]["heap"][k]))
bad = [c for c in checks if c[0] != c[1]]
if bad: print("  mismatches", bad[:5])
sys.exit(1 if bad else 0)
PY
  ok "$n: nothing fetched from the network" sh -c '! grep -qiE "(src|href)=\"(https?:)?//" "$1"' _ "$TMP/$n.html"
done

# A bucket time, and the heap the report says the program held then.
T=$(python3 -c 'import json,sys,re
s=open(sys.argv[1]).read(); d=json.loads(re.search(r"<script id=\"ht-data\" type=\"application/json\">(.*?)</script>",s,re.S).group(1))
t=d["snap"]["t"]; print("%.9f" % (t[len(t)//2]/1e9))' "$TMP/grow.html")
AT=$("$HEAPTAPE" report --json --at "$T" "$TMP/grow.tape" | python3 -c 'import json,sys; print(json.load(sys.stdin)["at_heap"])')
chrome --enable-logging=stderr --v=0 --dump-dom "file://$TMP/grow.html#t=$T" >"$TMP/dom.html" 2>"$TMP/chrome.log"
ok "page loads without console errors" sh -c \
  '! grep -E "CONSOLE|Uncaught" "$1" | grep -qiE "error|uncaught"' _ "$TMP/chrome.log"
ok "no script errors in the page" grep -q '<div id="errors"></div>' "$TMP/dom.html"
ok "timeline drawn (heap line, peak marker)" sh -c 'grep -q "tl-heap" "$1" && grep -q "tl-peak" "$1"' _ "$TMP/dom.html"
ok "flame graph drawn" sh -c '[ "$(grep -o "class=\"f\"" "$1" | wc -l)" -ge 2 ]' _ "$TMP/dom.html"
ok "#t=$T selects that time" grep -q "id=\"sel\" data-ns=\"$(python3 -c "print(round($T*1e9))")\"" "$TMP/dom.html"
ok "heap at the selected time = report --at ($AT)" grep -q "data-heap=\"$AT\"" "$TMP/dom.html"
ok "flame graph switched to that time" python3 - "$TMP/dom.html" "$AT" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
m = re.search(r'<svg id="flame"[^>]*>', s).group(0)
sys.exit(0 if 'data-total="%s"' % sys.argv[2] in m and 'data-metric="at"' in m else 1)
PY
chrome --window-size=1280,1100 --screenshot="$TMP/shot.png" "file://$TMP/grow.html#t=$T" >/dev/null 2>&1
ok "screenshot is not blank" [ "$(python3 "$LIB" png "$TMP/shot.png")" -gt 20 ]
[ -n "${VIZ_KEEP:-}" ] && cp "$TMP/shot.png" "$VIZ_KEEP"

"$HEAPTAPE" record -o "$TMP/cxx.tape" -- "$HT_BUILD/progs/rec_cxx" >/dev/null 2>&1
for t in "$TMP/grow.tape" "$TMP/cxx.tape" "$DATA/rep_basic.tape"; do
  n=$(basename "$t" .tape)
  "$HEAPTAPE" html "$t" -o "$TMP/$n.html" 2>/dev/null
  "$HEAPTAPE" report --json "$t" > "$TMP/$n.json" 2>/dev/null
  "$HEAPTAPE" stats --json "$t" > "$TMP/$n.stats" 2>/dev/null
  for v in bottomup topdown callers; do
    chrome --window-size=1280,1000 --dump-dom "file://$TMP/$n.html#view=$v" >"$TMP/$n.$v.dom" 2>/dev/null
    ok "$n: rendered page ($v) = report" python3 "$LIB" page "$TMP/$n.html" "$TMP/$n.$v.dom" "$TMP/$n.json" "$TMP/$n.stats" $v
  done
done
ok "grow: RSS samples on the page" python3 -c 'import sys,importlib.util as u
s=u.spec_from_file_location("l",sys.argv[1]);l=u.module_from_spec(s);s.loader.exec_module(l)
sys.exit(0 if len(l.html_data(sys.argv[2])["rss"]) >= 10 else 1)' "$LIB" "$TMP/grow.html"

: > "$TMP/empty.tape"
"$HEAPTAPE" html "$TMP/empty.tape" -o "$TMP/empty.html" 2>"$TMP/err"; rc=$?
ok "empty tape: exit 1, message, no page" sh -c '[ "$1" = 1 ] && grep -q "^heaptape: .*empty.tape: " "$2" && [ ! -e "$3" ]' _ $rc "$TMP/err" "$TMP/empty.html"
# A tape whose times run far past the end its scan saw (fuzzer-made): the
# page's snapshots fold up to the wild time (never a snapshot per step of
# the scan's spacing: that took gigabytes), with a warning.
g="$HT_ROOT/tests/fuzz/corpus/fuzz_sealed/gen-1.tape"
"$HEAPTAPE" html -o "$TMP/gen.html" "$g" > "$TMP/gen.err" 2>&1
ok "times past the end: the page is bounded and says so" sh -c \
  "grep -q 'events far past the tape.s end' \"$TMP/gen.err\" &&
   grep -q ' 100 time buckets' \"$TMP/gen.err\""
ok "-o a pipe: the page goes through it, the pipe stays" \
  via_pipe "$TMP/pipe.html" "$HEAPTAPE" html "$DATA/rep_basic.tape" -o "$TMP/pipe.html"
finish
