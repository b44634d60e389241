# heaptape test -- sampled sessions one after the other in one process
# (tests/integration/python_sampled.sh): each session retains known bytes at
# one line, the second on a thread; the hooks' per-thread byte countdowns
# must restart with each session. Usage: sessions.py TAPE1 TAPE2 WANT.json
import json
import sys
import threading

import heaptape

keep = []
want = []


def retain(n):
    got = ["%07d" % i * 12 for i in range(n)]  # RETAIN
    keep.append(got)
    return sum(sys.getsizeof(s) for s in got) + sys.getsizeof(got)


line = next(i for i, l in enumerate(open(__file__), 1) if l.rstrip().endswith("# RETAIN"))
heaptape.start(sys.argv[1])
want.append(retain(30000))
heaptape.stop()
heaptape.start(sys.argv[2])
box = []
t = threading.Thread(target=lambda: box.append(retain(30000)))
t.start()
t.join()
want.append(box[0])
heaptape.stop()
json.dump({"file": __file__, "line": line, "bytes": want}, open(sys.argv[3], "w"))
