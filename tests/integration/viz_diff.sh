#!/bin/sh
# heaptape -- `heaptape diff`: its totals equal go tool pprof -diff_base on the
# two tapes' pprof exports; sites on one side only; JSON, HTML; bad input.
. "$(dirname "$0")/viz_common.inc"

if ! command -v go >/dev/null 2>&1; then
  echo "go not installed (golang-go): cannot check with go tool pprof"
  FAIL=1; finish; exit 1
fi

"$HEAPTAPE" record -o "$TMP/g1.tape" -- "$HT_BUILD/progs/viz_grow" 0.1 >/dev/null 2>&1
"$HEAPTAPE" record -o "$TMP/g3.tape" -- "$HT_BUILD/progs/viz_grow" 0.3 >/dev/null 2>&1
"$HEAPTAPE" record -o "$TMP/m.tape" -- "$HT_BUILD/progs/rep_merge" >/dev/null 2>&1

# pprof_diff BASE NEW: go tool pprof -diff_base's four totals (new - base).
pprof_diff() {
  for i in alloc_objects alloc_space inuse_objects inuse_space; do
    unit=; case $i in *space) unit=-unit=B ;; esac
    HOME=$TMP go tool pprof -top $unit -nodefraction=0 -nodecount=100000 -sample_index=$i \
      -diff_base "$1" "$2" 2>/dev/null |
      sed -n 's/^Showing nodes accounting for \(-\{0,1\}[0-9]*\)[^0-9].*/\1/p'
  done | tr '\n' ' ' | sed 's/ $//'
}

# heaptape_diff BASE NEW: the same four from heaptape diff --json.
heaptape_diff() {
  "$HEAPTAPE" diff --json "$1" "$2" | python3 -c '
import json,sys; c=json.load(sys.stdin)["summary"]["change"]
print(c["allocs"], c["bytes"], c["leaked_blocks"], c["leaked"])'
}

# same_totals BASE NEW: heaptape diff's totals = go tool pprof -diff_base's.
same_totals() {
  "$HEAPTAPE" pprof -q "$1" -o "$TMP/base.pb.gz" && "$HEAPTAPE" pprof -q "$2" -o "$TMP/new.pb.gz" || return 1
  want=$(pprof_diff "$TMP/base.pb.gz" "$TMP/new.pb.gz"); got=$(heaptape_diff "$1" "$2")
  [ "$got" = "$want" ] || { echo "  diff says '$got', go tool pprof -diff_base '$want'"; return 1; }
}

ok "grow 0.1 s -> 0.3 s: totals = pprof -diff_base" same_totals "$TMP/g1.tape" "$TMP/g3.tape"
ok "grow 0.3 s -> 0.1 s: totals = pprof -diff_base" same_totals "$TMP/g3.tape" "$TMP/g1.tape"
ok "rep_basic -> rep_merge: totals = pprof -diff_base" same_totals "$DATA/rep_basic.tape" "$TMP/m.tape"
ok "rep_basic -> rep_sampled: totals = pprof -diff_base" same_totals "$DATA/rep_basic.tape" "$DATA/rep_sampled.tape"
ok "a tape against itself: no change" [ "$(heaptape_diff "$TMP/g3.tape" "$TMP/g3.tape")" = "0 0 0 0" ]

# Sites: the sum of the sites' changes is the total change; one-sided sites.
"$HEAPTAPE" diff --json "$DATA/rep_basic.tape" "$TMP/m.tape" > "$TMP/d.json"
ok "site changes sum to the totals; sides" python3 - "$TMP/d.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); c = d["summary"]["change"]
for k in ("allocs", "bytes", "leaked"):
    assert sum(s["change"][k] for s in d["sites"]) == c[k], k
