#!/bin/sh
# heaptape -- a sealed tape cut at every byte offset, and with bits flipped
# through it, gives one clear message (or the events it still holds) and
# never a crash: exit status 0 or 1, at most one line on stderr.
. "$(dirname "$0")/viz_common.inc"
cp "$DATA/rep_basic.tape" "$TMP/s.tape"
"$HEAPTAPE" seal "$TMP/s.tape" 2>/dev/null
ok "the tape under test is sealed" sh -c "\"$HEAPTAPE\" stats \"$TMP/s.tape\" 2>/dev/null | grep -q 'format version   12'"
size=$(wc -c < "$TMP/s.tape")
bad=0 n=0
# try FILE: report and ops must end cleanly with at most one stderr line.
try() {
  for c in report ops; do
    "$HEAPTAPE" $c "$1" >/dev/null 2>"$TMP/err"; rc=$?
    lines=$(wc -l < "$TMP/err")
    if [ $rc -gt 1 ] || [ "$lines" -gt 1 ]; then
      bad=$((bad + 1)); [ $bad -le 3 ] && { echo "  $2: $c exit $rc"; cat "$TMP/err"; }
    fi
    n=$((n + 1))
  done
}
i=0
while [ $i -lt "$size" ]; do
  head -c $i "$TMP/s.tape" > "$TMP/cut.tape"; try "$TMP/cut.tape" "cut at $i"
  i=$((i + 1))
done
ok "every cut of a $size-byte sealed tape: clean ($n runs)" [ $bad = 0 ]
bad=0 n=0
i=0
while [ $i -lt "$size" ]; do
  python3 -c 'import sys; d=bytearray(open(sys.argv[1],"rb").read()); i=int(sys.argv[2]); d[i]^=1<<(i%8); open(sys.argv[3],"wb").write(d)' \
    "$TMP/s.tape" $i "$TMP/flip.tape"
  try "$TMP/flip.tape" "bit flipped at $i"
  i=$((i + 7))
done
ok "bit flips through a sealed tape: clean ($n runs)" [ $bad = 0 ]
# The checksums are what catches a flip; the decoder must hold without them.
"$HEAPTAPE" report "$TMP/s.tape" >/dev/null 2>&1
ok "the uncut sealed tape reads" [ $? = 0 ]
finish
