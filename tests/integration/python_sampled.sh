#!/bin/sh
# heaptape -- the Python module sampled by bytes (HEAPTAPE_SAMPLE): two
# sessions one after the other in one process, the second allocating on a
# thread (tests/python/sessions.py), each estimate the retained bytes of
# their line within 30% for several seeds (the hooks keep each thread's byte
# countdown themselves and restart it per session).
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
finish
