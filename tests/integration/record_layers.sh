#!/bin/sh
# heaptape tests -- the recorder's layering: its files call one another in
# the one order src/record/recdef.h lists (read from the built objects), and
# nothing outside src/record/ and src/base/ includes a file of src/record/.
: "${HT_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${HT_BUILD:=$HT_ROOT/build}"
pass=0 fail=0
ok() { if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "ok   $1"; else fail=$((fail + 1)); echo "FAIL $1"; fi; }
O=$HT_BUILD/obj/src/record

# The order: the .c names of recdef.h's comment, first to last.
order=$(sed -n '/^\*\* The recorder.s files/,/^\*\//p' "$HT_ROOT/src/record/recdef.h" |
        grep -o '[a-z_]*\.c' | sed 's/\.c$//')
listed=$(printf '%s\n' $order | sort | tr '\n' ' ')
built=$(cd "$HT_ROOT/src/record" && ls *.c | sed 's/\.c$//' | sort | tr '\n' ' ')
[ "$listed" = "$built" ]; ok "recdef.h lists every file of src/record/ once" $?

# Calls against the order: a file using an ht_ function or variable of a file listed after it.
bad=$({
  i=0; for f in $order; do i=$((i + 1)); echo "R $f $i"; done
  for f in $order; do
    nm "$O/$f.o" | awk -v f="$f" '$2 ~ /^[TDBR]$/ && $3 ~ /^ht_/ {print "D", $3, f}
                                  $1 == "U" && $2 ~ /^ht_/ {print "U", $2, f}'
  done; } | awk '$1 == "R" {rank[$2] = $3} $1 == "D" {def[$2] = $3} $1 == "U" {use[NR] = $2 " " $3}
    END {for (k in use) {split(use[k], u, " "); d = def[u[1]];
         if (d != "" && rank[d] >= rank[u[2]]) print u[2] " -> " d " (" u[1] ")"}}')
[ -z "$bad" ]; ok "no call against the order${bad:+: $bad}" $?

out=$(cd "$HT_ROOT" && grep -rln '#include.*record/' --include='*.c' --include='*.h' \
      cli lua include src tests bench examples 2>/dev/null | grep -v '^src/record/')
[ -z "$out" ]; ok "no file outside src/record/ includes it${out:+: $out}" $?
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
