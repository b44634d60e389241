#!/bin/sh
# stats --json and lifetimes --json: python3 parses the JSON and checks every
# figure against the text output of the same tape (a closed tape, a truncated
# one with its warning, a real recording with heaptape's writer thread)
t=$(mktemp -d) || exit 1
trap 'rm -rf "$t"' EXIT
"$HEAPTAPE" record -o "$t/real.tape" -- "$HT_BUILD/progs/rep_known" 2>/dev/null || exit 1
for tape in ../../data/rep_basic.tape ../../data/rep_trunc.tape "$t/real.tape"; do
  n=$(basename "$tape" .tape)
  "$HEAPTAPE" stats "$tape" >"$t/st.txt" 2>"$t/st.err" || exit 1
  "$HEAPTAPE" stats --json "$tape" >"$t/st.json" 2>/dev/null || exit 1
  "$HEAPTAPE" lifetimes --by-site --bins 10 "$tape" >"$t/lt.txt" 2>/dev/null || exit 1
  "$HEAPTAPE" lifetimes --json --by-site --bins 10 "$tape" >"$t/lt.json" 2>/dev/null || exit 1
  python3 - "$n" "$t" <<'PY' || exit 1
import json, re, sys
name, d = sys.argv[1], sys.argv[2]
s = json.load(open(d + "/st.json")); txt = open(d + "/st.txt").read()
err = open(d + "/st.err").read().strip()
bad = []
def eq(what, a, b):
    if a != b: bad.append("%s: json %r, text %r" % (what, a, b))
def field(label):
    m = re.search(r"^  %s +(.*)$" % re.escape(label), txt, re.M); return m.group(1)
eq("version", s["version"], int(field("format version")))
eq("duration", "%.3f s" % (s["duration_ns"] / 1e9), field("duration"))
eq("symbolised", s["symbolised"], field("symbolised") == "yes")
m = re.match(r"(\d+) bytes in (\d+) packets \((\d+) of events\)", field("file"))
eq("file", [s["file_bytes"], s["packets"], s["event_packets"]], [int(x) for x in m.groups()])
eq("events", s["events"], int(field("events").split()[0]))
eq("closed", s["closed"], field("closed").startswith("yes"))
m = re.search(r"exit status (\d+)", field("closed"))
eq("exit status", s["exit_status"], int(m.group(1)) if m else None)
eq("damaged", "%d packets, %d bytes" % (s["damaged_packets"], s["damaged_bytes"]), field("damaged"))
eq("truncated", "%d bytes" % s["truncated_bytes"], field("truncated"))
eq("lost", "%d events" % s["lost"], field("lost"))
sec = lambda h: re.search(r"^%s\n((?:  .*\n)*)" % h, txt, re.M).group(1).splitlines()
eq("by type", s["by_type"], {l.split()[0]: int(l.split()[1]) for l in sec("EVENTS")})
eq("by kind", s["by_kind"], {l[2:19].strip(): int(l[19:]) for l in sec("ALLOCATIONS BY KIND")})
eq("sizes", sum(x["count"] for x in s["sizes"]), sum(int(l.split()[1]) for l in sec("SIZES")))
rows = [l.split() for l in sec("THREADS")[1:] if not l.startswith("  (")]
eq("threads", [[str(x["tid"]), x["name"] or "-", str(x["events"]), str(x["allocs"]),
                str(x["bytes"]), str(x["frees"])] for x in s["threads"]], rows)
eq("recorder threads", [x["tid"] for x in s["recorder_threads"]],
   [int(x) for x in re.findall(r"not listed: (\d+),", txt)])
eq("warning", s["warning"], err[len("heaptape: warning: ") + len(s["tape"]) + 2:] if err else None)
l = json.load(open(d + "/lt.json")); lt = open(d + "/lt.txt").read()
lf = lambda label: re.search(r"^  %s +(\d+)" % label, lt, re.M).group(1)
eq("operations", l["operations"], int(lf("operations")))
eq("blocks", l["blocks"], int(lf("blocks")))
eq("freed", l["freed"], int(lf("freed")))
eq("never", "%d (%d bytes)" % (l["never_freed"], l["never_freed_bytes"]),
   re.search(r"^  never freed +(.*)$", lt, re.M).group(1))
eq("in range", l["in_range"], int(lf("in range")))
macro = re.findall(r"^ +[\d.]+-[\d.]+ +(\d+)", lt, re.M)
eq("macro", [x["blocks"] for x in l["macro"]], [int(x) for x in macro])
tim = [int(x) for x in re.findall(r"^  (?:>= .{12}|< .{13}) +(\d+)", lt, re.M)]
eq("time", [x["blocks"] for x in l["time"]], [x for x in tim if x])
sites = re.search(r"BY SITE.*\n.*\n((?:  .*\n)*)", lt).group(1).splitlines()
eq("sites", [[x["blocks"], x["freed"], x["never"], "%.3f" % x["mean_pct"], "%.1f" % x["mean_ops"],
              x["short"], x["site"]] for x in l["sites"]],
   [[int(r[0:12]), int(r[12:23]), int(r[23:34]), r[34:45].strip(), r[45:58].strip(), int(r[71:80]),
     r[82:]] for r in sites])
eq("clock", l["clock_resolution_ns"] > 1, "  clock " in lt)
print(name, "stats and lifetimes: json = text" if not bad else "\n  ".join(["MISMATCH"] + bad))
PY
done
