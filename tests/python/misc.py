# heaptape tests -- asyncio tasks, generators and fork under the module, with
# tracemalloc (25 frames) watching the same allocations
# (tests/integration/python_misc.sh). Usage: misc.py TAPE OUT.json
import asyncio
import json
import os
import sys
import tracemalloc

import heaptape
import markers

results = []
gens = []


async def producer(n):
    buf = []
    for i in range(n):
        buf.append("a" * 40 + str(i))  # ASYNC
        if i % 100 == 0:
            await asyncio.sleep(0)
    return buf


async def tasks():
    return await asyncio.gather(*(producer(3000 + k) for k in range(3)))


def gen(n):
    for i in range(n):
        yield "g" * 30 + str(i)  # GEN


def consume():
    gens.append(list(gen(5000)))  # CONSUME


def forked():
    pid = os.fork()
    if pid == 0:
        junk = ["c" * 60 + str(i) for i in range(5000)]  # CHILD
        os._exit(0 if len(junk) == 5000 and not heaptape.is_running() else 3)
    return os.waitpid(pid, 0)[1]


def line_of(marker):
    return markers.line_of(__file__, marker)


if __name__ == "__main__":
    tracemalloc.start(25)
    heaptape.start(sys.argv[1])
    results.extend(asyncio.run(tasks()))
    consume()
    status = forked()
    heaptape.stop()
    snap = tracemalloc.take_snapshot()
    tracemalloc.stop()
    me = os.path.abspath(__file__)
    # tracemalloc's retained blocks by traceback, innermost frame first
    tm = {}
    for st in snap.filter_traces([tracemalloc.Filter(True, me)]).statistics("traceback"):
        frames = [(f.filename, f.lineno) for f in reversed(st.traceback)]
        if frames[0][0] != me:
            continue
        tm.setdefault(json.dumps(frames), [0, 0])
        tm[json.dumps(frames)][0] += st.size
        tm[json.dumps(frames)][1] += st.count
    out = {
        "file": me, "fork_status": status,
        "async": {"line": line_of("ASYNC"), "func": "producer",
                  "blocks": sum(len(b) + 1 for b in results),
                  "bytes": sum(sum(map(sys.getsizeof, b)) + sys.getsizeof(b) - 56 for b in results)},
        "gen": {"line": line_of("GEN"), "func": "gen", "caller": line_of("CONSUME")},
        "child": line_of("CHILD"),
        "tracemalloc": sorted(([json.loads(k)] + v for k, v in tm.items()), key=lambda r: -r[1]),
    }
    with open(sys.argv[2], "w") as f:
        json.dump(out, f)
