# heaptape tests -- a real workload for the Python module: json, re, sqlite3
# and threading, with deterministic output (tests/integration/python_misc.sh).
import json
import re
import sqlite3
import threading

docs = [json.dumps({"id": i, "name": "item%d" % i, "tags": ["t%d" % (i % 7)] * (i % 5)})
        for i in range(20000)]
parsed = [json.loads(d) for d in docs]
words = re.compile(r"item(\d+)")
total = sum(int(m.group(1)) for d in docs for m in words.finditer(d))
print("json+re", len(parsed), total)

db = sqlite3.connect(":memory:")
db.execute("create table t (id integer, name text, tags text)")
db.executemany("insert into t values (?, ?, ?)",
               ((p["id"], p["name"], ",".join(p["tags"])) for p in parsed))
print("sqlite", db.execute("select count(*), sum(length(tags)) from t").fetchone())
print("sqlite", db.execute("select tags, count(*) from t group by tags order by tags limit 3").fetchall())

out = [None] * 4


def work(k):
    acc = {}
    for p in parsed[k::4]:
        acc.setdefault(p["tags"][0] if p["tags"] else "", []).append(p["name"])
    out[k] = sorted((t, len(v)) for t, v in acc.items())


ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("threads", out)
