#!/bin/sh
# heaptape tests -- `heaptape heapmap --animate`: the heap map's frames as one
# animated PNG (APNG). Its chunks are checked one by one (CRCs, acTL frame
# count, fcTL/fdAT sequence numbers, the first frame in IDAT) and every frame
# decodes to exactly the pixels of the matching --frames PNG.
. "$(dirname "$0")/alloc_common.inc"
K=$T/known.tape S=$T/sql.tape
rec "$K" "$PROGS/alloc_known"
rec "$S" sqlite3 :memory: 'create table t(a,b); with recursive c(x) as (select 1 union all select x+1 from c where x<3000) insert into t select x, hex(randomblob(x%200)) from c; create index i on t(b); select count(*) from t;'

# apng.py FILE.png W H N FPS [FRAMEDIR]: the APNG's structure, and its frames
# against FRAMEDIR/frame_NNNNN.png; prints "N frames".
cat >"$T/apng.py" <<'PY'
import struct, sys, zlib, os
def chunks(path):
    d = open(path, 'rb').read()
    assert d[:8] == b'\x89PNG\r\n\x1a\n', 'signature'
    i, out = 8, []
    while i < len(d):
        n, = struct.unpack('>I', d[i:i+4]); t = d[i+4:i+8]; body = d[i+8:i+8+n]
        crc, = struct.unpack('>I', d[i+8+n:i+12+n])
        assert zlib.crc32(t + body) & 0xffffffff == crc, 'crc of %r' % t
        out.append((t, body)); i += 12 + n
    assert i == len(d), 'trailing bytes'
    return out
def pixels(w, h, data):
    raw = zlib.decompress(data); stride = w * 3; prev = bytearray(stride); rows = []; p = 0
    assert len(raw) == h * (stride + 1), 'frame data size'
    for y in range(h):
        f = raw[p]; line = bytearray(raw[p+1:p+1+stride]); p += 1 + stride
        assert f <= 4, 'filter'
        for x in range(stride):
            a = line[x-3] if x >= 3 else 0; b = prev[x]; c = prev[x-3] if x >= 3 else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line)); prev = line
    return b''.join(rows)
path, W, H, N, FPS = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
c = chunks(path)
types = [t for t, _ in c]
assert types[0] == b'IHDR' and types[-1] == b'IEND' and types[1] == b'acTL', types[:3]
w, h, depth, ctype, comp, filt, inter = struct.unpack('>IIBBBBB', c[0][1])
assert (w, h, depth, ctype, inter) == (W, H, 8, 2, 0), (w, h, depth, ctype)
nf, plays = struct.unpack('>II', c[1][1])
assert nf == N and plays == 0, (nf, plays)
frames, seq, cur = [], 0, None
for t, b in c[2:-1]:
    if t == b'fcTL':
        s, fw, fh, x, y, dn, dd, dis, bl = struct.unpack('>IIIIIHHBB', b)
        assert s == seq and (fw, fh, x, y) == (W, H, 0, 0) and dis <= 2 and bl <= 1, (s, seq)
        assert dd and abs(dn / dd - 1.0 / FPS) < 0.002, (dn, dd)
        seq += 1; cur = bytearray(); frames.append(cur)
    elif t == b'IDAT':
        assert len(frames) == 1, 'IDAT belongs to the first frame only'
        cur += b
    elif t == b'fdAT':
        assert len(frames) > 1, 'fdAT in the first frame'
        s, = struct.unpack('>I', b[:4]); assert s == seq, (s, seq); seq += 1
        cur += b[4:]
    else:
        raise AssertionError('unexpected chunk %r' % t)
assert len(frames) == N, (len(frames), N)
px = [pixels(W, H, bytes(f)) for f in frames]
assert len(set(px)) > 1, 'all frames alike'
if len(sys.argv) > 6:
    for k in range(N):
        ref = chunks(os.path.join(sys.argv[6], 'frame_%05d.png' % k))
        idat = b''.join(b for t, b in ref if t == b'IDAT')
        assert pixels(W, H, idat) == px[k], 'frame %d differs from its PNG' % k
print(N, 'frames')
PY

"$HEAPTAPE" heapmap "$K" --animate "$T/a.png" --frames "$T/fr" --nframes 6 --frame-size 64x48 >"$T/a.txt" 2>&1
ok "animate: exit 0" $?
out=$(py "$T/apng.py" "$T/a.png" 64 48 6 10 "$T/fr" 2>&1); ok "animate: valid APNG, 6 frames, each the pixels of its --frames PNG ($out)" $?
out=$(py "$T/pngcheck.py" "$T/a.png" 2>&1); ok "animate: a plain PNG reader sees the first frame ($out)" $?

# A real program: sqlite3, default frame count and size, --fps, with the map.
"$HEAPTAPE" heapmap "$S" -o "$T/s.png" --animate "$T/s.apng" --fps 25 >/dev/null 2>&1
ok "animate sqlite3: exit 0" $?
out=$(py "$T/apng.py" "$T/s.apng" 512 512 50 25 2>&1); ok "animate sqlite3: valid APNG, 50 frames of 512x512 at 25 fps ($out)" $?
py "$T/pngcheck.py" "$T/s.png" >/dev/null 2>&1; ok "animate sqlite3: the map is still written" $?

# Errors: one line naming the problem.
"$HEAPTAPE" heapmap "$K" --animate "$T/nodir/a.png" >/dev/null 2>"$T/e.err"; r=$?
[ $r = 1 ] && [ "$(wc -l <"$T/e.err")" = 1 ] && grep -q "^heaptape: $T/nodir/a.png: cannot create" "$T/e.err"
ok "animate: unwritable file, one line, exit 1 (exit $r)" $?
"$HEAPTAPE" heapmap "$K" --animate "$T/b.png" --fps 0 >/dev/null 2>"$T/e.err"; r=$?
[ $r = 2 ] && head -n1 "$T/e.err" | grep -q "^heaptape: heapmap: --fps takes a whole number from 1 to 100, not '0'"
ok "animate: --fps 0 refused, exit 2 (exit $r)" $?
finish
