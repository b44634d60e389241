#!/bin/sh
# heaptape -- the Python module sampled by bytes (HEAPTAPE_SAMPLE): two
# sessions one after the other in one process, the second allocating on a
# thread (tests/python/sessions.py), each estimate the retained bytes of
# their line within 30% for several seeds (the hooks keep each thread's byte
# countdown themselves and restart it per session). Sampled over pymalloc
# (the object and mem domains keep pymalloc's free: tests/python/split.py),
# lines whose blocks are all freed keep nothing live, retained bytes are
# estimated, pymalloc's block count comes back; code objects freed and
# made again at the same addresses keep their own lines (codes.py).
. "$(dirname "$0")/viz_common.inc"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no /usr/bin/python3"; echo "0 passed, 0 failed"; exit 0; }
S="$HT_ROOT/tests/python/sessions.py"

for seed in 1 2 3; do
  HEAPTAPE_SEED=$seed HEAPTAPE_SAMPLE=16K PYTHONPATH="$HT_BUILD/python" \
    $PY "$S" "$TMP/a$seed.tape" "$TMP/b$seed.tape" "$TMP/w$seed.json" > "$TMP/out" 2>&1
  ok "seed $seed: sessions.py runs (exit 0)" test $? = 0
  for s in a b; do
    "$HEAPTAPE" report --json --top 1000 "$TMP/$s$seed.tape" > "$TMP/$s$seed.rep" 2>/dev/null
  done
  $PY - "$TMP/a$seed.rep" "$TMP/b$seed.rep" "$TMP/w$seed.json" > "$TMP/chk$seed" <<'PYEOF'
import json, sys
want = json.load(open(sys.argv[3]))
for k, path in enumerate(sys.argv[1:3]):
    rep = json.load(open(path))
    sampled = rep.get("sampling") or rep.get("sample") or "?"
    est = sum(s["leaked"] for s in rep["bytes"]
              if s["location"].endswith("%s:%d" % (want["file"], want["line"])))
    w = want["bytes"][k]
    print("%s session %d: estimate %d B, true %d B" %
          ("ok  " if abs(est - w) <= 0.3 * w else "FAIL", k + 1, est, w))
PYEOF
  cat "$TMP/chk$seed"
  ok "seed $seed: both sessions' retained bytes within 30%" sh -c \
    "! grep -q FAIL '$TMP/chk$seed' && [ \$(grep -c '^ok' '$TMP/chk$seed') = 2 ]"
done

# split.py: every recorded block's free seen (split from 16K; 1: every
# allocation a sample point, all domains' frees hooked)
for sample in 1 16K 64K; do
  HEAPTAPE_SAMPLE=$sample PYTHONPATH="$HT_BUILD/python" $PY "$HT_ROOT/tests/python/split.py" \
    "$TMP/s$sample.tape" "$TMP/s$sample.json" > "$TMP/out" 2>&1
  ok "split.py, sample $sample: runs (exit 0)" test $? = 0
  "$HEAPTAPE" report --json --top 100000 "$TMP/s$sample.tape" > "$TMP/s$sample.rep" 2>/dev/null
  $PY - "$TMP/s$sample.rep" "$TMP/s$sample.json" > "$TMP/chk" <<'PYEOF'
import json, sys
rep, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def at(line, key):
    return sum(s[key] for s in rep["bytes"] if s["location"].endswith("%s:%d" % (want["file"], line)))
for tag in "churn", "grow":
    live, made = at(want[tag], "leaked"), at(want[tag], "bytes")
    print("%s %s: %d B made, %d B live at the end" % ("ok  " if made > 0 and live == 0 else "FAIL", tag, made, live))
est = at(want["retain"], "leaked")
print("%s retain: estimate %d B, true %d B" % ("ok  " if abs(est - want["bytes"]) <= 0.3 * want["bytes"] else "FAIL", est, want["bytes"]))
print("%s getallocatedblocks over the churn: %+d" % ("ok  " if abs(want["blocks"]) < 50 else "FAIL", want["blocks"]))
PYEOF
  cat "$TMP/chk"
  ok "split.py, sample $sample: every check" sh -c "grep -q '^ok' '$TMP/chk' && ! grep -qv '^ok' '$TMP/chk'"
done

# codes.py: each generated function's list comprehension at its own line
for sample in 0 16K; do
  HEAPTAPE_SAMPLE=$sample PYTHONPATH="$HT_BUILD/python" $PY "$HT_ROOT/tests/python/codes.py" \
    "$TMP/c$sample.tape" "$TMP/c$sample.json" > "$TMP/out" 2>&1
  ok "codes.py, sample $sample: runs (exit 0)" test $? = 0
  "$HEAPTAPE" report --json --top 100000 "$TMP/c$sample.tape" > "$TMP/c$sample.rep" 2>/dev/null
  $PY - "$TMP/c$sample.rep" "$TMP/c$sample.json" > "$TMP/chk" <<'PYEOF'
import json, re, sys
rep, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
got = set()
for s in rep["bytes"] + rep["calls"]:
    m = re.search(r"<listcomp> gen.py:(\d+)$", s["location"])
    if m:
        got.add(int(m.group(1)))
print("%s lines %s" % ("ok  " if sorted(got) == want["lines"] else "FAIL", sorted(got)))
PYEOF
  cat "$TMP/chk"
  ok "codes.py, sample $sample: every function's own line" grep -q '^ok' "$TMP/chk"
done
finish
