#!/bin/sh
# heaptape -- the Python module on asyncio tasks, generators and fork, its
# stacks and retained bytes against tracemalloc's (25 frames) on the same
# allocations (tests/python/misc.py); a real workload (json, re, sqlite3,
# threading: tests/python/workload.py) prints the same under record --python
# and --python=native as without heaptape; every analysis reads its tape.
. "$(dirname "$0")/viz_common.inc"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no /usr/bin/python3"; echo "0 passed, 0 failed"; exit 0; }
M="$HT_ROOT/tests/python/misc.py"
W="$HT_ROOT/tests/python/workload.py"

PYTHONPATH="$HT_BUILD/python" $PY "$M" "$TMP/m.tape" "$TMP/m.json" > "$TMP/m.out" 2>&1
ok "misc.py runs (exit 0)" test $? = 0
"$HEAPTAPE" report --json --by-stack --stacks 64 --top 100000 "$TMP/m.tape" > "$TMP/m.rep" 2>"$TMP/m.err"
ok "report reads the tape without warnings" test ! -s "$TMP/m.err"
$PY "$HT_ROOT/tests/python/check_misc.py" "$TMP/m.rep" "$TMP/m.json" > "$TMP/chk" 2>&1
cat "$TMP/chk"
ok "every check of misc.py" sh -c "grep -q '^ok' '$TMP/chk' && ! grep -qv '^ok' '$TMP/chk'"

# the workload's output unchanged
(cd "$TMP" && $PY "$W" > "$TMP/bare.out" 2>&1)
ok "workload runs bare" test $? = 0
for mode in python python=native; do
  (cd "$TMP" && "$HEAPTAPE" record --$mode -o "$TMP/w.$mode.tape" -- $PY "$W" > "$TMP/w.$mode.out" 2>"$TMP/w.$mode.err")
  ok "record --$mode: exit status" test $? = 0
  ok "record --$mode: output identical" cmp -s "$TMP/bare.out" "$TMP/w.$mode.out"
done

# every analysis reads a Python tape
T="$TMP/w.python.tape"
for c in "report" "report --memprof" "report --json" "report --leaks" "stats" "ops" \
         "lifetimes --by-site"; do
  "$HEAPTAPE" $c "$T" > "$TMP/a.out" 2>"$TMP/a.err"
  ok "$c: exit 0, output, no warnings" sh -c "[ -s '$TMP/a.out' ] && [ ! -s '$TMP/a.err' ]"
done
"$HEAPTAPE" flamegraph --folded -o - "$T" > "$TMP/w.folded" 2>/dev/null
ok "flamegraph --folded: Python stacks, outermost first" grep -q "^<module> $W:[0-9]*;" "$TMP/w.folded"
ok "flamegraph --folded: threads' stacks" grep -q "^Thread._bootstrap .*;work $W:[0-9]* " "$TMP/w.folded"
"$HEAPTAPE" report --memprof "$T" | grep -q "^@$W:[0-9]*: [0-9]* events"
ok "memprof names @workload.py:line" test $? = 0
"$HEAPTAPE" html -o "$TMP/w.html" "$T" 2>/dev/null && grep -q "workload.py" "$TMP/w.html"
ok "html: the script's frames" test $? = 0
"$HEAPTAPE" flamegraph -o "$TMP/w.svg" "$T" 2>/dev/null && grep -q "workload.py" "$TMP/w.svg"
ok "flamegraph: the script's frames" test $? = 0
"$HEAPTAPE" pprof -o "$TMP/w.pb.gz" "$T" 2>/dev/null
ok "pprof: written" test -s "$TMP/w.pb.gz"
"$HEAPTAPE" diff "$TMP/w.python.tape" "$TMP/m.tape" > "$TMP/d.out" 2>&1
ok "diff of two Python tapes" sh -c "[ -s '$TMP/d.out' ] && grep -q 'workload.py' '$TMP/d.out'"
"$HEAPTAPE" replay "$T" > "$TMP/r.out" 2>&1
ok "replay of a Python tape" test $? = 0
finish
