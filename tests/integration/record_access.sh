#!/bin/sh
# heaptape tests -- record --access: heaptape's Valgrind tool records every
# load, store and modify of a live heap block; ops --access shows them.
# tests/progs/acc_known.c makes known patterns, counted here exactly.
. "$(dirname "$0")/record_common.inc"
VGDIR=$HT_BUILD/valgrind
if ! command -v valgrind >/dev/null 2>&1 || [ ! -e "$VGDIR/heaptape-amd64-linux" ]; then
  echo "skip record_access (valgrind or build/valgrind/heaptape-amd64-linux missing)"
  finish; exit
fi

# counts OPS: "SIZE KIND THREAD ACCESS-SIZE COUNT" lines: per block (by its
# size: every block of acc_known has its own), kind, thread (t1, t2, ... in
# order of appearance, main first) and access size.
counts() {
  awk '$3=="N" {size[$4]=$5}
       $3~/^[LSM]$/ { if (!($2 in tn)) tn[$2]="t" (++nt)
                      k[size[$4] " " $3 " " tn[$2] " " $6]++ }
       END { for (x in k) print x, k[x] }' "$1" | sort -n
}

# The journal the tool writes (record seals by default; sealing it is checked
# below, and record --access's own sealed tape after that).
"$HEAPTAPE" record --access --journal -o "$T/ak.tape" -- "$PROGS/acc_known" 2>"$T/ak.err"
ok "acc_known: recorded, exit 0" $?
grep -q 'tape .*ak.tape' "$T/ak.err"; ok "acc_known: summary line" $?
"$HEAPTAPE" dump --no-stacks "$T/ak.tape" | grep ' MODULE ' >"$T/ak.mods"
grep -q 'acc_known' "$T/ak.mods" && ! grep -q '/heaptape-amd64-linux"' "$T/ak.mods"
ok "acc_known: modules are the program's, not the Valgrind tool's own binary" $?
"$HEAPTAPE" ops --access "$T/ak.tape" >"$T/ak.ops" 2>"$T/ak.ops.err"; ok "ops --access: exit 0" $?
counts "$T/ak.ops" >"$T/ak.counts"
want() { grep -qx "$1" "$T/ak.counts"; ok "acc_known: $2 ($1)" $?; }
want "72 S t1 4 1000" "A written 1000 times"
[ "$(grep -c '^72 ' "$T/ak.counts")" = 1 ]; ok "acc_known: A never read" $?
want "264 S t1 8 33" "B initialised"
want "264 L t1 8 330" "B read only after"
[ "$(grep -c '^264 ' "$T/ak.counts")" = 2 ]; ok "acc_known: B nothing else" $?
want "4096 S t1 8 1" "C one store"
want "4096 L t1 8 5" "C five loads"
[ "$(grep -c '^4096 ' "$T/ak.counts")" = 2 ]; ok "acc_known: C nothing else" $?
# C: every access within bytes 0-7 (the address is the block's own)
awk '$3=="N" && $5==4096 {h=$4} $3~/^[LSM]$/ && $4==h {print $5}' "$T/ak.ops" | sort -u >"$T/c.addr"
[ "$(wc -l <"$T/c.addr")" = 1 ]; ok "acc_known: C touched at one address only" $?
want "40 S t1 8 1" "D stored once"
want "40 L t1 8 1" "D loaded once"
want "136 S t2 4 100" "E stored by a second thread"
want "136 L t3 4 100" "E loaded by a third thread"
want "24 M t1 4 50" "F modified 50 times"
want "24 S t1 4 1" "F stored once"
# Order: each access between its block's N and F lines.
awk '$3=="N" {live[$4]=1} $3=="F" {delete live[$4]}
     $3~/^[LSM]$/ && !($4 in live) {bad++} END {exit bad > 0}' "$T/ak.ops"
ok "ops --access: every access inside its block's life" $?
n=$(grep -c ' [LSM] ' "$T/ak.ops")
tail -n 1 "$T/ak.ops" | grep -q " accesses $n\$"; ok "ops --access: summary counts the $n accesses" $?

# Without --access the log is unchanged (no access lines, the same summary form).
"$HEAPTAPE" ops "$T/ak.tape" >"$T/ak.plain"
! grep -q ' [LSM] ' "$T/ak.plain" && tail -n 1 "$T/ak.plain" | grep -q 'unknown-frees 0$'
ok "ops: no access lines without --access" $?

# Existing analyses read the tape unchanged (symbols from Valgrind's stacks).
"$HEAPTAPE" report "$T/ak.tape" >"$T/ak.report" 2>&1; ok "report: exit 0" $?
grep -q 'main .*acc_known.c' "$T/ak.report"; ok "report: sites symbolised (main in acc_known.c)" $?
"$HEAPTAPE" stats "$T/ak.tape" >"$T/ak.stats" 2>&1 && grep -q 'format version *4' "$T/ak.stats"
ok "stats: version 4 tape" $?
grep -q "heap accesses *$n in .*every one" "$T/ak.stats"; ok "stats: the accesses counted" $?
"$HEAPTAPE" flamegraph -o "$T/ak.svg" "$T/ak.tape" 2>/dev/null && grep -q '<svg' "$T/ak.svg"
ok "flamegraph: exit 0, an SVG" $?

