#!/bin/sh
# python3: no location (e.g. list_resize listobject.c:81) is listed twice in
# the top 14 of any list; --by-stack does list locations more than once
t=$(mktemp) || exit 1
trap 'rm -f "$t" "$t.json" "$t.bs"' EXIT
PYTHONMALLOC=malloc "$HEAPTAPE" record -o "$t" -- /usr/bin/python3 -c \
  'x = []
for i in range(100000): x.append(str(i % 97) * 3)
d = {i: [i] * (i % 50) for i in range(5000)}' >/dev/null 2>&1 || exit 1
"$HEAPTAPE" report --json --top 14 "$t" > "$t.json" || exit 1
"$HEAPTAPE" report --json --by-stack --top 14 "$t" > "$t.bs" || exit 1
python3 - "$t.json" "$t.bs" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); bs = json.load(open(sys.argv[2]))
rep = 0
for key in ("peak", "calls", "bytes", "leaks"):
    locs = [x["location"] for x in d[key]]
    print(key, "10+ rows:", len(locs) >= 10, "repeated locations:", len(locs) - len(set(locs)),
          "list_resize rows <= 1:", sum(l.startswith("list_resize") for l in locs) <= 1)
    blocs = [x["location"] for x in bs[key]]
    rep += len(blocs) - len(set(blocs))
print("by-stack repeats some location:", rep > 0)
PY
