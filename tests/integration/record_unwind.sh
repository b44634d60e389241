#!/bin/sh
# heaptape -- integration tests of the libunwind-mode stack cache: every
# allocation of tests/progs/rec_unwind must carry the stack its size tags.
# Needs HEAPTAPE, HT_BUILD (HT_ROOT optional); see record_common.inc.
set -u
. "$(dirname "$0")/record_common.inc"
PROG=$PROGS/rec_unwind
[ -x "$PROG" ] || { echo "FAIL missing $PROG"; echo "0 passed, 1 failed"; exit 1; }

# verify DUMP MAXREC (the dump lists STACK definitions last: two passes): print one line per allocation whose stack is wrong
# (MAXREC caps the expected frames of rec when HEAPTAPE_FRAMES truncates),
# then "checked N".
verify() {
  awk -v maxrec="$2" '
    FNR == NR { if ($1 == "STACK") { sub("parent=", "", $3); par[$2] = $3; fn[$2] = $5 }; next }
    $4 == "ALLOC" {
      n = $7 + 0; id = $8; sub("stack=", "", id)
      if (!(n == 1001 || n == 1002 || n == 1011 || n == 1012 || n == 3000 || n == 5000 ||
            (n >= 2000 && n <= 2020) || (n >= 4000 && n < 4064))) next
      s = ""; k = 0
      for (i = id; i != 0 && i != ""; i = par[i]) { s = fn[i] " " s; k++ }
      s = " " s; bad = 0
      if (n == 1001) bad = s !~ / X A $/ || s ~ / Y /
      if (n == 1002) bad = s !~ / Y A $/ || s ~ / X /
      if (n == 1011) bad = s !~ / X2 A2 $/ || s ~ / Y2 /
      if (n == 1012) bad = s !~ / Y2 A2 $/ || s ~ / X2 /
      if (n == 3000) bad = s !~ / M A $/
      if (n == 5000) bad = s !~ (maxrec < 12 ? / sig_handler $/ : /sig_raiser .*sig_handler $/)
      if (n >= 2000 && n <= 2020) {
        want = n - 2000 + 1; if (want > maxrec) want = maxrec
        nw = split(s, w, " "); c = 0; for (i = 1; i <= nw; i++) c += w[i] == "rec"
        bad = c != want || s !~ / rec $/
      }
      if (n >= 4000 && n < 4064) {
        v = n - 4000; got = ""; want = ""
        for (b = 0; b < 6; b++) want = want (int(v / 2 ^ b) % 2 ? "P" : "Q")
        t = s; while (match(t, / [PQ] /)) { got = got substr(t, RSTART + 1, 1); t = substr(t, RSTART + 2) }
        bad = got != (maxrec < 64 ? substr(want, 6 - length(got) + 1) : want) || s !~ / step $/
      }
      checked++
      if (bad && nbad++ < 5) print "size " n ":" s
    }
    END { print "checked " checked + 0 }' "$1" "$1"
}

# run NAME MAXREC ENV...: record the program (symbolised), check every tagged stack.
run() {
  name=$1 maxrec=$2; shift 2
  rm -f "$T/$name.tape"
  env "$@" "$HEAPTAPE" record -o "$T/$name.tape" -- "$PROG" 2>"$T/$name.err"
  ok "${name}_runs" $?
  "$HEAPTAPE" dump "$T/$name.tape" >"$T/$name.dump" 2>&1
  verify "$T/$name.dump" "$maxrec" >"$T/$name.out"
  checked=$(sed -n 's/^checked //p' "$T/$name.out")
  # 4 threads x 400 rounds x 9 tagged allocations, plus 8 in handlers each.
  [ "$checked" -ge 14400 ] 2>/dev/null; ok "${name}_all_checked ($checked)" $?
  grep -v '^checked' "$T/$name.out" | head -n 5
  [ "$(grep -vc '^checked' "$T/$name.out")" = 0 ]; ok "${name}_stacks_right" $?
}

run libunwind 999 HEAPTAPE_UNWIND=libunwind
run default 999
# A 4-frame cap: walks stop early, so a truncated walk is reused only when
# the new one would stop at the cap too.
run frames4 4 HEAPTAPE_UNWIND=libunwind HEAPTAPE_FRAMES=4
# The cap (plus slack for our own frames) in the middle of the recursion.
run frames12 12 HEAPTAPE_UNWIND=libunwind HEAPTAPE_FRAMES=12
finish
