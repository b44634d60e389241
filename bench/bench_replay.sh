#!/bin/sh
# heaptape bench -- replays three real-program tapes (sqlite3 on a generated SQL
# workload, python3 with PYTHONMALLOC=malloc, perl) under glibc, jemalloc,
# mimalloc and tcmalloc; prints a markdown table of medians over RUNS runs.
# usage: sh bench/bench_replay.sh [BUILD_DIR] [RUNS]
set -eu
B=${1:-build}; RUNS=${2:-5}
HT=$(cd "$B" && pwd)/heaptape
T=$(mktemp -d /tmp/ht-bench-replay.XXXXXX); trap 'rm -rf "$T"' EXIT
PY=/usr/bin/python3

# The workloads.
{
  echo "create table kv(k integer primary key, v text, n real);"
  echo "begin;"
  i=0; while [ $i -lt 20000 ]; do
    echo "insert into kv(v, n) values (hex(randomblob($((i % 300 + 1)))), $i * 0.5);"; i=$((i + 1))
  done
  echo "commit;"
  echo "create index kv_v on kv(v);"
  echo "delete from kv where k % 3 = 0;"
  echo "select count(*), sum(length(v)) from kv group by k % 10;"
  echo "update kv set v = v || v where k % 7 = 0;"
  echo "select max(length(v)) from kv;"
} >"$T/work.sql"
"$HT" record -o "$T/sqlite3.tape" -- sqlite3 "$T/db" ".read $T/work.sql" >/dev/null 2>&1
PYTHONMALLOC=malloc "$HT" record -o "$T/python3.tape" -- "$PY" "$(dirname "$0")/python/json_docs.py" >/dev/null 2>&1
"$HT" record -o "$T/perl.tape" -- perl -e 'my %h; for my $i (1..300000) { $h{$i % 5000} .= "ab$i"; delete $h{($i * 7) % 5000} if $i % 11 == 0 } print scalar(keys %h), "\n"' >/dev/null 2>&1

for w in sqlite3 python3 perl; do
  r=1; while [ $r -le "$RUNS" ]; do
    "$HT" replay "$T/$w.tape" --allocator all --allocstats "$T/$w.$r.json" >/dev/null
    r=$((r + 1))
  done
done

"$PY" - "$T" "$RUNS" <<'PY'
import json, statistics, sys
t, runs = sys.argv[1], int(sys.argv[2])
def mib(b): return "%.2f MiB" % (b / 1048576)
print("| tape | ops | live peak | allocator | peak RSS | peak mapped | frag @ peak | frag mean | ns/op | alloc time | failures |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for w in ["sqlite3", "python3", "perl"]:
    ds = [json.load(open("%s/%s.%d.json" % (t, w, r))) for r in range(1, runs + 1)]
    for i, a in enumerate(ds[0]["allocators"]):
        m = lambda k: statistics.median(d["allocators"][i][k] for d in ds)
        print("| %s | %d | %s | %s | %s | %s | %.1f%% | %.1f%% | %.1f | %.1f ms | %d |" % (
            w, ds[0]["ops"], mib(ds[0]["live_peak"]), a["driver"], mib(m("peak_rss")),
            mib(m("peak_mapped")), m("frag_at_peak_pct"), m("frag_mean_pct"), m("ns_per_op"),
            m("time_ns") / 1e6, m("failures")))
PY
