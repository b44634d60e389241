#!/bin/sh
# heaptape tests -- heaptape access: per-site reads, writes and findings of a
# tape of record --access. tests/progs/acc_known.c makes one block per site,
# each of its own size, with known patterns: every count and finding exact.
. "$(dirname "$0")/record_common.inc"
VGDIR=$HT_BUILD/valgrind
if ! command -v valgrind >/dev/null 2>&1 || [ ! -e "$VGDIR/heaptape-amd64-linux" ]; then
  echo "skip access_report (valgrind or build/valgrind/heaptape-amd64-linux missing)"
  finish; exit
fi

"$HEAPTAPE" record --access -o "$T/ak.tape" -- "$PROGS/acc_known" 2>/dev/null
ok "acc_known: recorded" $?
"$HEAPTAPE" access "$T/ak.tape" >"$T/ak.txt" 2>"$T/ak.err"; ok "access: exit 0" $?
[ ! -s "$T/ak.err" ]; ok "access: nothing on stderr" $?
head -n 1 "$T/ak.txt" | grep -q '^# heaptape access: [0-9]* accesses to [0-9]* blocks at [0-9]* sites; a modify counts as a read and a write$'
ok "access: head line" $?

# site SIZE: the paragraph of the site whose one block has SIZE bytes.
site() { awk -v b="$1" 'BEGIN {RS = ""} index($0, "\n  blocks 1 bytes " b " reads ") {print}' "$T/ak.txt"; }
# has SIZE LINE WHAT: the site of SIZE has LINE (a whole line, fixed string).
has() { site "$1" | grep -qxF "$2"; ok "access: $3" $?; }
# hasnt SIZE WORDS WHAT: the site of SIZE has no line starting with WORDS.
hasnt() { ! site "$1" | grep -q "^  $2"; ok "access: $3" $?; }
counts() { site "$1" | grep -q "^  blocks 1 bytes $1 reads $2 writes $3 modifies $4 bytes-read $5 bytes-written $6 accesses/byte/s "
  ok "access: $7 (reads $2 writes $3 modifies $4 bytes $5/$6)" $?; }

counts 72 0 1000 0 0 4000 "A written 1000 times"
has 72 "  written, never read: 1 block" "A written, never read"
has 72 "  only a prefix touched: 1 block (5.6% of their bytes)" "A only bytes 0-3 of 72"
hasnt 72 "read-only" "A not read-only"
counts 264 330 33 0 2640 264 "B"
has 264 "  read-only after initialisation: 1 block" "B read-only after initialisation"
hasnt 264 "only a prefix" "B touched to its end"
hasnt 264 "written, never read" "B read"
counts 4096 5 1 0 40 8 "C"
has 4096 "  only a prefix touched: 1 block (0.2% of their bytes)" "C bytes 0-7 of 4096 (0.2%)"
has 4096 "  read-only after initialisation: 1 block" "C read-only after its store"
counts 40 1 1 0 8 8 "D"
site 40 | grep -q '^  freed too late: 1 block (idle [0-9]*% of the lifetime after the last access)$'
ok "access: D freed too late" $?
hasnt 40 "allocated too early" "D not allocated too early"
counts 136 100 100 0 400 400 "E, two threads"
hasnt 136 "only a prefix" "E touched at 64-67: not a prefix"
counts 24 50 51 50 200 204 "F, a modify counts as a read and a write"
hasnt 24 "read-only" "F modified after its first read: not read-only"
counts 56 1 1 0 8 8 "G"
site 56 | grep -q '^  allocated too early: 1 block (idle [0-9]*% of the lifetime before the first access)$'
ok "access: G allocated too early" $?
hasnt 56 "freed too late" "G freed right after its accesses"
counts 88 0 0 0 0 0 "H"
has 88 "  never accessed: 1 block" "H never accessed"
hasnt 88 "written" "H no other finding"
# Sites by accesses: A (1000) first.
sed -n 3p "$T/ak.txt" | grep -q 'acc_known.c:'; ok "access: sites named by file:line" $?
sed -n 4p "$T/ak.txt" | grep -q ' bytes 72 '; ok "access: A (most accesses) first" $?

# Access counts per offset: A's first 4 bytes 1000 times each; C (with --top)
# bytes 0-7 only, the counts capped at 1024 offsets.
hist() { awk -v b="$1" '/^site / {on = index($0, "(blocks up to " b " B)") > 0; next} on' "$2"; }
hist 72 "$T/ak.txt" | tr '\n' '|' | grep -qx '  bytes 0-3: 1000|  bytes 4-71: 0|'
ok "access: A access counts per offset" $?
"$HEAPTAPE" access --top 20 "$T/ak.txt" >/dev/null 2>&1; [ $? = 1 ]; ok "access: a text file is no tape (exit 1)" $?
"$HEAPTAPE" access --top 20 "$T/ak.tape" >"$T/ak20.txt" 2>/dev/null; ok "access --top 20: exit 0" $?
hist 4096 "$T/ak20.txt" | tr '\n' '|' | grep -qx '  bytes 0-7: 6|  bytes 8-1023: 0|  bytes 1024 on: 0 byte accesses in all|'
ok "access --top 20: C bytes 0-7 touched 6 times each, capped at 1024" $?

