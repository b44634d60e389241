#!/bin/sh
# heaptape -- version 10 keeps the aggregate section's snapshot fields
# (HT_A_SNAPS, HT_A_SNAPN, HT_A_RSS) in SNAPS packets that only html and
# `report --at` decompress. A SNAPS packet whose body is damaged behind a
# good checksum, one out of place, or none at all: html and --at make their
# pass and answer as the journal does, the other commands keep the AGG, and
# nothing prints a word or fails.
. "$(dirname "$0")/viz_common.inc"

"$HEAPTAPE" record --journal -o "$TMP/j.tape" -- "$HT_BUILD/progs/viz_grow" 0.3 >/dev/null 2>&1
cp "$TMP/j.tape" "$TMP/s.tape"
"$HEAPTAPE" seal "$TMP/s.tape" 2>/dev/null

# The packets of a tape by kind, and the AGG's field tags (in order).
cat > "$TMP/pk.py" <<'EOF'
import struct, subprocess, sys, zlib
def packets(d):
    off = 16 + struct.unpack_from("<I", d, 12)[0] + 4
    while off + 56 <= len(d):
        k, f, _, blen, raw = struct.unpack_from("<BBHII", d, off + 4)
        yield off, k, f, blen
        off += 56 + blen
def body(d, off, f, blen):
    b = d[off + 56:off + 56 + blen]
    return subprocess.run(["zstd", "-dcq"], input=b, capture_output=True).stdout if f & 1 else b
def uleb(b, i):
    v = s = 0
    while True:
        v |= (b[i] & 127) << s; s += 7; i += 1
        if b[i - 1] < 128: return v, i
def recrc(d, off, blen):
    c = zlib.crc32(bytes(d[off + 56:off + 56 + blen]), zlib.crc32(bytes(d[off:off + 52])))
    struct.pack_into("<I", d, off + 52, c)
cmd, src = sys.argv[1], sys.argv[2]
d = bytearray(open(src, "rb").read())
if cmd == "kinds":
    print(" ".join(str(k) for _, k, _, _ in packets(d)))
elif cmd == "aggtags":
    a = b"".join(body(d, o, f, n) for o, k, f, n in packets(d) if k == 8)
    i, tags = 0, []
    while i < len(a):
        t, i = uleb(a, i); n, i = uleb(a, i); i += n; tags.append(str(t))
    print(" ".join(tags))
else:
    out = bytearray(d[:16 + struct.unpack_from("<I", d, 12)[0] + 4])
    for o, k, f, n in packets(d):
        p = bytearray(d[o:o + 56 + n])
        if k == 11 and cmd == "drop": continue
        if k == 11 and cmd == "garble":  # the body spoilt, the checksum made good
            for i in range(56 + n // 3, 56 + n // 2): p[i] ^= 0x5a
            recrc(p, 0, n)
        if k == 11 and cmd == "misplace":  # the piece's offset in the section off by one
            struct.pack_into("<Q", p, 24, struct.unpack_from("<Q", p, 24)[0] + 1)
            recrc(p, 0, n)
        out += p
    open(sys.argv[3], "wb").write(out)
EOF
kinds=$(python3 "$TMP/pk.py" kinds "$TMP/s.tape")
ok "the sealed tape has SNAPS packets (kind 11)" sh -c "echo ' $kinds ' | grep -q ' 11 '"
tags=$(python3 "$TMP/pk.py" aggtags "$TMP/s.tape")
# (11: the sites' names, version 12, before the sites)
ok "its AGG packets hold the figures without the snapshots ($tags)" [ "$tags" = "1 2 3 11 4 5 6" ]

d=$("$HEAPTAPE" stats "$TMP/j.tape" 2>/dev/null | awk '/duration/ {print $2}')
at=$(awk -v d="$d" 'BEGIN {printf "%.6f", d / 2}')
# Outputs of the commands that read the snapshots, and of those that do not
# (each tape copied to $TMP/o/tape.tape: the page and report name it).
mkdir "$TMP/o"
outs() {
  cp "$1" "$TMP/o/tape.tape"
  (cd "$TMP/o" && t=tape.tape && {
    echo "== html"; "$HEAPTAPE" html -o page.html "$t" 2>&1; cksum < page.html
    echo "== html 37"; "$HEAPTAPE" html --buckets 37 -o page.html "$t" 2>&1; cksum < page.html
    echo "== at"; "$HEAPTAPE" report --at "$at" "$t" 2>&1
    echo "== at json"; "$HEAPTAPE" report --json --at "$at" "$t" 2>&1
    echo "== report"; "$HEAPTAPE" report "$t" 2>&1
    echo "== folded"; "$HEAPTAPE" flamegraph --folded "$t" 2>&1
  })
}
outs "$TMP/j.tape" > "$TMP/j.out"
outs "$TMP/s.tape" > "$TMP/s.out"
ok "intact: html and --at as from the journal" cmp -s "$TMP/j.out" "$TMP/s.out"
# events html reads of tape $1 (HEAPTAPE_READ_LOG: "N events read of M")
reads() { HEAPTAPE_READ_LOG=1 "$HEAPTAPE" html -o "$TMP/rl.html" "$1" 2>&1 | sed -n 's/.*: \([0-9]*\) events read of.*/\1/p'; }
ok "intact: html reads its snapshots, no event ($(reads "$TMP/s.tape"))" [ "$(reads "$TMP/s.tape")" = 0 ]
for how in garble misplace drop; do
  python3 "$TMP/pk.py" $how "$TMP/s.tape" "$TMP/$how.tape"
  ok "$how: the tape differs from the sealed one" sh -c "! cmp -s \"$TMP/s.tape\" \"$TMP/$how.tape\""
  outs "$TMP/$how.tape" > "$TMP/$how.out"
  ok "$how SNAPS: every answer as from the journal, no message" cmp -s "$TMP/j.out" "$TMP/$how.out"
  ok "$how SNAPS: html makes its pass ($(reads "$TMP/$how.tape") events read)" [ "$(reads "$TMP/$how.tape")" -gt 0 ]
  ok "$how SNAPS: report still reads the AGG" sh -c \
    "\"$HEAPTAPE\" stats \"$TMP/$how.tape\" | grep -q '^  sealed  *yes: report'"
done
finish