# Sealing keeps the accesses (a sealed tape, version 7): the same log.
cp "$T/ak.tape" "$T/aksealed.tape"
"$HEAPTAPE" seal "$T/aksealed.tape" 2>/dev/null && "$HEAPTAPE" stats "$T/aksealed.tape" | grep -q 'sealed *yes'
ok "seal: an --access tape seals" $?
"$HEAPTAPE" ops --access "$T/aksealed.tape" 2>/dev/null | cmp -s - "$T/ak.ops"; ok "seal: ops --access unchanged" $?
"$HEAPTAPE" record --access -o "$T/aks2.tape" -- "$PROGS/acc_known" 2>/dev/null &&
  "$HEAPTAPE" stats "$T/aks2.tape" | grep -q 'sealed *yes' &&
  "$HEAPTAPE" ops --access "$T/aks2.tape" 2>/dev/null | grep -q ' M .* 4$'
ok "record --access: sealed by default, with its accesses" $?

# Sampling: fewer accesses, the same blocks.
"$HEAPTAPE" record --access --access-sample 10 -o "$T/aks.tape" -- "$PROGS/acc_known" 2>/dev/null
ok "--access-sample 10: exit 0" $?
n=$("$HEAPTAPE" ops --access "$T/aks.tape" 2>/dev/null | tail -n 1 | sed 's/.* accesses //')
[ "$n" -gt 60 ] && [ "$n" -lt 400 ]; ok "--access-sample 10: about a tenth of 1957 ($n)" $?
# A fair sample: acc_sample loads block A (48 B) on every 4th iteration and B
# (80 B) on the other three, its only accesses, so the program's accesses are
# periodic (B B B A); a 1-in-4 sample keeps about a quarter of each block's
# (25000 and 75000; 3% is over 5 standard deviations), where a sampler
# taking every 4th access would keep one block's only.
"$HEAPTAPE" record --access --access-sample 4 -o "$T/as.tape" -- "$PROGS/acc_sample" 2>/dev/null
ok "acc_sample --access-sample 4: exit 0" $?
"$HEAPTAPE" ops --access "$T/as.tape" 2>/dev/null |
  awk '$3=="N" {sz[$4]=$5} $3=="L" {n[sz[$4]]++} END {print n[48]+0, n[80]+0}' >"$T/as.n"
read na nb <"$T/as.n"
[ "$na" -gt 24250 ] && [ "$na" -lt 25750 ]; ok "--access-sample 4: a quarter of A's 100000 loads ($na)" $?
[ "$nb" -gt 72750 ] && [ "$nb" -lt 77250 ]; ok "--access-sample 4: a quarter of B's 300000 loads ($nb)" $?

# Real programs: output unchanged.
same() {
  name=$1; shift
  if ! command -v "$1" >/dev/null 2>&1; then echo "skip $name ($1 missing)"; return; fi
  want=$("$@" 2>&1); got=$("$HEAPTAPE" record --access -o "$T/$name.tape" -- "$@" 2>/dev/null)
  [ "$want" = "$got" ]; ok "$name: output identical under --access" $?
  "$HEAPTAPE" ops --access "$T/$name.tape" 2>/dev/null | tail -n 1 | awk '{exit !($NF > 1000)}'
  ok "$name: accesses recorded" $?
}
same sqlite3 sqlite3 :memory: 'create table t(a,b); with recursive c(x) as (select 1 union all select x+1 from c where x<2000) insert into t select x, hex(zeroblob(2)||x) from c; select count(*), sum(a), max(b) from t;'
same python /usr/bin/python3 -c 'import json,collections; d=collections.Counter(str(i%97) for i in range(20000)); print(json.dumps(sorted(d.items())[:5]))'

# A 1-in-100 sample of sqlite3's accesses: a hundredth of the full run's
# (about 30 000 kept: 5% is over 8 standard deviations). The generated code
# counts a superblock's accesses at once, and only its kept ones call the tool.
if command -v sqlite3 >/dev/null 2>&1; then
  full=$("$HEAPTAPE" ops --access "$T/sqlite3.tape" 2>/dev/null | tail -n 1 | awk '{print $NF}')
  "$HEAPTAPE" record --access --access-sample 100 -o "$T/sq100.tape" -- sqlite3 :memory: 'create table t(a,b); with recursive c(x) as (select 1 union all select x+1 from c where x<2000) insert into t select x, hex(zeroblob(2)||x) from c; select count(*), sum(a), max(b) from t;' >/dev/null 2>&1
  kept=$("$HEAPTAPE" ops --access "$T/sq100.tape" 2>/dev/null | tail -n 1 | awk '{print $NF}')
  awk -v f="${full:-0}" -v k="${kept:-0}" 'BEGIN {exit !(f > 100000 && k > f / 100 * 0.95 && k < f / 100 * 1.05)}'
  ok "sqlite3 --access-sample 100: a hundredth of $full accesses ($kept)" $?
