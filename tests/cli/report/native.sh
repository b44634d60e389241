#!/bin/sh
# a real recording of tests/progs/rep_known.c, whose heap is known exactly
t=$(mktemp) || exit 1
trap 'rm -f "$t" "$t.json"' EXIT
"$HEAPTAPE" record -o "$t" -- "$HT_BUILD/progs/rep_known" 2>/dev/null || exit 1
"$HEAPTAPE" report --json --top 1000 --stacks 1 "$t" > "$t.json" || exit 1
python3 - "$t.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1])); s = d["summary"]
print("allocs", s["allocs"], "reallocs", s["reallocs"], "bytes", s["bytes"])
print("peak", s["peak"], "blocks", s["peak_blocks"])
print("leaked", s["leaked"], "blocks", s["leaked_blocks"], "temporary", s["temporary"])
by = {}
for x in d["calls"]:
    f = x["stack"][0]["function"] if x["stack"] else "?"
    a = by.setdefault(f, [0, 0, 0, 0, 0])
    for i, k in enumerate(["allocs", "bytes", "peak", "leaked", "temporary"]):
        a[i] += x[k]
for f in sorted(by):
    print(f, "allocs %d bytes %d peak %d leaked %d temporary %d" % tuple(by[f]))
PY
"$HEAPTAPE" report --memprof "$t" | sed -n 's|^\([a-z_]*\) [^ ]*/rep_known\.c:[0-9]*|\1|p'