# JSON: the same figures.
"$HEAPTAPE" access --json --top 20 "$T/ak.tape" >"$T/ak.json" 2>/dev/null; ok "access --json: exit 0" $?
python3 - "$T/ak.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = {x["bytes"]: x for x in d["sites"] if x["blocks"] == 1}
def f(size, k): return s[size]["findings"][k]
assert d["sample"] == 1 and d["accesses"] >= 1672, d["accesses"]
assert (s[72]["reads"], s[72]["writes"], s[72]["bytes_written"]) == (0, 1000, 4000)
assert f(72, "written_never_read") == 1 and f(72, "read_only_after_init") == 0
assert abs(f(72, "prefix_only")["touched_fraction"] - 4 / 72) < 1e-3
assert (s[264]["reads"], s[264]["writes"], s[264]["bytes_read"]) == (330, 33, 2640)
assert f(264, "read_only_after_init") == 1 and f(264, "prefix_only")["blocks"] == 0
assert f(4096, "prefix_only") == {"blocks": 1, "touched_fraction": round(8 / 4096, 4)}
c = s[4096]["access_counts"]
assert c["per_offset"] == [6] * 8 + [0] * 1016 and c["beyond_1024"] == 0
assert f(40, "freed_too_late")["blocks"] == 1 and f(40, "freed_too_late")["idle_fraction"] > 0.5
assert (s[136]["reads"], s[136]["writes"]) == (100, 100)
assert (s[24]["reads"], s[24]["writes"], s[24]["modifies"]) == (50, 51, 50)
assert f(56, "allocated_too_early")["blocks"] == 1 and f(56, "freed_too_late")["blocks"] == 0
assert f(88, "never_accessed") == 1 and s[88]["reads"] + s[88]["writes"] == 0
assert s[72]["access_counts"]["per_offset"] == [1000] * 4 + [0] * 68
assert s[72]["accesses_per_byte_second"] > 0
PY
ok "access --json: counts, findings and access counts" $?

# Errors: a tape without accesses, a missing file, no file; a sampled tape warns.
"$HEAPTAPE" record -o "$T/plain.tape" -- "$PROGS/acc_known" 2>/dev/null
"$HEAPTAPE" access "$T/plain.tape" >"$T/plain.out" 2>"$T/plain.err"; rc=$?
[ $rc = 1 ] && [ ! -s "$T/plain.out" ] && [ "$(wc -l <"$T/plain.err")" = 1 ] &&
  grep -q '^heaptape: .*plain.tape: no accesses on this tape (record it with heaptape record --access)$' "$T/plain.err"
ok "access: a tape without accesses: one line, exit 1" $?
"$HEAPTAPE" access "$T/none.tape" >/dev/null 2>"$T/none.err"; [ $? = 1 ] && grep -q '^heaptape: ' "$T/none.err"
ok "access: a missing file: exit 1" $?
"$HEAPTAPE" access >/dev/null 2>&1; [ $? = 2 ]; ok "access: no file: exit 2" $?
"$HEAPTAPE" access --help | grep -q 'usage: heaptape access'; ok "access --help" $?
"$HEAPTAPE" record --access --access-sample 10 -o "$T/aks.tape" -- "$PROGS/acc_known" 2>/dev/null
"$HEAPTAPE" access "$T/aks.tape" >"$T/aks.txt" 2>"$T/aks.err" && grep -q 'sampled 1 in 10' "$T/aks.err" &&
  head -n 1 "$T/aks.txt" | grep -q '(a 1-in-10 sample)'
ok "access: a sampled tape says so" $?
# A sealed --access tape gives the journal's report (its accesses' times are
# from the tape's time zero, as its events' are: version 7).
cp "$T/ak.tape" "$T/aksealed.tape"
"$HEAPTAPE" seal "$T/aksealed.tape" >/dev/null 2>&1
"$HEAPTAPE" access "$T/ak.tape" > "$T/j.txt" 2>&1
"$HEAPTAPE" access "$T/aksealed.tape" > "$T/s.txt" 2>&1
grep -q 'freed too late' "$T/j.txt" && cmp -s "$T/j.txt" "$T/s.txt"
ok "access: the sealed tape's report is the journal's" $?
finish