fi

# Thread names (THREAD records at a thread's first event, as the recorder
# writes them): the program's name where the kernel still has Valgrind's
# tool's, a thread's own name otherwise (a thread inherits its creator's).
"$HEAPTAPE" stats "$T/ak.tape" 2>/dev/null | sed -n '/^THREADS/,$p' >"$T/ak.threads"
awk '$2 == "acc_known"' "$T/ak.threads" | grep -q .; ok "threads: acc_known's main thread named" $?
if command -v python3 >/dev/null 2>&1; then
  "$HEAPTAPE" record --access --access-sample 100 -o "$T/thr.tape" -- python3 -c 'import ctypes, threading
ctypes.CDLL(None).prctl(15, b"acc-named", 0, 0, 0)
t = threading.Thread(target=lambda: [bytearray(64) for i in range(5)]); t.start(); t.join()' 2>/dev/null
  "$HEAPTAPE" stats "$T/thr.tape" 2>/dev/null | sed -n '/^THREADS/,$p' >"$T/thr.threads"
  [ "$(awk 'NR > 2 {print $2}' "$T/thr.threads" | sort | tr '\n' ' ')" = "acc-named python3 " ]
  ok "threads: python3's main thread and its renamed thread ($(awk 'NR > 2 {print $2}' "$T/thr.threads" | tr '\n' ' '))" $?
fi

# Errors: one line, non-zero exit.
"$HEAPTAPE" record --access-sample 10 -o "$T/x.tape" -- "$PROGS/acc_known" 2>"$T/e1"; r=$?
[ $r != 0 ] && grep -q 'needs --access' "$T/e1"; ok "--access-sample alone: usage error" $?
"$HEAPTAPE" record --access --access-sample 0 -o "$T/x.tape" -- "$PROGS/acc_known" 2>"$T/e2"; r=$?
[ $r != 0 ] && grep -q 'access-sample' "$T/e2"; ok "--access-sample 0: usage error" $?
# The preload's options do not apply under valgrind: refused, not ignored.
for f in "--frames 10" "--sample 4K" "--unwind fp" "--follow-fork" "--follow-exec"; do
  "$HEAPTAPE" record --access $f -o "$T/x.tape" -- "$PROGS/acc_known" >/dev/null 2>"$T/e5"; r=$?
  [ $r = 2 ] && head -n 1 "$T/e5" | grep -q "^heaptape: record: ${f%% *} is the preload's: --access records under valgrind"
  ok "--access $f: usage error naming it ($r)" $?
done
"$HEAPTAPE" record --access -o "$T/x.tape" -- "$PROGS/attach_static" 2>"$T/e3"; r=$?
[ $r != 0 ] && grep -q 'statically linked; valgrind' "$T/e3"; ok "static program: refused" $?
env PATH=/nonexistent "$HEAPTAPE" record --access -o "$T/x.tape" -- "$PROGS/acc_known" 2>"$T/e4"; r=$?
[ $r != 0 ] && grep -q 'valgrind not found' "$T/e4" && [ "$(wc -l <"$T/e4")" = 1 ]
ok "valgrind missing: one line" $?
# The tool cannot start: a copy of the command beside a broken tool.
mkdir -p "$T/bin/valgrind"
cp "$HEAPTAPE" "$LIB" "$T/bin/"
for f in "$VGDIR"/*; do ln -s "$f" "$T/bin/valgrind/" 2>/dev/null; done
rm -f "$T/bin/valgrind/heaptape-amd64-linux"; echo broken >"$T/bin/valgrind/heaptape-amd64-linux"
"$T/bin/heaptape" record --access -o "$T/y.tape" -- "$PROGS/acc_known" 2>"$T/e5"; r=$?
[ $r != 0 ] && grep -q "heaptape: .*Valgrind tool did not start" "$T/e5"; ok "tool cannot start: named" $?
rm -f "$T/bin/valgrind/heaptape-amd64-linux"
"$T/bin/heaptape" record --access -o "$T/y.tape" -- "$PROGS/acc_known" 2>"$T/e6"; r=$?
[ $r != 0 ] && grep -q 'Valgrind tool .* is not' "$T/e6"; ok "tool missing: named" $?
"$HEAPTAPE" record -o "$T/plain.tape" -- "$PROGS/acc_known" 2>/dev/null
"$HEAPTAPE" ops --access "$T/plain.tape" >/dev/null 2>"$T/e7"; r=$?
[ $r != 0 ] && grep -q 'no accesses on this tape' "$T/e7"; ok "ops --access on a tape without: refused" $?
finish
