#!/bin/sh
# heaptape -- the Python module: known allocations (tests/python/known.py) give
# their exact sites, counts and retained bytes in `heaptape report`, directly
# (heaptape.start/stop) and through `heaptape record --python`; the memprof
# layout names them @file:line; go tool pprof -top shows the Python functions;
# start/stop errors and sub-interpreters are refused with Python exceptions.
. "$(dirname "$0")/viz_common.inc"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no /usr/bin/python3"; echo "0 passed, 0 failed"; exit 0; }
export PYTHONPATH="$HT_BUILD/python"
K="$HT_ROOT/tests/python/known.py"
CHECK="$HT_ROOT/tests/python/check_sites.py"

# sites NAME TAPE EXPECT: the four sites of known.py as expected.
sites() {
  "$HEAPTAPE" report --json --top 1000 "$2" > "$TMP/$1.json" 2>"$TMP/$1.err"
  ok "$1: report reads the tape without warnings" test ! -s "$TMP/$1.err"
  $PY "$CHECK" "$TMP/$1.json" "$3" > "$TMP/$1.chk"
  cat "$TMP/$1.chk"
  for k in retain temp leak thread; do
    ok "$1: site $k" grep -q "^ok   $k:" "$TMP/$1.chk"
  done
}

# Directly: heaptape.start(path) ... heaptape.stop()
$PY "$K" "$TMP/direct.tape" "$TMP/direct.want" direct > "$TMP/out" 2>&1
ok "direct: known.py runs" test -s "$TMP/direct.tape" -a -s "$TMP/direct.want"
sites direct "$TMP/direct.tape" "$TMP/direct.want"
"$HEAPTAPE" report "$TMP/direct.tape" > "$TMP/direct.txt"
ok "direct: the summary names the frontend" grep -q "pid [0-9]*, python3.11)" "$TMP/direct.txt"
ok "direct: threads' stacks reach threading.py" grep -q "Thread.run /usr/lib/python3.11/threading.py:" "$TMP/direct.txt"

# Through heaptape record --python (no PYTHONPATH of ours: record sets it)
(unset PYTHONPATH; cd "$TMP" && "$HEAPTAPE" record --python -o "$TMP/rec.tape" -- \
   $PY "$K" - "$TMP/rec.want" record > "$TMP/rec.out" 2>&1)
ok "record --python: exit status" test $? = 0
sites rec "$TMP/rec.tape" "$TMP/rec.want"
ok "record --python: the program is the script" sh -c \
  "\"$HEAPTAPE\" report \"$TMP/rec.tape\" | grep -q '^  program .*known.py - '"

# Sampled (--sample 8K): the estimates of the retained bytes within 30%
(unset PYTHONPATH; cd "$TMP" && HEAPTAPE_SEED=7 "$HEAPTAPE" record --python --sample 8K \
   -o "$TMP/smp.tape" -- $PY "$K" - "$TMP/smp.want" record > "$TMP/smp.out" 2>&1)
ok "record --python --sample 8K: exit status" test $? = 0
"$HEAPTAPE" report --json --top 1000 "$TMP/smp.tape" > "$TMP/smp.json" 2>/dev/null
$PY - "$TMP/smp.json" "$TMP/smp.want" > "$TMP/smp.chk" <<'PYEOF'
import json, sys
rep, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sites = {s["location"]: s for s in rep["bytes"]}
for k in ("retain", "thread", "leak"):
    w = want[k]
    s = sites.get("%s %s:%d" % (w["func"], want["file"], w["line"]))
    est = s["leaked"] if s else 0
    print("%s %s: estimate %d B, true %d B" % ("ok  " if abs(est - w["bytes"]) <= 0.3 * w["bytes"] else "FAIL", k, est, w["bytes"]))
PYEOF
cat "$TMP/smp.chk"
ok "sampled: retained bytes estimated within 30%" sh -c "! grep -q FAIL '$TMP/smp.chk' && [ \$(grep -c '^ok' '$TMP/smp.chk') = 3 ]"

# memprof layout: @file:line, as Lua's lines
"$HEAPTAPE" report --memprof "$TMP/direct.tape" > "$TMP/mp.txt" 2>&1
l=$(sed -n 's/.*"retain": {"line": \([0-9]*\).*/\1/p' "$TMP/direct.want")
ok "memprof: ALLOCATIONS names @known.py:$l" grep -q "^@$K:$l: [0-9]* events" "$TMP/mp.txt"
ok "memprof: HEAP SUMMARY holds it" grep -q "^@$K:$l holds 1614010B: 30047 allocs" "$TMP/mp.txt"

# pprof read by go tool pprof: the Python functions
if command -v go >/dev/null 2>&1; then
  "$HEAPTAPE" pprof -o "$TMP/p.pb.gz" "$TMP/direct.tape" 2>/dev/null
  HOME=$TMP go tool pprof -top -sample_index=inuse_space "$TMP/p.pb.gz" > "$TMP/top.txt" 2>/dev/null
  for f in retain worker 'leaky.<locals>.<listcomp>'; do
    ok "pprof -top shows $f" grep -q " $f\$" "$TMP/top.txt"
  done
  HOME=$TMP go tool pprof -raw "$TMP/p.pb.gz" 2>/dev/null | grep -q " retain $K:$l s="
  ok "pprof: locations carry the script's lines" test $? = 0
else
  echo "skip pprof: go not installed"
fi

# errors: Python exceptions, never a crash
out=$($PY - "$TMP" 2>&1 <<'PYEOF'
import sys, heaptape, os
d = sys.argv[1]
try: heaptape.start("/nonexistent/dir/t.tape"); print("no error")
except FileNotFoundError: pass
heaptape.start(d + "/e.tape")
try: heaptape.start(d + "/f.tape"); print("no error 2")
except RuntimeError as e: assert "running" in str(e), e
heaptape.stop()
try: heaptape.stop(); print("no error 3")
except RuntimeError as e: assert "not running" in str(e), e
with heaptape.recording(d + "/cm.tape") as r:
    assert heaptape.is_running()
    x = [str(i) for i in range(1000)]
assert not heaptape.is_running() and os.path.getsize(d + "/cm.tape") > 0
try: heaptape.start(d + "/g.tape", frames=999); print("no error 4")
except ValueError: pass
import _xxsubinterpreters as si
i = si.create()
try: si.run_string(i, "import heaptape; heaptape.start(%r)" % (d + "/si.tape")); print("no error 5")
except si.RunFailedError as e: assert "sub-interpreters" in str(e), e
si.destroy(i)
print("ok")
PYEOF
)
ok "start/stop errors, context manager, sub-interpreter refused ($out)" test "$out" = ok
"$HEAPTAPE" report "$TMP/cm.tape" 2>/dev/null | grep -q "<listcomp> .*:[0-9]*$"
ok "context manager: the block's allocations" test $? = 0
finish
