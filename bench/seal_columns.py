#!/usr/bin/env python3
# heaptape bench -- bytes each column of a sealed tape (version 7 or 8) takes, and
# each packet kind: where a sealed tape's bytes go (docs/FORMAT.md, "Sealed
# tapes"). usage: python3 bench/seal_columns.py TAPE
import struct
import sys

COLS = "TYPE KIND SEQ TIME TID SIZE WEIGHT ALIGN STACK ADDR BACK BLOB BSTACK BSIZE BWEIGHT BTID BTIME BOP BADDR".split()
KINDS = {2: "DICT", 4: "META", 5: "STACKS", 6: "SEVENTS", 7: "INDEX", 8: "AGG", 9: "MODULES", 10: "ACCESS",
         11: "SNAPS"}


def uleb(d, i):
    v = s = 0
    while True:
        b = d[i]
        i += 1
        v |= (b & 0x7F) << s
        s += 7
        if b < 0x80:
            return v, i


def main(path):
    d = open(path, "rb").read()
    if d[:8] != b"HEAPTAPE" or d[8] < 7 or not (d[10] & 2):
        sys.exit("seal_columns: %s: not a sealed tape of version 7 or later" % path)
    off = 16 + struct.unpack_from("<I", d, 12)[0] + 4
    ncol = 19 if d[8] >= 8 else 16
    col = [0] * len(COLS)
    kind = {}
    while off + 56 <= len(d) and d[off:off + 4] == b"HTPK":
        k, blen = d[off + 4], struct.unpack_from("<I", d, off + 8)[0]
        kind[k] = kind.get(k, 0) + 56 + blen
        if k == 6:  # a0 s0 (len zlen bytes){16}; version 8: a0 s0 f0 (...){19}
            b, i = d[off + 56:off + 56 + blen], 0
            _, i = uleb(b, i)
            _, i = uleb(b, i)
            if d[8] >= 8:
                _, i = uleb(b, i)
            for c in range(ncol):
                n, i = uleb(b, i)
                z, i = uleb(b, i)
                col[c] += z or n
                i += z or n
        off += 56 + blen
    print("%s: %d bytes" % (path, len(d)))
    for k in sorted(kind):
        print("  %-8s %10d" % (KINDS.get(k, str(k)), kind[k]))
    for c, n in enumerate(col):
        if n:
            print("    %-8s %8d" % (COLS[c], n))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: seal_columns.py TAPE")
    main(sys.argv[1])
