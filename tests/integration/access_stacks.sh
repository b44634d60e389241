#!/bin/sh
# heaptape tests -- record --access's stacks: the tool takes an allocation's
# inner frames from Valgrind's unwinder and its outer ones from one of the
# thread's last walks where that is checked to give the same frames (stack_walk in
# src/vgtool/ht_vg_main.c). --stack-check=yes walks every reused stack whole
# too and counts those that differ: none may, on tests/progs/acc_stacks.c
# (frames at the same addresses under two callers, recursion deeper than
# the 64 frames kept, longjmp, a coroutine on a heap stack, a signal handler,
# two threads) and on lua5.4, perl, sqlite3 and python3 where installed. It
# fails without the check of the outer frames' return addresses.
. "$(dirname "$0")/record_common.inc"
VGDIR=$HT_BUILD/valgrind
if ! command -v valgrind >/dev/null 2>&1 || [ ! -e "$VGDIR/heaptape-amd64-linux" ]; then
  echo "skip access_stacks (valgrind or build/valgrind/heaptape-amd64-linux missing)"
  finish; exit
fi
[ -x "$PROGS/acc_stacks" ] || { echo "FAIL missing $PROGS/acc_stacks (make test builds it)"; echo "0 passed, 1 failed"; exit 1; }
. "$HT_ROOT/bench/access_workloads.sh"

# stacks NAME MIN-REUSED SAMPLE CMD...: run under the tool with --stack-check.
stacks() {
  name=$1 min=$2 sample=$3; shift 3
  (cd "$T" && VALGRIND_LIB=$VGDIR valgrind -q --tool=heaptape --tape="$T/s.tape" --stack-check=yes \
     --access-sample="$sample" "$@" >"$T/out" 2>"$T/err" </dev/null)
  rc=$?
  line=$(grep 'heaptape: stacks' "$T/err")
  reused=$(printf '%s\n' "$line" | sed -n 's/.*stacks [0-9]*, \([0-9]*\) from the last walk.*/\1/p')
  differ=$(printf '%s\n' "$line" | sed -n 's/.*, \([0-9]*\) of them differ.*/\1/p')
  [ "$rc" = 0 ] && [ "$differ" = 0 ] && [ "${reused:-0}" -ge "$min" ]
  ok "$name: exit $rc, ${line#*heaptape: }" $?
}

stacks "acc_stacks" 300 1 "$PROGS/acc_stacks"

# Stacks end at the program's first frame: beyond _start, Valgrind's last
# resort takes words at the stack pointer (a pointer into argv, a count)
# for return addresses; the tool drops such frames (no code there).
[ -x "$PROGS/acc_known" ] || { echo "FAIL missing $PROGS/acc_known (make test builds it)"; echo "0 passed, 1 failed"; exit 1; }
"$HEAPTAPE" record --access -o "$T/k.tape" -- "$PROGS/acc_known" >/dev/null 2>&1
"$HEAPTAPE" report "$T/k.tape" >"$T/k.rep" 2>&1
starts=$(grep -c '^ *_start$' "$T/k.rep")
beyond=$(awk '/^ *_start$/ {s = 1; next} s && /^        [^ ]/ {b++; next} {s = 0} END {print b + 0}' "$T/k.rep")
[ "$starts" -gt 0 ] && [ "$beyond" = 0 ]; ok "acc_known: stacks end at _start ($starts stacks, $beyond frames beyond)" $?

for prog in lua5.4 perl sqlite3 python3; do
  access_argv "$prog"
  if [ -x "$AW1" ]; then stacks "$prog" 100 100 "$AW1" "$AW2" "$AW3"; else echo "skip $prog (not installed)"; fi
done
finish
