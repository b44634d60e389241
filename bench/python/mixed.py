# heaptape bench -- a mixed workload: json, re, sqlite3 and threads
# (bench/bench_python.sh). Usage: mixed.py N
import json
import re
import sqlite3
import sys
import threading

n = int(sys.argv[1]) if len(sys.argv) > 1 else 60000
docs = [json.dumps({"id": i, "name": "item%d" % i, "tags": ["t%d" % (i % 7)] * (i % 5)})
        for i in range(n)]
parsed = [json.loads(d) for d in docs]
words = re.compile(r"item(\d+)")
total = sum(int(m.group(1)) for d in docs for m in words.finditer(d))
db = sqlite3.connect(":memory:")
db.execute("create table t (id integer, name text, tags text)")
db.executemany("insert into t values (?, ?, ?)",
               ((p["id"], p["name"], ",".join(p["tags"])) for p in parsed))
rows = db.execute("select tags, count(*) from t group by tags").fetchall()
out = [None] * 4


def work(k):
    acc = {}
    for p in parsed[k::4]:
        acc.setdefault(p["tags"][0] if p["tags"] else "", []).append(p["name"])
    out[k] = len(acc)


ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(total, len(rows), out)
