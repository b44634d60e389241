# heaptape tests -- Python allocations with known sites, counts and retained
# bytes (tests/integration/python_report.sh). Usage: known.py TAPE EXPECT.json
# [direct|record]. Line numbers are named in EXPECT (keep the markers).
import json
import sys
import threading

import heaptape
import markers

keep = []
leak = None
results = {}


def retain():
    for i in range(10000):
        keep.append("x" * 100 + str(i))  # RETAIN


def temporaries():
    n = 0
    for i in range(10000):
        s = "t" * 200 + str(i)  # TEMP
        n += len(s)
    return n


def leaky():
    global leak
    leak = [bytearray(1000) for _ in range(500)]  # LEAK


def worker(k):
    out = []
    for i in range(2000):
        out.append(bytes(300 + k))  # THREAD
    results[k] = out


def main():
    retain()
    temporaries()
    leaky()
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def line_of(marker):
    return markers.line_of(__file__, marker)


if __name__ == "__main__":
    mode = sys.argv[3] if len(sys.argv) > 3 else "direct"
    if mode == "direct":
        heaptape.start(sys.argv[1])
        assert heaptape.is_running()
    main()
    if mode == "direct":
        heaptape.stop()
        assert not heaptape.is_running()
    lst = lambda lst_: sys.getsizeof(lst_) - 56   # the list's item array
    want = {
        "file": __file__,
        "retain": {"line": line_of("RETAIN"), "func": "retain", "blocks": len(keep) + 1,
                   "bytes": sum(map(sys.getsizeof, keep)) + lst(keep)},
        "temp": {"line": line_of("TEMP"), "func": "temporaries", "blocks": 0, "bytes": 0},
        "leak": {"line": line_of("LEAK"), "func": "leaky.<locals>.<listcomp>",
                 "blocks": 2 * len(leak) + 1, "bytes": sum(map(sys.getsizeof, leak)) + lst(leak)},
        "thread": {"line": line_of("THREAD"), "func": "worker",
                   "blocks": sum(len(v) + 1 for v in results.values()),
                   "bytes": sum(sum(map(sys.getsizeof, v)) + lst(v) for v in results.values())},
    }
    with open(sys.argv[2], "w") as f:
        json.dump(want, f)
