#!/usr/bin/env python3
"""heaptape -- per-site bytes read and written: heaptape access --json against
valgrind --tool=dhat's JSON (dhat.out.PID) of the same program (issue 15).

usage: dhat_compare.py DHAT_JSON HEAPTAPE_ACCESS_JSON [--check TOL] [--min BYTES]

Sites are matched by what both tools agree on exactly, the blocks and bytes
allocated there: DHAT's program points are summed by their first frame past
the allocator (heaptape's site key), then paired with heaptape's sites of the
same (blocks, bytes). Unpaired: sites reached through realloc (DHAT keeps a
reallocated block at its first allocation's point, heaptape at the realloc's
caller) and sites whose signature is not unique. Prints a markdown table;
with --check, exits 1 when the totals, a paired site's bytes read or
written where DHAT counts at least --min bytes (10000), or the unpaired
sites' together, differ by more than TOL (a fraction): below that a few bytes are percents (a program's
environment, which `heaptape record` lengthens, is read into heap blocks).
"""
import collections
import json
import re
import sys

ALLOCATOR = {"malloc", "calloc", "realloc", "reallocarray", "free", "memalign",
             "posix_memalign", "aligned_alloc", "valloc", "pvalloc", "strdup",
             "strndup", "__strdup", "__strndup", "__libc_malloc", "__libc_calloc",
             "__libc_realloc"}


def dhat_groups(dh):
    """(blocks, bytes, read, written) by the first frame past the allocator."""
    groups = collections.defaultdict(lambda: [0, 0, 0, 0])
    for pp in dh["pps"]:
        key = None
        for fi in pp["fs"]:
            frame = dh["ftbl"][fi]
            m = re.match(r"0x[0-9A-Fa-f]+: (.*?) \(", frame)
            fn = m.group(1) if m else frame
            if fn in ALLOCATOR or fn.startswith(("operator new", "operator delete")):
                continue
            key = frame
            break
        g = groups[key]
        g[0] += pp["tbk"]; g[1] += pp["tb"]; g[2] += pp.get("rb", 0); g[3] += pp.get("wb", 0)
    return groups


def ratio(a, b):
    return a / b if b else (1.0 if a == 0 else float("inf"))


def main(argv):
    args = argv[1:]
    tol = None
    least = 10000
    if "--check" in args:
        i = args.index("--check"); tol = float(args[i + 1]); del args[i:i + 2]
    if "--min" in args:
        i = args.index("--min"); least = int(args[i + 1]); del args[i:i + 2]
    dh = json.load(open(args[0]))
    ht = json.load(open(args[1]))
    groups = dhat_groups(dh)
    by_sig = collections.defaultdict(list)
    for g in groups.values():
        by_sig[(g[0], g[1])].append(g)
    ht_sigs = collections.Counter((s["blocks"], s["bytes"]) for s in ht["sites"])
    bad = []
    rows = []
    for s in ht["sites"]:
        sig = (s["blocks"], s["bytes"])
        pair = by_sig.get(sig, [])
        d = pair[0] if len(pair) == 1 and ht_sigs[sig] == 1 else None
        rows.append((s, d))
    rows.sort(key=lambda r: -(r[0]["bytes_read"] + r[0]["bytes_written"]))
    print("| site (heaptape) | blocks | read: heaptape | DHAT | ratio | written: heaptape | DHAT | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for s, d in rows:
        hr, hw = s["bytes_read"], s["bytes_written"]
        if d is None:
            print(f"| {s['site']} | {s['blocks']} | {hr} | (unpaired) | | {hw} | | |")
            continue
        rr, rw = ratio(hr, d[2]), ratio(hw, d[3])
        print(f"| {s['site']} | {s['blocks']} | {hr} | {d[2]} | {rr:.4f} | {hw} | {d[3]} | {rw:.4f} |")
        if tol is not None and d[2] >= least and abs(rr - 1) > tol:
            bad.append(f"site {s['site']}: bytes read {hr} / {d[2]} = {rr:.4f}")
        if tol is not None and d[3] >= least and abs(rw - 1) > tol:
            bad.append(f"site {s['site']}: bytes written {hw} / {d[3]} = {rw:.4f}")
    # The unpaired ones together: realloc moves bytes between sites, not out.
    used = {id(d) for _, d in rows if d is not None}
    ur = sum(s["bytes_read"] for s, d in rows if d is None)
    uw = sum(s["bytes_written"] for s, d in rows if d is None)
    dur = sum(g[2] for g in groups.values() if id(g) not in used)
    duw = sum(g[3] for g in groups.values() if id(g) not in used)
    print(f"| (the unpaired sites together) | | {ur} | {dur} | {ratio(ur, dur):.4f} | {uw} | {duw} "
          f"| {ratio(uw, duw):.4f} |")
    tr = sum(s["bytes_read"] for s in ht["sites"]); tw = sum(s["bytes_written"] for s in ht["sites"])
    dr = sum(g[2] for g in groups.values()); dw = sum(g[3] for g in groups.values())
    paired = sum(1 for _, d in rows if d is not None)
    print(f"| **total** ({paired} of {len(rows)} sites paired) | | {tr} | {dr} | {ratio(tr, dr):.4f} "
          f"| {tw} | {dw} | {ratio(tw, dw):.4f} |")
    if tol is not None:
        if (dur >= least and abs(ratio(ur, dur) - 1) > tol) or (duw >= least and abs(ratio(uw, duw) - 1) > tol):
            bad.append(f"unpaired sites: read {ratio(ur, dur):.4f}, written {ratio(uw, duw):.4f}")
        if abs(ratio(tr, dr) - 1) > tol or abs(ratio(tw, dw) - 1) > tol:
            bad.append(f"totals: read {ratio(tr, dr):.4f}, written {ratio(tw, dw):.4f}")
        for b in bad:
            print("heaptape: differs from DHAT by more than %g: %s" % (tol, b), file=sys.stderr)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
