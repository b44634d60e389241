#!/bin/sh
# heaptape -- `heaptape record --python=native`: native frames in their place
# in Python stacks (tests/python/native.py: a Python function called by the C
# code of sorted()), the eval loop's frames replaced by the Python frames they
# run; the interpreter's malloc heap recorded beside them (second domain).
. "$(dirname "$0")/viz_common.inc"
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: no /usr/bin/python3"; echo "0 passed, 0 failed"; exit 0; }
N="$HT_ROOT/tests/python/native.py"
"$HEAPTAPE" record --python=native -o "$TMP/n.tape" -- $PY "$N" > "$TMP/out" 2>&1
ok "record --python=native: exit status" test $? = 0
"$HEAPTAPE" report --json --stacks 64 --top 1000 --by-stack "$TMP/n.tape" > "$TMP/n.json" 2>"$TMP/err"
ok "report reads the tape without warnings" test ! -s "$TMP/err"
kl=$(grep -n '# KEY$' "$N" | cut -d: -f1); sl=$(grep -n '# SORTED$' "$N" | cut -d: -f1)
$PY - "$TMP/n.json" "$N" "$kl" "$sl" > "$TMP/chk" <<'PYEOF'
import json, sys
rep, f, kl, sl = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
d = json.load(open(rep))
key, main = "key %s:%s" % (f, kl), "main %s:%s" % (f, sl)
stacks = [[x["name"] for x in s["stack"]] for s in d["bytes"] + d["calls"]]
mixed = [s for s in stacks if key in s and main in s]
print("stacks with key and main:", len(mixed))
if not mixed: sys.exit(1)
s = mixed[0]
print(s)
k, m = s.index(key), s.index(main)
between = s[k + 1:m]
# innermost native frames (the allocation's C code) before key
print("native inside key:", k > 0)
# sorted's C frames between key and main, none of them the eval loop
print("native between:", bool(between) and not any(" %s:" % f in x for x in between))
print("no eval loop:", not any(x.startswith("_PyEval_EvalFrameDefault") for s in mixed for x in s))
# the interpreter's entry below <module>
print("entry below:", "PyEval_EvalCode" in s[m:])
PYEOF
ok "a stack holds key() and main()" test $? = 0
for w in "native inside key" "native between" "no eval loop" "entry below"; do
  ok "$w" grep -q "^$w: True" "$TMP/chk"
done
"$HEAPTAPE" pprof -o "$TMP/n.pb.gz" "$TMP/n.tape" 2>/dev/null
if command -v go >/dev/null 2>&1; then
  HOME=$TMP go tool pprof -traces "$TMP/n.pb.gz" 2>/dev/null > "$TMP/traces"
  ok "pprof: both domains" sh -c "grep -q 'domain:  runtime' '$TMP/traces' && grep -q 'domain:  native' '$TMP/traces'"
fi
finish
