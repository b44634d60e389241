# heaptape tests -- compare `heaptape report --json` with known.py's expectations.
# Usage: check_sites.py REPORT.json EXPECT.json; prints "ok"/"FAIL" lines.
import json
import sys

rep = json.load(open(sys.argv[1]))
want = json.load(open(sys.argv[2]))
sites = {s["location"]: s for s in rep["bytes"]}
for key in ("retain", "temp", "leak", "thread"):
    w = want[key]
    loc = "%s %s:%d" % (w["func"], want["file"], w["line"])
    s = sites.get(loc)
    if s is None:
        print("FAIL %s: no site %s" % (key, loc))
        continue
    ok = s["leaked"] == w["bytes"] and s["leaked_blocks"] == w["blocks"]
    ok = ok and s["allocs"] >= (10000 if key in ("retain", "temp") else w["blocks"] // 2)
    print("%s %s: %s %d allocs, retains %d B in %d blocks (want %d B in %d)" % (
        "ok  " if ok else "FAIL", key, loc, s["allocs"], s["leaked"], s["leaked_blocks"],
        w["bytes"], w["blocks"]))
