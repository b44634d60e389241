# heaptape test -- a sampled session over pymalloc (tests/integration/
# python_sampled.sh): the object and mem domains keep pymalloc's own free
# there, so every block the sampler records must reach the raw domain's
# hook when freed. Temporaries at one line (objects, and lists grown by
# realloc) are all freed: nothing may stay live there; blocks retained at
# another line are estimated; pymalloc's count of its blocks
# (sys.getallocatedblocks) comes back where it was. Usage: split.py TAPE OUT.json
import json
import sys

import heaptape

keep = []


def churn(n):
    for i in range(n):
        t = ["%07d" % i * 3, (i, str(i))]  # CHURN
        t += [i] * (i % 40)  # GROW
        del t


def retain(n):
    keep.append(["%07d" % i * 12 for i in range(n)])  # RETAIN


def line(tag):
    return next(i for i, l in enumerate(open(__file__), 1) if l.rstrip().endswith("# " + tag))


heaptape.start(sys.argv[1])
b0 = sys.getallocatedblocks()
churn(100000)
b1 = sys.getallocatedblocks()
retain(30000)
want = sum(sys.getsizeof(s) for s in keep[0]) + sys.getsizeof(keep[0])
heaptape.stop()
json.dump({"file": __file__, "churn": line("CHURN"), "grow": line("GROW"),
           "retain": line("RETAIN"), "bytes": want, "blocks": b1 - b0},
          open(sys.argv[2], "w"))
