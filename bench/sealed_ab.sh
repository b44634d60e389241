#!/bin/sh
# heaptape benchmarks -- the commands that read a sealed tape's aggregate
# section (stats, report, --peak, --memprof, flamegraph SVG and --folded,
# pprof, html), two builds side by side and heaptrack_print beside them:
# each build seals its own copy of the journal (an older build writes its
# own version), then every command runs with the old build and the new in
# turn, ROUNDS times, and heaptrack_print on the same program's heaptrack
# file in each round. CPU (user + sys, from the kernel's rusage: /usr/bin/time
# rounds to 10 ms) and wall per process, medians; peak RSS from one more run
# of each under /usr/bin/time. Checks that both
# builds print the same (stats aside: it names the version and file size).
# usage: sh bench/sealed_ab.sh OLD_BUILD NEW_BUILD JOURNAL [HEAPTRACK_FILE]
#        (ROUNDS=5)
set -u
cd "$(dirname "$0")/.."
A=$(cd "$1" && pwd)/heaptape
B=$(cd "$2" && pwd)/heaptape
J=$3 HTF=${4:-}
W=$(mktemp -d /tmp/ht-bench-sealed.XXXXXX); trap 'rm -rf "$W"' EXIT
mkdir "$W/old" "$W/new"
cp "$J" "$W/old/t.tape"; cp "$J" "$W/new/t.tape"
"$A" seal "$W/old/t.tape" >/dev/null 2>&1 && "$B" seal "$W/new/t.tape" >/dev/null 2>&1 ||
  { echo "sealed_ab: seal failed" >&2; exit 1; }
echo "tape: old $(wc -c < "$W/old/t.tape") bytes, new $(wc -c < "$W/new/t.tape") bytes"
python3 - "$A" "$B" "$W" "${ROUNDS:-5}" "$HTF" <<'EOF'
import gzip, os, shlex, statistics, sys, time
old, new, w, rounds, htf = sys.argv[1:6]
cmds = [("stats", "stats t.tape"), ("report", "report t.tape"),
        ("report --peak", "report --peak t.tape"), ("report --memprof", "report --memprof t.tape"),
        ("flamegraph (SVG)", "flamegraph -o f.svg t.tape"),
        ("flamegraph --folded", "flamegraph --folded -o f.txt t.tape"),
        ("pprof", "pprof -o p.pb.gz t.tape"), ("html", "html -o p.html t.tape")]
def run(d, argv, out):
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.chdir(d)
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1); os.dup2(os.open("/dev/null", os.O_WRONLY), 2)
        os.execvp(argv[0], argv)
    _, st, ru = os.wait4(pid, 0)
    return ru.ru_utime + ru.ru_stime, time.monotonic() - t0, ru.ru_maxrss / 1024
# A child forked from Python keeps Python's high-water mark through exec
# (~10 MiB): peak RSS comes from one more run under /usr/bin/time, whose
# own child starts small.
def rss(d, argv, out):
    f = os.path.join(w, "rss")
    run(d, ["/usr/bin/time", "-f", "%M", "-o", f] + argv, out)
    return int(open(f).read().split()[-1]) / 1024
res = {}
for r in range(int(rounds)):
    for name, c in cmds:
        for b, h in (("old", old), ("new", new)):
            res.setdefault((name, b), []).append(run(os.path.join(w, b), [h] + shlex.split(c), "out"))
            os.rename(os.path.join(w, b, "out"), os.path.join(w, b, "out." + name))
    if htf:
        res.setdefault(("heaptrack_print", "-"), []).append(
            run(w, ["heaptrack_print", os.path.abspath(htf)], "/dev/null"))
peak = {}
for name, c in cmds:
    for b, h in (("old", old), ("new", new)):
        peak[(name, b)] = rss(os.path.join(w, b), [h] + shlex.split(c), "/dev/null")
if htf:
    peak[("heaptrack_print", "-")] = rss(w, ["heaptrack_print", os.path.abspath(htf)], "/dev/null")
def same(name):
    if name == "stats": return "(version)"
    files = {"flamegraph (SVG)": "f.svg", "flamegraph --folded": "f.txt", "pprof": "p.pb.gz",
             "html": "p.html"}
    f = files.get(name, "out." + name)
    a, b = (open(os.path.join(w, x, f), "rb").read() for x in ("old", "new"))
    if f.endswith(".gz") and a != b:  # the level may differ: the profile inside
        a, b = gzip.decompress(a), gzip.decompress(b)
        return "same inside" if a == b else "DIFFERENT"
    return "same" if a == b else "DIFFERENT"
med = lambda v, i: statistics.median(x[i] for x in v)
ht = res.get(("heaptrack_print", "-"))
print("| command | old: CPU, peak RSS | new: CPU, peak RSS | new / old CPU | output |"
      + (" heaptrack_print CPU / new CPU |" if ht else ""))
print("|---|---|---|---|---|" + ("---|" if ht else ""))
for name, _ in cmds:
    o, n = res[(name, "old")], res[(name, "new")]
    row = "| `%s` | %.4f s, %.1f MiB | %.4f s, %.1f MiB | %.2fx | %s |" % (
        name, med(o, 0), peak[(name, "old")], med(n, 0), peak[(name, "new")], med(n, 0) / med(o, 0),
        same(name))
    if ht: row += " %.1fx |" % (med(ht, 0) / med(n, 0))
    print(row)
if ht:
    print("\nheaptrack_print: %.3f s CPU, %.3f s wall, %.1f MiB" % (med(ht, 0), med(ht, 1),
                                                                   peak[("heaptrack_print", "-")]))
EOF
