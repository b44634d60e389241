#!/bin/sh
# C++ sites merged by location: three callers of one allocating line give one
# row with the summed figures; vector and string growth are attributed to
# their caller, past the std:: allocator frames; --by-stack splits them again
t=$(mktemp) || exit 1
trap 'rm -f "$t" "$t.json" "$t.bs"' EXIT
"$HEAPTAPE" record -o "$t" -- "$HT_BUILD/progs/rep_merge" >/dev/null 2>&1 || exit 1
"$HEAPTAPE" report --json --top 1000 --paths 0 "$t" > "$t.json" || exit 1
"$HEAPTAPE" report --json --by-stack --top 1000 "$t" > "$t.bs" || exit 1
python3 - "$t.json" "$t.bs" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1])); bs = json.load(open(sys.argv[2]))
short = lambda loc: loc.split(" ")[0] + " " + loc.split("/")[-1] if "/" in loc else loc
for key in ("calls", "peak", "leaks"):
    locs = [x["location"] for x in d[key]]
    print(key, "rows:", ", ".join(short(l) for l in locs if "rep_merge" in l))
    print(key, "unique:", len(locs) == len(set(locs)),
          "std:: locations:", sum(l.startswith("std::") or " std::" in l for l in locs))
row = [x for x in d["calls"] if x["location"].startswith("make_buf")][0]
print("make_buf allocs", row["allocs"], "bytes", row["bytes"], "peak", row["peak"],
      "leaked", row["leaked"], "blocks", row["leaked_blocks"])
print("stacks listed", len(row["stacks"]) == row["stack_count"],
      "shares sum to 1:", abs(sum(s["share"] for s in row["stacks"]) - 1) < 1e-5,
      "allocs sum:", sum(s["allocs"] for s in row["stacks"]))
print("callers", sorted({s["stack"][1]["function"] for s in row["stacks"]}))
for f in ("grow_vector()", "grow_string()"):
    r = [x for x in d["calls"] if x["location"].startswith(f)][0]
    print(f, "allocs > 5:", r["allocs"] > 5, "first frame", r["stack"][0]["function"])
split = [x for x in bs["calls"] if x["location"].startswith("make_buf")]
print("by-stack make_buf rows > 1:", len(split) > 1, "allocs", sum(x["allocs"] for x in split))
PY
"$HEAPTAPE" report --leaks "$t" | sed 's|/[^ ]*/||g; s/#[0-9]*  //; s/ ([0-9.]*%)//' | grep -B1 '^        make_buf'
