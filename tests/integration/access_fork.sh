#!/bin/sh
# heaptape tests -- record --access and fork: only the process started
# writes the tape; a forked child (tests/progs/acc_fork.c: its own block and
# 700 stores into a block it inherited) and a child that execs (Valgrind
# follows it, --tape-pid keeps it from the tape) are not recorded, and
# nothing of theirs is mixed into the parent's tape; sampled the same.
. "$(dirname "$0")/record_common.inc"
VGDIR=$HT_BUILD/valgrind
if ! command -v valgrind >/dev/null 2>&1 || [ ! -e "$VGDIR/heaptape-amd64-linux" ]; then
  echo "skip access_fork (valgrind or build/valgrind/heaptape-amd64-linux missing)"
  finish; exit
fi
[ -x "$PROGS/acc_fork" ] || { echo "FAIL missing $PROGS/acc_fork (make test builds it)"; echo "0 passed, 1 failed"; exit 1; }

# counts OPS: "SIZE KIND TID ACCESS-SIZE COUNT" lines, and "N SIZE" per block.
counts() {
  awk '$3=="N" {size[$4]=$5; print "N", $5}
       $3~/^[LSM]$/ {k[size[$4] " " $3 " " $2 " " $6]++}
       END {for (x in k) print x, k[x]}' "$1" | sort
}

"$HEAPTAPE" record --access -o "$T/f.tape" -- "$PROGS/acc_fork" 2>"$T/f.err"
ok "acc_fork: recorded, exit 0 (both children exited 0)" $?
"$HEAPTAPE" ops --access "$T/f.tape" >"$T/f.ops"; ok "ops --access: exit 0" $?
counts "$T/f.ops" >"$T/f.counts"
pid=$(awk '$3=="N" {print $2; exit}' "$T/f.ops")
printf 'N 64\n64 L %s 4 3\n64 S %s 4 10\n' "$pid" "$pid" | sort | cmp -s - "$T/f.counts"
ok "the parent's block only, its 10 stores and 3 loads ($(tr '\n' ';' <"$T/f.counts"))" $?
! grep -q ' N [0-9]* \(96\|200\)$' "$T/f.ops"; ok "no block of the children (96, 200 bytes)" $?
"$HEAPTAPE" report "$T/f.tape" >"$T/f.report" 2>&1; ok "report reads the tape" $?

# Sampled 1 in 2: the parent's accesses only (at most its 13).
"$HEAPTAPE" record --access --access-sample 2 -o "$T/s.tape" -- "$PROGS/acc_fork" 2>/dev/null
ok "acc_fork --access-sample 2: exit 0" $?
"$HEAPTAPE" ops --access "$T/s.tape" >"$T/s.ops" 2>/dev/null
n=$(grep -c ' [LSM] ' "$T/s.ops")
[ "$n" -le 13 ] && [ "$(grep -v '^#' "$T/s.ops" | grep -c ' N ')" = 1 ]
ok "sampled: the parent's block only, at most its 13 accesses ($n)" $?
finish
