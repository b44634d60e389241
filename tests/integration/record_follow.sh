#!/bin/sh
# heaptape tests -- heaptape record follows the traced process through exec
# (a shim that execs the real program, `env X=1 prog`, a shell's PATH search
# with failed attempts), one tape per image listed in order with its
# program; children it does not record are named with the flags that would.
. "$(dirname "$0")/record_common.inc"
WF=${HT_WF:-$HT_BUILD/examples/wordfreq}
IN=$HT_ROOT/README.md
printf '#!/bin/sh\nexec "%s" "$@"\n' "$WF" > "$T/shim.sh"
printf '#!/bin/sh\n"%s" < "%s" > /dev/null\necho done\n' "$WF" "$IN" > "$T/kids.sh"
chmod +x "$T/shim.sh" "$T/kids.sh"
# allocs TAPE: allocation calls on the tape.
allocs() { "$HEAPTAPE" stats "$1" 2>/dev/null | awk '$1 == "alloc" {print $2}'; }

"$HEAPTAPE" record -o "$T/s.tape" -- "$T/shim.sh" < "$IN" > "$T/s.out" 2> "$T/s.err"; rc=$?
ok "shim: exit 0 ($rc)" $rc
[ -f "$T/s.wordfreq.tape" ] && [ "$(allocs "$T/s.wordfreq.tape")" -gt 10000 ]
ok "shim: the exec'd program has its tape, with its allocations ($(allocs "$T/s.wordfreq.tape" 2>/dev/null))" $?
[ -f "$T/s.tape" ] && "$HEAPTAPE" dump --no-stacks "$T/s.tape" | tail -n 1 | grep -q 'trailer yes'
ok "shim: the shell's own tape is complete" $?
grep -q "tape 1 of 2.*s.tape" "$T/s.err" && grep -q "^heaptape: wordfreq (pid [0-9]*, tape 2 of 2)" "$T/s.err"
ok "shim: closing lines list both tapes in order, with their programs" $?
cat "$T/s.err"

"$HEAPTAPE" record -o "$T/e.tape" -- env X=1 "$WF" < "$IN" > /dev/null 2> "$T/e.err"; rc=$?
[ $rc = 0 ] && [ "$(allocs "$T/e.wordfreq.tape")" -gt 10000 ]
ok "env X=1 prog: prog recorded ($(allocs "$T/e.wordfreq.tape" 2>/dev/null) allocations)" $?

# A shell searching PATH tries directories that fail before the right one:
# the failed execs go on in the same tape, no tape each.
d=$(dirname "$WF")
"$HEAPTAPE" record -o "$T/p.tape" -- env PATH="/nonexistent/a:/nonexistent/b:$d" /bin/sh -c 'exec wordfreq' \
  < "$IN" > /dev/null 2> "$T/perr.txt"; rc=$?
n=$(ls "$T" | grep -c '^p\.')
[ $rc = 0 ] && [ "$n" = 3 ]; ok "PATH search: env, sh and wordfreq tapes only, failed attempts add none ($n: $(ls "$T" | grep '^p\.' | tr '\n' ' '))" $?
sht=$(ls "$T" | grep '^p\.' | grep -v '^p\.tape$' | grep -v wordfreq)
"$HEAPTAPE" dump --no-stacks "$T/$sht" 2>&1 | tail -n 1 | grep -q 'damaged 0 .*trailer yes'
ok "PATH search: the shell's tape, its failed execs taken back, reads whole ($sht)" $?

"$HEAPTAPE" record -o "$T/k.tape" -- "$T/kids.sh" > /dev/null 2> "$T/k.err"; rc=$?
[ $rc = 0 ] && grep -q "child process.* not recorded (wordfreq).*--follow-fork.*--follow-exec" "$T/k.err"
ok "a child not recorded is named, with the flags that record it" $?
cat "$T/k.err"
"$HEAPTAPE" record --follow-exec -o "$T/f.tape" -- "$T/kids.sh" > /dev/null 2> "$T/f.err"; rc=$?
ft=$(sed -n 's/^heaptape: wordfreq (pid [0-9]*, tape 2 of 2).*; tape \([^ ]*\) .*/\1/p' "$T/f.err")
[ $rc = 0 ] && [ -n "$ft" ] && [ "$(allocs "$ft")" -gt 10000 ]
ok "--follow-exec: the child's program recorded and listed ($ft)" $?
! grep -q "not recorded" "$T/f.err"; ok "--follow-exec: nothing left unrecorded" $?
finish
