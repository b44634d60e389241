#!/bin/sh
# heaptape -- opening a sealed tape of version 12 reads none of its event
# blocks: the header says where they end (HT_H_BLOCKS) and INDEX lists
# them. A block is checked when it is decoded; with a wrong end or no
# INDEX the reader scans the blocks as before, and answers the same.
. "$(dirname "$0")/viz_common.inc"

"$HEAPTAPE" record -o "$TMP/s.tape" -- "$HT_BUILD/progs/rec_cxx" >/dev/null 2>&1
ok "the tape is sealed in several blocks" sh -c \
  "\"$HEAPTAPE\" stats \"$TMP/s.tape\" | grep -Eq 'packets \(([3-9]|[1-9][0-9]+) of events\)'"

# spoil.py CMD IN OUT: the second block's magic spoilt (its checksum not
# made good), the header's end of the blocks moved into the first block
# (the header's checksum made good), or the INDEX packet left out.
cat > "$TMP/spoil.py" <<'PYEOF'
import struct, sys, zlib
cmd, src, dst = sys.argv[1:4]
d = bytearray(open(src, "rb").read())
hl = 16 + struct.unpack_from("<I", d, 12)[0]
pk, off = [], hl + 4
while off + 56 <= len(d):
    k, blen = d[off + 4], struct.unpack_from("<I", d, off + 8)[0]
    pk.append((off, k, 56 + blen)); off += 56 + blen
blocks = [p for p in pk if p[1] == 6]
if cmd == "magic":
    d[blocks[1][0]] ^= 0xff
elif cmd == "end":
    i = hl - 10                       # HT_H_BLOCKS: tag 14, length 8, u64 (last field)
    assert d[i] == 14 and d[i + 1] == 8 and struct.unpack_from("<Q", d, i + 2)[0] == blocks[-1][0] + blocks[-1][2]
    struct.pack_into("<Q", d, i + 2, blocks[0][0] + 100)
    struct.pack_into("<I", d, hl, zlib.crc32(bytes(d[:hl])))
elif cmd == "noindex":
    o, k, n = [p for p in pk if p[1] == 7][0]
    d = d[:o] + d[o + n:]
open(dst, "wb").write(d)
PYEOF
# answers TAPE: what the commands say of it, copied to one name (they print it)
answers() {
  mkdir -p "$TMP/a"; cp "$1" "$TMP/a/tape.tape"
  (cd "$TMP/a" && { "$HEAPTAPE" report tape.tape; "$HEAPTAPE" ops tape.tape
    "$HEAPTAPE" lifetimes --json tape.tape; "$HEAPTAPE" stats tape.tape; } 2>&1 | grep -v '^  file ')
}
answers "$TMP/s.tape" > "$TMP/whole.out"
ok "the whole tape reads without a word" sh -c "! grep -q -e warning -e damaged '$TMP/whole.out' ||
  grep -q '^  damaged          0 packets, 0 bytes' '$TMP/whole.out'"
for c in end noindex; do
  python3 "$TMP/spoil.py" $c "$TMP/s.tape" "$TMP/$c.tape"
  answers "$TMP/$c.tape" > "$TMP/$c.out"
  ok "$c: the blocks scanned instead, the same answers" cmp -s "$TMP/whole.out" "$TMP/$c.out"
done
python3 "$TMP/spoil.py" magic "$TMP/s.tape" "$TMP/magic.tape"
"$HEAPTAPE" report "$TMP/magic.tape" > "$TMP/magic.report" 2>"$TMP/magic.err"
ok "a spoilt block: report reads only the aggregate section, never the block" sh -c \
  "[ ! -s '$TMP/magic.err' ] && \"$HEAPTAPE\" report '$TMP/s.tape' 2>/dev/null | tail -n +2 > '$TMP/r.whole' &&
   tail -n +2 '$TMP/magic.report' | cmp -s - '$TMP/r.whole' &&
   \"$HEAPTAPE\" stats '$TMP/magic.tape' | grep -q '^  damaged          0 packets'"
"$HEAPTAPE" ops "$TMP/magic.tape" > "$TMP/magic.ops" 2>"$TMP/magic.opserr"
ok "a spoilt block: ops drops it with one line naming it" sh -c \
  "[ \$(wc -l < '$TMP/magic.opserr') = 1 ] && grep -q 'block at byte' '$TMP/magic.opserr' &&
   [ \$(wc -l < '$TMP/magic.ops') -lt \$(\"$HEAPTAPE\" ops '$TMP/s.tape' | wc -l) ]"
finish