sides = {s["side"] for s in d["sites"]}
assert sides == {"base", "new"}, sides
assert all((s["base"] is None) == (s["side"] == "new") for s in d["sites"])
ch = [abs(s["change"]["bytes"]) for s in d["sites"]]
assert ch == sorted(ch, reverse=True), "not sorted by |change in bytes|"
assert d["sort"] == "bytes"
m = [s for s in d["sites"] if s["location"].startswith("make_buf")][0]
assert m["change"]["allocs"] == 6 and m["change"]["bytes"] == 6000, m
PY
"$HEAPTAPE" diff --json --sort peak "$TMP/g1.tape" "$TMP/g3.tape" > "$TMP/p.json"
ok "--sort peak orders by |change at the peak|; both sides" python3 -c '
import json,sys; d=json.load(open(sys.argv[1])); ch=[abs(s["change"]["peak"]) for s in d["sites"]]
assert ch == sorted(ch, reverse=True) and d["sort"] == "peak"
assert any(s["side"] == "both" for s in d["sites"])' "$TMP/p.json"
"$HEAPTAPE" diff "$DATA/rep_basic.tape" "$TMP/m.tape" > "$TMP/d.txt"
ok "text: summaries side by side" grep -q '^SUMMARY  *base  *new  *change' "$TMP/d.txt"
ok "text: one-sided sites marked" grep -q 'only in new\]' "$TMP/d.txt"
ok "text: the key named" grep -q 'by the absolute change in bytes allocated' "$TMP/d.txt"

# HTML: a self-contained page: no scripts, nothing fetched.
"$HEAPTAPE" diff --html -o "$TMP/d.html" "$TMP/g1.tape" "$TMP/g3.tape"
ok "html: a page" grep -q '<h2>Sites</h2>' "$TMP/d.html"
ok "html: no external resources" sh -c '! grep -Eq "(src|href)=|https?:" "$1"' _ "$TMP/d.html"
ok "html: valid XML-ish structure" python3 -c '
import html.parser,sys
class P(html.parser.HTMLParser): pass
P().feed(open(sys.argv[1]).read())' "$TMP/d.html"

# Bad input: one line, exit 1 (the job) or 2 (usage).
"$HEAPTAPE" diff "$TMP/g1.tape" 2>"$TMP/err"; rc=$?
ok "one argument: exit 2" [ "$rc" = 2 ]
ok "one argument: says two tapes" grep -q '^heaptape: diff: needs two tapes' "$TMP/err"
"$HEAPTAPE" diff "$TMP/g1.tape" "$TMP/nope.tape" >/dev/null 2>"$TMP/err"; rc=$?
ok "missing file: exit 1, one line naming it" sh -c '[ "$1" = 1 ] && [ "$(wc -l < "$2")" = 1 ] && grep -q "^heaptape: $3: " "$2"' _ "$rc" "$TMP/err" "$TMP/nope.tape"
size=$(wc -c < "$TMP/g3.tape"); head -c $((size - 300)) "$TMP/g3.tape" > "$TMP/cut.tape"
"$HEAPTAPE" diff "$TMP/g1.tape" "$TMP/cut.tape" >/dev/null 2>"$TMP/err"; rc=$?
ok "truncated tape: exit 1, one line naming it" sh -c '[ "$1" = 1 ] && [ "$(wc -l < "$2")" = 1 ] && grep -q "^heaptape: $3: " "$2"' _ "$rc" "$TMP/err" "$TMP/cut.tape"
"$HEAPTAPE" diff --damaged "$TMP/g1.tape" "$TMP/cut.tape" >/dev/null 2>"$TMP/err"; rc=$?
ok "--damaged: compared anyway, with a warning" sh -c '[ "$1" = 0 ] && grep -q "^heaptape: warning: " "$2"' _ "$rc" "$TMP/err"
"$HEAPTAPE" diff --sort nope "$TMP/g1.tape" "$TMP/g3.tape" 2>/dev/null
ok "bad --sort: exit 2" [ $? = 2 ]
ok "diff --help" sh -c '"$HEAPTAPE" diff --help | grep -q "^usage: heaptape diff"'
finish
