#!/bin/sh
# heaptape -- format version 6 (docs/FORMAT.md, "Python and Ruby locations"):
# tapes of the Python and Ruby modules say 6 (their own tapes and record
# --journal's, --python=native
# and --ruby=native journals once finalised, sealed tapes); native tapes keep
# 1 and 5; tapes made before version 6 with Python and Ruby locations
# (tests/data: versions 1 and 5) keep their version and read as before; a
# newer version is refused in one line.
. "$(dirname "$0")/viz_common.inc"
PY=/usr/bin/python3
S="$TMP/s.py"
printf 'keep = []\ndef grow(n):\n    for i in range(n):\n        keep.append("x" * 40 + str(i))\ngrow(200)\n' > "$S"

# version TAPE: the format version `stats` shows
version() { "$HEAPTAPE" stats "$1" 2>/dev/null | sed -n 's/^  format version *//p'; }
# sealed_copy TAPE OUT: OUT is TAPE sealed
sealed_copy() { cp "$1" "$2" && "$HEAPTAPE" seal "$2" >/dev/null 2>&1; }

if [ -x "$PY" ]; then
  for m in python python=native; do
    "$HEAPTAPE" record --journal --$m -o "$TMP/$m.tape" -- $PY "$S" >/dev/null 2>&1
    ok "record --$m: version 6" test "$(version "$TMP/$m.tape")" = 6
    sealed_copy "$TMP/$m.tape" "$TMP/$m.sealed"
    ok "record --$m, sealed: version 12 (sealed tapes from 7 include 6)" test "$(version "$TMP/$m.sealed")" = 12
    "$HEAPTAPE" report "$TMP/$m.sealed" > "$TMP/r.out" 2>"$TMP/r.err"
    ok "record --$m, sealed: report names the Python site" \
      sh -c "grep -q 'grow $S:4' '$TMP/r.out' && [ ! -s '$TMP/r.err' ]"
  done
  "$HEAPTAPE" record --python -o "$TMP/pyd.tape" -- $PY "$S" >/dev/null 2>&1
  ok "record --python, its sealed tape: version 12" test "$(version "$TMP/pyd.tape")" = 12
  PYTHONPATH="$HT_BUILD/python" $PY -c "
import heaptape
heaptape.start('$TMP/own.tape')
x = [str(i) for i in range(100)]
heaptape.stop()"
  ok "heaptape.start: the journal says version 6" test "$(version "$TMP/own.tape")" = 6
  "$HEAPTAPE" dump "$TMP/own.tape" | head -n 1 > "$TMP/d.out"
  ok "dump: version 6, frontend python3.11" grep -q "^# heaptape tape version 6, .*frontend python3.11" "$TMP/d.out"
fi
if command -v ruby >/dev/null 2>&1; then
  printf '$keep = []\ndef grow(n)\n  n.times { |i| $keep << ("x" * 40 + i.to_s) }\nend\ngrow(200)\n' > "$TMP/s.rb"
  for m in ruby ruby=native; do
    "$HEAPTAPE" record --journal --$m -o "$TMP/$m.tape" -- ruby "$TMP/s.rb" >/dev/null 2>&1
    ok "record --$m: version 6" test "$(version "$TMP/$m.tape")" = 6
  done
  sealed_copy "$TMP/ruby.tape" "$TMP/ruby.sealed"
  ok "record --ruby, sealed: version 12" test "$(version "$TMP/ruby.sealed")" = 12
fi

# native tapes: 1, sealed 7 (record's default output, or heaptape seal's)
"$HEAPTAPE" record -o "$TMP/nd.tape" -- /bin/true >/dev/null 2>&1
ok "native, record's sealed tape: version 12" test "$(version "$TMP/nd.tape")" = 12
"$HEAPTAPE" record --journal -o "$TMP/n.tape" -- /bin/true >/dev/null 2>&1
ok "native journal: version 1" test "$(version "$TMP/n.tape")" = 1
sealed_copy "$TMP/n.tape" "$TMP/n.sealed"
ok "native sealed: version 12" test "$(version "$TMP/n.sealed")" = 12

# tapes written before version 6 with Python and Ruby locations
ok "old Python journal: version 1" test "$(version "$DATA/python_v1.tape")" = 1
"$HEAPTAPE" report "$DATA/python_v1.tape" > "$TMP/o.out" 2>"$TMP/o.err"
ok "old Python journal reads" sh -c "grep -q 'grow /tmp/py3old/s.py:4' '$TMP/o.out' && [ ! -s '$TMP/o.err' ]"
ok "old sealed Python tape: version 5" test "$(version "$DATA/sealed_v5_python.tape")" = 5
"$HEAPTAPE" report "$DATA/sealed_v5_python.tape" > "$TMP/o5.out" 2>"$TMP/o5.err"
tail -n +2 "$TMP/o.out" > "$TMP/o.body"; tail -n +2 "$TMP/o5.out" > "$TMP/o5.body"
ok "old sealed Python tape: the journal's report" \
  sh -c "[ -s '$TMP/o.body' ] && cmp -s '$TMP/o.body' '$TMP/o5.body' && [ ! -s '$TMP/o5.err' ]"
ok "old Ruby journal reads" sh -c "'$HEAPTAPE' report '$DATA/ruby_v1.tape' | grep -q 'grow s.rb:3'"
cp "$DATA/sealed_v5_python.tape" "$TMP/again.tape"
"$HEAPTAPE" seal "$TMP/again.tape" >/dev/null 2>&1
"$HEAPTAPE" report "$TMP/again.tape" 2>/dev/null | tail -n +2 > "$TMP/again.body"
ok "seal rewrites an old sealed version 5 as 12, with the same report" \
  sh -c "[ '$(version "$TMP/again.tape")' = 12 ] && [ -s '$TMP/o.body' ] && cmp -s '$TMP/o.body' '$TMP/again.body'"

# a newer version: one line naming both
$PY - "$DATA/python_v1.tape" "$TMP/v13.tape" <<'PYEOF'
import sys, zlib, struct
d = bytearray(open(sys.argv[1], 'rb').read())
d[8] = 13
n = 16 + struct.unpack_from('<I', d, 12)[0]
struct.pack_into('<I', d, n, zlib.crc32(bytes(d[:n])))
open(sys.argv[2], 'wb').write(d)
PYEOF
"$HEAPTAPE" report "$TMP/v13.tape" > /dev/null 2>"$TMP/v13.err"
ok "version 13: refused (exit 1)" test $? = 1
ok "version 13: one line naming 13 and 1 to 12" sh -c "[ \$(wc -l < '$TMP/v13.err') = 1 ] && grep -q 'version 13 is not supported (this heaptape reads versions 1 to 12)' '$TMP/v13.err'"
finish
