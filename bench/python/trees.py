# heaptape bench -- allocation-heavy Python: binary trees of tuples, strings
# and dicts (bench/bench_python.sh). Usage: trees.py DEPTH
import sys


def make(d):
    return (make(d - 1), make(d - 1)) if d else (None, None)


def check(t):
    return 1 + check(t[0]) + check(t[1]) if t[0] else 1


def main(n):
    total = 0
    for d in range(4, n + 1, 2):
        for _ in range(2 ** (n - d)):
            total += check(make(d))
        names = {"k%d" % i: str(i) * 3 for i in range(2 ** d)}
        total += len(names)
    print(total)


main(int(sys.argv[1]) if len(sys.argv) > 1 else 16)
