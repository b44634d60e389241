#!/bin/sh
# heaptape bench -- the python3 replay tape (bench_replay.sh's workload) under
# glibc, jemalloc, mimalloc, tcmalloc and the handle-based compacting driver
# with no locks and with Steve's coarse and fine locking models (heaptape
# replay --locks); prints a markdown table of medians over RUNS runs.
# Each run replays all seven configurations back to back (interleaved runs).
# Then the same for a smaller python3 run recorded with `record --access`,
# whose loads, stores and modifies drive the locking models too.
# BEFORE=DRIVER.so adds the same three runs with another build of the
# compacting driver (e.g. main's, to show a change side by side), as rows
# "compact before".
# usage: [BEFORE=old/driver_compact.so] sh bench/bench_locks.sh [BUILD_DIR] [RUNS]
set -eu
B=${1:-build}; RUNS=${2:-5}; BEFORE=${BEFORE:-}
HT=$(cd "$B" && pwd)/heaptape
T=$(mktemp -d /tmp/ht-bench-locks.XXXXXX); trap 'rm -rf "$T"' EXIT
PY=/usr/bin/python3

PYTHONMALLOC=malloc "$HT" record -o "$T/python3.tape" -- "$PY" "$(dirname "$0")/python/json_docs.py" >/dev/null 2>&1
PYTHONMALLOC=malloc "$HT" record --access -o "$T/access.tape" -- "$PY" "$(dirname "$0")/python/json_docs.py" 4 2 >/dev/null 2>&1

for tape in python3 access; do
  r=1; while [ $r -le "$RUNS" ]; do
    "$HT" replay "$T/$tape.tape" --allocator all,compact --allocstats "$T/$tape.none.$r.json" >/dev/null
    for m in coarse fine; do
      "$HT" replay "$T/$tape.tape" --allocator compact --locks $m --allocstats "$T/$tape.$m.$r.json" >/dev/null
    done
    if [ -n "$BEFORE" ]; then
      "$HT" replay "$T/$tape.tape" --driver "$BEFORE" --allocstats "$T/$tape.before-none.$r.json" >/dev/null
      for m in coarse fine; do
        "$HT" replay "$T/$tape.tape" --driver "$BEFORE" --locks $m \
          --allocstats "$T/$tape.before-$m.$r.json" >/dev/null
      done
    fi
    r=$((r + 1))
  done
done

for tape in python3 access; do
"$PY" - "$T" "$RUNS" "$tape" <<'PY'
import json, os, statistics, sys
t, runs, tape = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def mib(b): return "%.2f MiB" % (b / 1048576)
rows = []
for m in ["none", "coarse", "fine"]:
    ds = [json.load(open("%s/%s.%s.%d.json" % (t, tape, m, r))) for r in range(1, runs + 1)]
    for i, a in enumerate(ds[0]["allocators"]):
        med = lambda k, i=i, ds=ds: statistics.median(d["allocators"][i][k] for d in ds)
        name = a["driver"] + ("" if a["driver"] != "compact" else ", locks " + m)
        rows.append((name, ds[0], med))
for m in ["none", "coarse", "fine"]:
    if not os.path.exists("%s/%s.before-%s.1.json" % (t, tape, m)): continue
    ds = [json.load(open("%s/%s.before-%s.%d.json" % (t, tape, m, r))) for r in range(1, runs + 1)]
    med = lambda k, ds=ds: statistics.median(d["allocators"][0][k] for d in ds)
    rows.append(("compact before, locks " + m, ds[0], med))
d0 = rows[0][1]
print("%s tape: %d ops, %d blocks, live peak %s; medians of %d runs" % (
    "python3" if tape == "python3" else "python3 --access (4 documents)", d0["ops"],
    d0["blocks"], mib(d0["live_peak"]), runs))
print()
print("| allocator | peak RSS | peak mapped | frag @ peak | frag mean | ns/op | alloc time | lock calls | lock time | compactions | moved |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for name, d, med in rows:
    print("| %s | %s | %s | %.1f%% | %.1f%% | %.1f | %.1f ms | %d | %.1f ms | %d | %s |" % (
        name, mib(med("peak_rss")), mib(med("peak_mapped")), med("frag_at_peak_pct"),
        med("frag_mean_pct"), med("ns_per_op"), med("time_ns") / 1e6, med("lock_calls"),
        med("lock_ns") / 1e6, med("compactions"), mib(med("moved_bytes"))))
PY
echo
done
