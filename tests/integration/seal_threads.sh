#!/bin/sh
# heaptape -- a sealed tape's blocks decoded ahead on a second thread, or on
# two (HEAPTAPE_READ_THREADS=3), come out exactly as one thread decodes them
# (HEAPTAPE_READ_THREADS=1): on tapes
# of several blocks (python3 loading modules as it runs, 800 marks of 3000
# bytes, 8 threads exchanging blocks), `dump` (every event: sequence number, time, fields,
# bytes, segments), ops, lifetimes, heapmap (two passes over the tape),
# report --at (a pass from the middle) and stats are the same; and so on
# copies whose second block (decoded by the second of two decoding
# threads) or third block (the first thread's) has a damaged column
# (checksum made right again): the block is dropped and counted once; and
# on a copy cut in the middle of a block (its summary lost, every block
# is dropped as damaged, on both threads).
. "$(dirname "$0")/viz_common.inc"

rec() { n=$1; shift; "$HEAPTAPE" record -o "$TMP/$n.tape" "$@" >/dev/null 2>&1; }
rec marks -- "$HT_BUILD/progs/seal_marks"
rec threads -- "$HT_BUILD/progs/rec_stress" 20000
[ -x /usr/bin/python3 ] && PYTHONMALLOC=malloc rec python -- /usr/bin/python3 -c '
import json, decimal
x = [json.dumps({"a": i, "b": [i] * (i % 7)}) for i in range(60000)]
del x[::3]
y = [decimal.Decimal(i) / 7 for i in range(20000)]'

# A copy of $1 whose $3th SEVENTS packet (kind 6) has a damaged TYPE
# column (a zstd frame's magic, or a stored column's middle byte made an
# unknown type), its CRC32 recomputed: into $2.
damage() {
  python3 - "$1" "$2" "$3" <<'PY'
import struct, sys, zlib
d = bytearray(open(sys.argv[1], "rb").read())
def uleb(p):
    v = s = 0
    while True:
        b = d[p]; p += 1; v |= (b & 0x7f) << s; s += 7
        if b < 0x80: return v, p
off, seen = d.find(b"HTPK"), 0
while off >= 0:
    blen = struct.unpack_from("<I", d, off + 8)[0]
    if d[off + 4] == 6:
        seen += 1
        if seen == int(sys.argv[3]):
            p = off + 56
            for _ in range(3): _, p = uleb(p)      # a0 s0 f0
            n, p = uleb(p); z, p = uleb(p)         # TYPE: len, zlen
            if z: d[p] ^= 0xff
            else: d[p + n // 2] = 0x1f
            crc = zlib.crc32(bytes(d[off:off + 52]) + bytes(d[off + 56:off + 56 + blen]))
            struct.pack_into("<I", d, off + 52, crc)
            break
    off = d.find(b"HTPK", off + 56 + blen)
open(sys.argv[2], "wb").write(d)
PY
}
if [ -f "$TMP/python.tape" ]; then
  damage "$TMP/python.tape" "$TMP/pydamaged.tape" 2
  damage "$TMP/python.tape" "$TMP/pydamaged3.tape" 3
  size=$(wc -c < "$TMP/python.tape")
  head -c $((size * 3 / 5)) "$TMP/python.tape" > "$TMP/pycut.tape"
fi

# Outputs of every reader of tape $1 into $2 (the environment decides how).
analyse() {
  {
    echo "== dump"; "$HEAPTAPE" dump "$1" 2>&1
    echo "== ops"; "$HEAPTAPE" ops "$1" 2>&1
    echo "== lifetimes"; "$HEAPTAPE" lifetimes --by-site "$1" 2>&1
    a_d=$("$HEAPTAPE" stats "$1" 2>/dev/null | awk '/duration/ {print $2}')
    a_t=$(awk -v d="$a_d" 'BEGIN {printf "%.6f", d / 2}')
    echo "== report --at $a_t"; "$HEAPTAPE" report --at "$a_t" "$1" 2>&1
    echo "== stats"; "$HEAPTAPE" stats "$1" 2>&1
    "$HEAPTAPE" heapmap -o "$2.png" "$1" 2>&1 | grep -v "$2"
  } >"$2" 2>&1
}

for n in marks threads python pydamaged pydamaged3 pycut; do
  t="$TMP/$n.tape"
  [ -f "$t" ] || continue
  blocks=$("$HEAPTAPE" stats "$t" 2>/dev/null | sed -n 's/.*packets (\([0-9]*\) of events).*/\1/p')
  ok "$n: sealed in several blocks ($blocks)" [ "${blocks:-0}" -ge 2 ]
  HEAPTAPE_READ_THREADS=1 analyse "$t" "$TMP/$n.one"
  HEAPTAPE_READ_THREADS=2 analyse "$t" "$TMP/$n.two"
  HEAPTAPE_READ_THREADS=3 analyse "$t" "$TMP/$n.three"
  ok "$n: every event and output as one thread decodes them (one decoding thread)" \
    cmp -s "$TMP/$n.one" "$TMP/$n.two"
  ok "$n: every event and output as one thread decodes them (two decoding threads)" \
    cmp -s "$TMP/$n.one" "$TMP/$n.three"
  [ $n = pycut ] && continue
  ok "$n: the same heap map" cmp -s "$TMP/$n.one.png" "$TMP/$n.two.png"
  ok "$n: the same heap map (two decoding threads)" cmp -s "$TMP/$n.one.png" "$TMP/$n.three.png"
  ok "$n: events delivered" [ "$(grep -c ' ALLOC ' "$TMP/$n.three")" -gt 100 ]
done
for n in pydamaged pydamaged3; do
  [ -f "$TMP/$n.tape" ] || continue
  ok "$n: damaged block counted once, as damage of the sealed block" \
    grep -q "corrupt .* in sealed block at byte" "$TMP/$n.three"
  ok "$n: fewer events than the whole tape's" \
    [ "$(grep -c ' ALLOC ' "$TMP/$n.three")" -lt "$(grep -c ' ALLOC ' "$TMP/python.three")" ]
done
if [ -f "$TMP/pycut.tape" ]; then
  ok "pycut: its blocks counted as damaged, the cut as truncated" \
    grep -q "truncated: .* bytes after the last whole packet lost; [0-9]* damaged packets" \
    "$TMP/pycut.three"
fi
finish
