# heaptape test -- code objects come and go at the same addresses (compiled,
# run, freed, over and over): the frame cache must forget each one, so
# every generated function's allocations carry its own line (each makes
# ~200 KB: sampled at 16 KiB, every line is drawn but once in 10^6 runs)
# (tests/integration/python_sampled.sh). Usage: codes.py TAPE OUT.json
import json
import sys

import heaptape

N = 60
keep = []
heaptape.start(sys.argv[1])
for k in range(N):
    ns = {}
    src = "\n" * k + "def f():\n    return [('%d' % i) * 6 for i in range(3000)]\n"
    exec(compile(src, "gen.py", "exec"), ns)
    keep.append(ns["f"]())
    del ns
heaptape.stop()
json.dump({"lines": [k + 2 for k in range(N)]}, open(sys.argv[2], "w"))
