#!/bin/sh
# heaptape tests -- heaptape html on a tape of record --access: the page
# draws the top sites' access counts per byte offset (issue 15, item 3),
# checked in its data and in the page Chromium renders. acc_known's blocks
# have known counts (tests/progs/acc_known.c).
. "$(dirname "$0")/record_common.inc"
VGDIR=$HT_BUILD/valgrind
if ! command -v valgrind >/dev/null 2>&1 || [ ! -e "$VGDIR/heaptape-amd64-linux" ] ||
   ! command -v python3 >/dev/null 2>&1; then
  echo "skip access_html (valgrind, build/valgrind/heaptape-amd64-linux or python3 missing)"
  finish; exit
fi
chrome() {
  timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run \
    --user-data-dir="$(mktemp -d "$T/chrome.XXXXXX")" "$@"
}

"$HEAPTAPE" record --access -o "$T/ak.tape" -- "$PROGS/acc_known" 2>/dev/null; ok "acc_known: recorded" $?
"$HEAPTAPE" html -o "$T/ak.html" "$T/ak.tape" 2>/dev/null; ok "html: exit 0" $?
grep -q '<h2 id="h-access">Heap accesses' "$T/ak.html"; ok "html: a section of heap accesses" $?
grep -q '<a href="#h-access">accesses</a>' "$T/ak.html"; ok "html: linked from the top" $?

# The page's data: the top sites' counts per byte offset, as heaptape access has them.
python3 - "$T/ak.html" >"$T/ak.check" <<'PY'
import json, re, sys
page = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script id="ht-data" type="application/json">(.*?)</script>', page, re.S).group(1))
a = d["access"]
by = {s["max"]: s for s in a["sites"]}
print("sites", len(a["sites"]), "sample", a["sample"])
print("A", by[72]["counts"] == [1000] * 4 + [0] * 68, by[72]["writes"], by[72]["reads"])
print("B", by[264]["counts"] == [11] * 264)
print("E", by[136]["counts"] == [100] * 4 + [0] * 60 + [100] * 4 + [0] * 68)
print("F", by[24]["counts"] == [0] * 4 + [51] * 4 + [0] * 16)
PY
grep -qx 'sites 5 sample 1' "$T/ak.check"; ok "data: 5 top sites, every access" $?
grep -qx 'A True 1000 0' "$T/ak.check"; ok "data: A (72 B): bytes 0-3 written 1000 times, nothing else" $?
grep -qx 'B True' "$T/ak.check"; ok "data: B (264 B): every byte 11 times (a store and 10 loads)" $?
grep -qx 'E True' "$T/ak.check"; ok "data: E (136 B): bytes 0-3 and 64-67, 100 each" $?
grep -qx 'F True' "$T/ak.check"; ok "data: F (24 B): bytes 4-7, 50 modifies and a store" $?
"$HEAPTAPE" access --json "$T/ak.tape" | python3 -c '
import json, re, sys
a = json.load(sys.stdin)
page = open(sys.argv[1]).read()
d = json.loads(re.search(r"<script id=\"ht-data\" type=\"application/json\">(.*?)</script>", page, re.S).group(1))
top = [s for s in a["sites"] if "access_counts" in s]
sys.exit(0 if [s["access_counts"]["per_offset"] for s in top] == [s["counts"] for s in d["access"]["sites"]] else 1)' "$T/ak.html"
ok "data: the counts of heaptape access --json, site for site" $?

# The page as Chromium draws it: one chart per top site, bars for the runs.
if command -v chromium >/dev/null 2>&1; then
  chrome --enable-logging=stderr --v=0 --dump-dom "file://$T/ak.html" >"$T/ak.dom" 2>"$T/chrome.log"
  ok "chromium: page rendered" $?
  ! grep -E "CONSOLE|Uncaught" "$T/chrome.log" | grep -qiE "error|uncaught"; ok "chromium: no script errors" $?
  n=$(grep -o '<svg id="acc-[0-9]*"' "$T/ak.dom" | wc -l)
  [ "$n" = 5 ]; ok "chromium: 5 access charts ($n)" $?
  grep -q 'data-site="main [^"]*acc_known.c:42" data-total="4000" data-offsets="72"' "$T/ak.dom"
  ok "chromium: A's chart: 4000 byte accesses over 72 offsets" $?
  grep -q 'data-from="0" data-to="3" data-n="1000"' "$T/ak.dom"; ok "chromium: A's bar: bytes 0-3, 1000" $?
  grep -q 'data-from="64" data-to="67" data-n="100"' "$T/ak.dom"; ok "chromium: E's second bar: bytes 64-67, 100" $?
  chrome --window-size=1100,3000 --screenshot="$T/ak.png" "file://$T/ak.html" >/dev/null 2>&1
  [ -s "$T/ak.png" ]; ok "chromium: screenshot" $?
else
  echo "skip chromium checks (chromium missing)"
fi

# A sampled tape says so; a tape without accesses has no such section.
"$HEAPTAPE" record --access --access-sample 10 -o "$T/aks.tape" -- "$PROGS/acc_known" 2>/dev/null
"$HEAPTAPE" html -o "$T/aks.html" "$T/aks.tape" 2>/dev/null && grep -q '"access":{"sample":10,' "$T/aks.html"
ok "html: a 1-in-10 sample noted in the data" $?
if command -v chromium >/dev/null 2>&1; then
  chrome --dump-dom "file://$T/aks.html" 2>/dev/null | grep -q 'accesses sampled 1 in 10: counts are of the sample'
  ok "chromium: the sample named on the page" $?
fi
"$HEAPTAPE" record -o "$T/plain.tape" -- "$PROGS/acc_known" 2>/dev/null
"$HEAPTAPE" html -o "$T/plain.html" "$T/plain.tape" 2>/dev/null; ok "html: a tape without accesses" $?
! grep -q 'h-access' "$T/plain.html" && grep -q '"access":null' "$T/plain.html"
ok "html: no access section without accesses" $?
finish
