# heaptape tests -- misc.py's tape against its expectations and tracemalloc's
# stacks. Usage: check_misc.py REPORT-BY-STACK.json OUT.json; "ok"/"FAIL" lines.
import json
import sys

rep = json.load(open(sys.argv[1]))
want = json.load(open(sys.argv[2]))
me = want["file"]
rows = {}
for s in rep["leaks"] + rep["bytes"] + rep["calls"] + rep["peak"]:
    rows[json.dumps([x["name"] for x in s["stack"]])] = s


def say(good, what):
    print("%s %s" % ("ok  " if good else "FAIL", what))


def sites(name):
    return [s for s in rows.values() if s["location"] == name]


w = want["async"]
a = sites("%s %s:%d" % (w["func"], me, w["line"]))
say(sum(s["leaked"] for s in a) == w["bytes"] and sum(s["leaked_blocks"] for s in a) == w["blocks"],
    "asyncio: producer's line retains %d B in %d blocks (%s)" % (
        w["bytes"], w["blocks"], [(s["leaked"], s["leaked_blocks"]) for s in a]))
g = want["gen"]
gs = sites("gen %s:%d" % (me, g["line"]))
say(bool(gs) and all(s["stack"][1]["name"] == "consume %s:%d" % (me, g["caller"]) for s in gs),
    "generator: gen's line under its consumer")
say(want["fork_status"] == 0, "fork: the child ran with the recording off (status %d)" % want["fork_status"])
say(not any("%s:%d" % (me, want["child"]) in k for k in rows), "fork: nothing of the child on the tape")
# tracemalloc's stacks: the same frames and the same retained bytes
n = 0
for frames, size, count in want["tracemalloc"][:4]:
    found = None
    for s in rows.values():
        fl = [[x["file"], x["line"]] for x in s["stack"]]
        if fl[:25] == frames[:25] or (s["more_frames"] and fl == frames[:len(fl)]):
            found = s
            break
    good = found is not None and found["leaked"] == size and found["leaked_blocks"] == count
    say(good, "tracemalloc stack %s:%d (+%d frames): %d B in %d blocks; heaptape %s" % (
        frames[0][0], frames[0][1], len(frames) - 1, size, count,
        (found["leaked"], found["leaked_blocks"]) if found else "no such stack"))
    n += 1
say(n >= 3, "tracemalloc compared on %d stacks" % n)
