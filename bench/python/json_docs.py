# heaptape bench -- the python3 program whose tape the replay benchmarks
# replay (bench_replay.sh, bench_locks.sh): JSON documents built, kept a
# while and dropped at random. Arguments: rounds (40), documents kept (8).
import json, random, sys
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
keep = int(sys.argv[2]) if len(sys.argv) > 2 else 8
random.seed(1)
docs = []
for r in range(rounds):
    d = {"id%d" % i: {"name": "x" * random.randint(1, 200), "tags": list(range(i % 13))}
         for i in range(2000)}
    docs.append(json.dumps(d))
    if len(docs) > keep: docs.pop(random.randrange(len(docs)))
print(sum(len(s) for s in docs))
