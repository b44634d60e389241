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
    colours = set()
    for y, line, bpp in png_rows(path):
        if y % 4 == 0:
            for x in range(0, len(line), bpp * 2):
                colours.add(bytes(line[x:x + 3]))
        if len(colours) > limit: break
    return len(colours)

def png_rows(path):
    """(y, row bytes, bytes per pixel) of each row of a PNG (8-bit RGB or RGBA)."""
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
        yield y, line, bpp
        prev = line

def heapmap_check(png, legend):
    """Labels and legend of a `heaptape heapmap` picture: ink in the title,
    the left and bottom axes, and beside every legend swatch; each swatch a
    site colour the text legend lists. Returns a list of failures."""
    INK, PAPER, GRID = (0x20, 0x20, 0x20), (0xff, 0xff, 0xff), (0x90, 0x90, 0x90)
    sites = {tuple(bytes.fromhex(l.split()[0][1:])) for l in open(legend) if l.startswith("  #")}
    rows = {y: [tuple(line[x:x + 3]) for x in range(0, len(line), bpp)] for y, line, bpp in png_rows(png)}
    h, w = len(rows), len(rows[0])
    # dark pixels (glyphs are drawn with grey edges)
    ink = lambda x0, x1, y0, y1: sum(max(rows[y][x]) < 0x80 for y in range(y0, y1) for x in range(x0, x1))
    bad = []
    if rows[0][0] != PAPER or rows[h - 1][w - 1] != PAPER: return ["no paper around the plot"]
    if ink(0, w, 0, 20) < 50: bad.append("no title")
    if ink(0, 75, 20, h - 40) < 100: bad.append("no y tick labels")
    if ink(80, w, h - 36, h) < 100: bad.append("no x tick labels or axis title")
    # the legend: the column right of the plot, swatches of 10x10
    plot_right = max(x for x in range(w) if rows[h // 2][x] not in (INK, PAPER, GRID) and x < w * 3 // 4)
    swatches = set()
    for y in range(24, h - 40):
        for x in range(plot_right + 2, w - 10):
            c = rows[y][x]
            if c not in (INK, PAPER, GRID) and all(rows[y][x + k] == c for k in range(10)):
                swatches.add(c)
                break
    if len(swatches) < 2: bad.append("no legend swatches (%d)" % len(swatches))
    stray = swatches - sites
    if stray: bad.append("swatches not in the text legend: %s" % sorted(stray)[:3])
    if ink(plot_right + 12, w, 24, h - 40) < 60 * len(swatches): bad.append("no legend text")
    return bad

def html_data(path):
    """The JSON block of a heaptape HTML report."""
    s = open(path, encoding="utf-8").read()
    m = re.search(r'<script id="ht-data" type="application/json">(.*?)</script>', s, re.S)
    return json.loads(m.group(1))

def _nums(attr):
    return [int(x) for x in attr.split(",")] if attr else []

def _round_ticks(labels):
    """Whether axis labels "N unit" are 0, s, 2s, ... with s 1, 2 or 5 times a power of ten."""
    v = [float(l.split()[0]) for l in labels]
    if len(v) < 2 or v[0] != 0: return False
    st = v[1]
    m = st / 10 ** __import__("math").floor(__import__("math").log10(st))
    return all(abs(v[i] - i * st) < st * 1e-6 for i in range(len(v))) and any(abs(m - k) < 1e-6 for k in (1, 2, 5))

def page_checks(html, dom, rep, stats, view=None):
    """Figures of a rendered heaptape page against report --json and stats --json;
    returns a list of failures."""
    d, s = html_data(html), json.load(open(rep))["summary"]
    st, page = json.load(open(stats)), open(dom, encoding="utf-8").read()
    bad = []
    def want(name, got, exp):
        if got != exp: bad.append("%s: page %r, report %r" % (name, got, exp))
    cols = [s["allocs"], s["bytes"], s["peak"], s["leaked"], s["temporary"]]
    # the embedded data: size histogram = stats, calls and temporaries over time end at the totals
    hist = {0 if e["lo"] == 0 else e["lo"].bit_length(): e["count"] for e in st["sizes"]}
    want("size histogram", {k: v for k, v in enumerate(d["hist"]) if v}, hist)
    want("calls over time, last", d["cum"]["allocs"]["total"][-1], s["allocs"])
    want("temporaries over time, last", d["cum"]["temp"]["total"][-1], s["temporary"])
    for k, c in (("allocs", 2), ("temp", 7)):
        for L, v in zip(d["cum"][k]["locs"], d["cum"][k]["v"]):
            want("%s of location %d" % (k, L), v[-1], sum(x[c] for x in d["sites"] if x[1] == L))
            want("%s of location %d never falls" % (k, L), sorted(v), v)
    rss = d["rss"]
    want("RSS sample times in order", rss[0::2], sorted(rss[0::2]))
    # the rendered page
    want("no script errors", '<div id="errors"></div>' in page, True)
    want("no sideways scroll", 'data-overflow="no"' in page, True)
    m = re.search(r'<table id="tree" data-view="(\w+)" data-sum="([0-9,]*)"', page)
    if view != "callers":
        want("call tree sums (%s)" % (m and m.group(1)), m and _nums(m.group(2)), cols)
    else:
        m = re.search(r'<table id="tree" data-view="callers"', page)
        want("caller/callee view drawn", bool(m), True)
        for r in re.findall(r'<tr[^>]*data-v="([0-9,]+)"', page.split('<table id="tree"', 1)[1].split("</table>")[0]):
            if any(a > b for a, b in zip(_nums(r), cols)): bad.append("callers row over the total: " + r)
    want("consumed chart drawn", page.count("<polygon", page.find('id="consumed"'), page.find('id="callsch"')) > 0, True)
    cons = page.split('<svg id="consumed"', 1)[1].split("</svg>", 1)[0]
    legend = re.findall(r'<text x="[^"]*" y="[^"]*" class="ax">([^<]*)<title>([^<]*)</title>', cons)
    want("consumed legend drawn", len(legend) > 1, True)
    want("consumed legend: names without folders (whole on hover)",
         [l for l, t in legend if "/" in l.rsplit("  ", 1)[0]], [])
    for sid, tot in (("callsch", s["allocs"]), ("tempch", s["temporary"])):
        m = re.search(r'<svg id="%s"[^>]*data-total="(\d+)"' % sid, page)
        want(sid + " total", m and int(m.group(1)), tot)
    m = re.search(r'<svg id="sizes"[^>]*data-total="(\d+)"', page)
    want("size histogram total", m and int(m.group(1)), sum(e["count"] for e in st["sizes"]))
    tl = page.split('<svg id="tl"', 1)[1].split("</svg>", 1)[0]
    want("RSS drawn as its samples", re.findall(r'<circle[^>]*data-t="(\d+)"', tl), [str(t) for t in rss[0::2]])
    want("RSS not an interpolated line", re.search(r'<polyline[^>]*class="tl-rss"', tl), None)
    hp = re.search(r'<polyline points="([^"]*)"[^>]*class="tl-heap"', tl)
    top = min(float(p.split(",")[1]) for p in hp.group(1).split()) if hp else 999
    want("heap line reaches 40%% of its plot (RSS on its own axis when far above) %.0f" % top, top <= 10 + 180 * 0.6, True)
    if d["summary"].get("rss_max", 0) > 2 * s["peak"]:
        want("RSS right axis labelled", len(re.findall(r'class="ax axr"', tl)) >= 2, True)
    ylab = re.findall(r'text-anchor="end" class="ax">([^<]+)<', tl)
    want("heap axis on round values " + str(ylab), _round_ticks(ylab), True)
    xlab = re.findall(r'text-anchor="middle" class="ax">([^<]+ s)<', tl)
    want("time axis on round values " + str(xlab), _round_ticks(xlab), True)
    fl = re.search(r'<svg id="flame"[^>]*height="(\d+)"[^>]*>(.*?)</svg>', page, re.S)
    h, body = int(fl.group(1)), fl.group(2)
    ys = [float(y) for y in re.findall(r'<g class="f"[^>]*><rect x="[^"]*" y="([0-9.]+)"', body)]
    ws = [float(w) for w in re.findall(r'<g class="f"[^>]*><rect x="[^"]*" y="[^"]*" width="([0-9.]+)"', body)]
    want("flame graph has frames", len(ys) >= 2, True)
    want("flame graph: no empty band (lowest row at the bottom)", ys and max(ys) + 18 + 8, h)
    want("flame graph: no slivers", min(ws or [9]) >= 3, True)
    want("flame graph: at most 40 rows", len(set(ys)) <= 40, True)
    return bad

if __name__ == "__main__":
    what = sys.argv[1]
    if what == "pprof":
        print(json.dumps(pprof_totals(sys.argv[2])))
    elif what == "png":
        print(png_colours(sys.argv[2]))
    elif what == "heapmap":
        bad = heapmap_check(sys.argv[2], sys.argv[3])
        print("\n".join(bad))
        sys.exit(1 if bad else 0)
    elif what == "page":
        bad = page_checks(*sys.argv[2:6], view=sys.argv[6] if len(sys.argv) > 6 else None)
        for b in bad: print("  " + b)
        sys.exit(1 if bad else 0)
