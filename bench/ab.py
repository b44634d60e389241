#!/usr/bin/env python3
# heaptape benchmarks -- two commands timed side by side: run alternately
# (A B A B ...) so that the machine's drift hits both alike; wall and CPU
# (user + sys of the command and its children) per run, medians, and A/B as
# the ratio of the medians. Each run starts a shell (`sh -c`), which costs
# several ms on a virtual machine: `true` runs the same way in each round,
# and the net figures take its median off (what matters for commands of
# tens of ms).
# usage: python3 bench/ab.py N 'COMMAND A' 'COMMAND B'     (each run by sh -c)
# e.g.   python3 bench/ab.py 21 'build/heaptape report cxx.tape' 'heaptrack_print ht.cxx.zst'
import resource, statistics, subprocess, sys, time

def run(cmd):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(['sh', '-c', cmd], stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)

if len(sys.argv) != 4 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 1:
    sys.exit("usage: python3 bench/ab.py N 'COMMAND A' 'COMMAND B'")
n, cmds = int(sys.argv[1]), sys.argv[2:]
cmds.append('true')
runs = {0: [], 1: [], 2: []}
for _ in range(n):
    for k in (0, 1, 2):
        runs[k].append(run(cmds[k]))
med = [(statistics.median(w for w, _ in runs[k]), statistics.median(c for _, c in runs[k]))
       for k in (0, 1, 2)]
net = [(max(w - med[2][0], 0.0), max(c - med[2][1], 0.0)) for w, c in med[:2]]
ratio = lambda a, b: a / b if b else 0.0
print('A: %s\nB: %s' % tuple(cmds[:2]))
print('medians of %d   wall s   cpu s   net wall   net cpu' % n)
for name, (w, c), (nw, nc) in zip('AB', med, net):
    print('%-13s %8.4f %7.3f %10.4f %9.3f' % (name, w, c, nw, nc))
print('sh -c true    %8.4f %7.3f' % med[2])
print('A/B           %8.3f %7.3f %10.3f %9.3f' % (ratio(med[0][0], med[1][0]), ratio(med[0][1], med[1][1]),
                                                  ratio(net[0][0], net[1][0]), ratio(net[0][1], net[1][1])))
