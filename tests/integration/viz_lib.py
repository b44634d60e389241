#!/usr/bin/env python3
# heaptape -- helpers of the viz_*.sh tests: pprof totals through go tool
# pprof, report JSON, PNG colour counts, embedded HTML/SVG data.
import json, os, re, struct, subprocess, sys, zlib

HT = os.environ.get("HEAPTAPE", "build/heaptape")

def report(tape, *args):
    """heaptape report --json TAPE ARGS as a dict."""
    out = subprocess.run([HT, "report", "--json", *args, tape], capture_output=True, text=True)
    return json.loads(out.stdout)

def pprof_top_total(prof, index):
    """Total of one sample type as go tool pprof -top prints it."""
    env = dict(os.environ, HOME=os.environ.get("TMPDIR", "/tmp"), PPROF_TMPDIR=os.environ.get("TMPDIR", "/tmp"))
    unit = ["-unit=B"] if index.endswith("space") else []
    out = subprocess.run(["go", "tool", "pprof", "-top", "-sample_index=" + index, *unit, prof],
                         capture_output=True, text=True, env=env)
    m = re.search(r"Total samples = (\d+)B?\s", out.stdout + out.stderr)
    if not m and "Total samples" not in out.stdout:
        # An empty profile prints no total.
        if out.returncode == 0: return 0
        raise SystemExit("go tool pprof failed on %s: %s" % (prof, out.stderr.strip()[:300]))
    return int(m.group(1))

def pprof_totals(prof):
    """The four totals of a heaptape profile."""
    return {k: pprof_top_total(prof, k) for k in
            ("alloc_objects", "alloc_space", "inuse_objects", "inuse_space")}

def png_colours(path, limit=100000):
    """Number of distinct colours of a PNG (8-bit RGB or RGBA)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            bpp = {2: 3, 6: 4}[ctype]
        elif typ == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    colours = set()
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride): line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            for i in range(stride): line[i] = (line[i] + prev[i]) & 255
        elif f == 3:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((a + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]; c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        if y % 4 == 0:
            for x in range(0, stride, bpp * 2):
                colours.add(bytes(line[x:x + 3]))
        prev = line
        if len(colours) > limit: break
    return len(colours)

def html_data(path):
    """The JSON block of a heaptape HTML report."""
    s = open(path, encoding="utf-8").read()
    m = re.search(r'<script id="ht-data" type="application/json">(.*?)</script>', s, re.S)
    return json.loads(m.group(1))

if __name__ == "__main__":
    what = sys.argv[1]
    if what == "pprof":
        print(json.dumps(pprof_totals(sys.argv[2])))
    elif what == "png":
        print(png_colours(sys.argv[2]))
