#!/bin/sh
# heaptape -- the live view (docs/LIVE.md): the follower against the report,
# `heaptape live` on bad files, and `record --live` / `live FILE` driven in
# tmux (send-keys, capture-pane): the top site on screen, sort, bytes/calls,
# the stack, pause, resize, the program's crash and kill, Ctrl-C, scrubbing,
# and the terminal restored after each; record --live seals the tape while
# the program runs.
. "$(dirname "$0")/record_common.inc"
tmp=$T
# expect NAME WANT_EXIT STDERR_REGEX CMD...: run, check exit status and stderr.
expect() {
  name=$1 want=$2 re=$3; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ "$rc" = "$want" ] && grep -Eq "$re" "$tmp/err"
  r=$?; [ $r = 0 ] || echo "  exit $rc, want $want; stderr: $(head -c 300 "$tmp/err")"
  ok "$name" $r
}
GROW=$PROGS/live_grow

# -- The follower fed in chunks = the report of the finished tape ----------------
# (journals: what a follower reads while a tape is written; record seals by default)
"$HEAPTAPE" record --journal -o "$T/s.tape" -- "$PROGS/rec_stress" >/dev/null 2>&1
"$HEAPTAPE" record --journal -o "$T/g.tape" -- "$GROW" 1 >/dev/null 2>&1
for t in s g; do
  "$HT_BUILD/tests/test_follow" "$T/$t.tape" >"$T/$t.sites" 2>"$T/$t.ferr"
  ok "follower in chunks = whole ($t)" $?
  "$HEAPTAPE" report --json "$T/$t.tape" >"$T/$t.json" 2>/dev/null
  python3 - "$T/$t.json" "$T/$t.sites" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
fol = {}
for line in open(sys.argv[2]):
    name, allocs, nbytes, live, live_n = line.rstrip("\n").split("\t")
    fol[name] = (int(allocs), int(nbytes), int(live), int(live_n))
bad = 0
for key in ("calls", "bytes", "leaks", "peak"):
    for e in rep.get(key, []):
        want = (e["allocs"], e["bytes"], e["leaked"], e["leaked_blocks"])
        got = fol.get(e["location"])
        if got != want:
            print("  %s: report %s, follower %s" % (e["location"], want, got)); bad = 1
sys.exit(bad)
PY
  ok "follower's sites = report --json's ($t)" $?
done

# -- heaptape live on bad files: one line, exit 1, nothing drawn ---------------
head -c 20 "$T/g.tape" >"$T/cut.tape"
echo "not a tape" >"$T/text.tape"
cp "$T/s.tape" "$T/bad.tape"
printf 'XXXXXXXXXXXXXXXXXXXXXXXX' | dd of="$T/bad.tape" bs=1 seek=200000 conv=notrunc 2>/dev/null
for f in missing cut text bad; do
  expect "live $f.tape: one line, exit 1" 1 "^heaptape: .*$f.tape" "$HEAPTAPE" live "$T/$f.tape"
  n=$(wc -l <"$tmp/err"); esc=$(tr -dc '\033' <"$tmp/out" | wc -c)
  ok "live $f.tape: terminal untouched (1 line, no escapes)" "$([ "$n" = 1 ] && [ "$esc" = 0 ] && [ ! -s "$tmp/out" ]; echo $?)"
done

# -- In tmux ---------------------------------------------------------------------
if ! command -v tmux >/dev/null 2>&1; then
  ok "tmux not installed (scripts/install-deps.sh)" 1; finish; exit 1
fi
S="ht-live-$$"
TM="tmux -L $S"
trap '$TM kill-server 2>/dev/null; rm -rf "$T"' EXIT
$TM -f /dev/null new-session -d -s t -x 100 -y 30 "cd '$T' && PS1='PROMPT\$ ' TERM=xterm sh" || {
  echo "FAIL tmux session"; echo "0 passed, 1 failed"; exit 1; }
$TM set -g remain-on-exit on 2>/dev/null
screen() { $TM capture-pane -t t -p; }
# wait_for REGEX [SECONDS]: poll the screen until it matches (no-hang limit).
wait_for() {
  i=0; lim=$((${2:-20} * 10))
  while [ $i -lt $lim ]; do
    screen | grep -Eq -- "$1" && return 0
    sleep 0.1; i=$((i + 1))
  done
  echo "  (screen, waiting for /$1/:)"; screen | sed 's/^/  | /'
  return 1
}
keys() { $TM send-keys -t t "$@"; }
run() { keys "clear" Enter; sleep 0.2; keys "$*" Enter; }
# sane: after quitting, the shell's prompt and no view left; stty as usual.
sane() {
  wait_for "$1" && ! screen | grep -q "q quit  s sort"
  ok "$2: prompt back, no view left" $?
  rm -f "$T/stty"; keys "stty -a >'$T/stty'" Enter
  i=0; while [ ! -s "$T/stty" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
  grep -q -- " icanon" "$T/stty" && grep -q -- " echo " "$T/stty"
  ok "$2: terminal modes restored (icanon echo)" $?
}

run "'$HEAPTAPE' record --live -o '$T/l.tape' -- '$GROW' 60; echo DONE-\$?"
wait_for '[0-9.]+[KM] +[0-9.]+[KMB]* +[0-9.]+[KM] +[0-9]+ +grow_cache .*live_grow.c'
ok "record --live: top site grow_cache and its live bytes on screen" $?
wait_for 'sorted by live, bytes'; ok "sorted by live bytes at first" $?
keys s; wait_for 'sorted by rate, bytes'; ok "s: sorted by rate" $?
screen | grep -A1 'sorted by rate' | tail -n 1 | grep -q 'churn_buffers\|grow_cache'
ok "by rate: the busy sites first" $?
keys b; wait_for 'sorted by rate, blocks/calls'; ok "b: calls instead of bytes" $?
wait_for 'churn_buffers'
screen | grep -A1 'sorted by rate, blocks' | tail -n 1 | grep -q churn_buffers
ok "by call rate: churn_buffers first (200 calls a step)" $?
keys b s s; wait_for 'sorted by live, bytes'; ok "s s b: back to live bytes" $?
keys Enter; wait_for 'STACK of grow_cache'
ok "enter: the stack view of grow_cache" $?
screen | grep -q ' grow_cache ' && screen | grep -q ' main ' && screen | grep -q '__libc_start'
ok "the whole stack: grow_cache, main, __libc_start..." $?
keys Escape; wait_for 'sorted by live'; ok "esc: back to the table" $?
keys p; wait_for 'PAUSED'; ok "p: paused" $?
keys p; sleep 0.3; ! screen | grep -q PAUSED; ok "p again: following" $?
$TM resize-window -t t -x 60 -y 20 2>/dev/null || $TM resize-pane -t t -x 60 -y 20
sleep 1.5
w=$(screen | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }')
screen | head -n 1 | grep -q 'heaptape live' && screen | tail -n 1 | grep -q 'q quit' && [ "$w" -le 60 ]
ok "resized to 60x20: the layout follows (widest line $w)" $?
screen | grep -q 'grow_cache'; ok "resized: the site still shown" $?
$TM resize-window -t t -x 100 -y 30 2>/dev/null || $TM resize-pane -t t -x 100 -y 30
pid=$(ls "$T" | sed -n 's/^live_grow\.\([0-9]*\)\.out$/\1/p' | head -n 1)
[ -n "$pid" ] && kill -SEGV "$pid"
wait_for 'killed by SIGSEGV'; ok "the program's crash (SIGSEGV) is shown" $?
keys q; sane 'DONE-139' "after a crash, q"
grep -q OUTPUT-MARKER "$T/live_grow.$pid.out" && ! screen | grep -q OUTPUT-MARKER
ok "the program's stdout/stderr went to live_grow.PID.out, not the screen" $?
"$HEAPTAPE" report "$T/l.tape" >/dev/null 2>&1; ok "the tape is reported after the view" $?

run "'$HEAPTAPE' record --live -o '$T/k.tape' -- '$GROW' 60; echo DONE-\$?"
wait_for 'grow_cache'; ok "second run: on screen" $?
pid=$(ls -t "$T" | sed -n 's/^live_grow\.\([0-9]*\)\.out$/\1/p' | head -n 1)
kill -KILL "$pid"
wait_for 'killed by SIGKILL'; ok "SIGKILL of the program is shown" $?
keys q; sane 'DONE-137' "after SIGKILL, q"

run "'$HEAPTAPE' record --live -o '$T/c.tape' -- '$GROW' 60; echo DONE-\$?"
wait_for 'grow_cache'; ok "third run: on screen" $?
keys C-c; sane 'DONE-130' "Ctrl-C"

# record --live seals while the program runs: the view is fed by the sealing
# pass (one pass over the journal), the tape is sealed when the program
# exits, as heaptape seal seals the journal (kept with --keep-journal).
# Should a packet come too late on a loaded machine, the sealer gives up and
# seals after the run (the log says so): then once more.
for try in 1 2; do
  rm -f "$T/z.tape" "$T/z.tape.journal" "$T/z.err"
  run "HEAPTAPE_SEAL_LOG=1 '$HEAPTAPE' record --live --keep-journal -o '$T/z.tape' -- '$GROW' 2 2>'$T/z.err'; echo DONE-\$?"
  wait_for 'grow_cache .*live_grow.c'; ok "record --live (sealing): on screen" $?
  wait_for 'program exited 0'; ok "record --live (sealing): the program's end shown" $?
  keys q; wait_for 'DONE-0'; ok "record --live (sealing): q, exit 0" $?
  grep -q 'sealed while the program ran' "$T/z.err" && break
done
grep -q 'sealed while the program ran' "$T/z.err"
ok "record --live: sealed while the program ran ($(grep -o 'sealed [a-z ]*' "$T/z.err" | head -n 1))" $?
"$HEAPTAPE" stats "$T/z.tape" 2>/dev/null | grep -q '^  sealed  *yes: report'
ok "record --live: the tape is sealed" $?
[ ! -e "$T/z.tape.sealing" ] && "$HEAPTAPE" stats "$T/z.tape.journal" 2>/dev/null | grep -q 'format version   1'
ok "record --live: no partial seal left; the journal kept as asked" $?
cp "$T/z.tape.journal" "$T/zoff.tape"
"$HEAPTAPE" seal "$T/zoff.tape" >/dev/null 2>&1
cmp -s "$T/z.tape" "$T/zoff.tape"
ok "record --live: the sealed tape is heaptape seal's of the journal, byte for byte" $?
"$HEAPTAPE" report "$T/z.tape" 2>/dev/null | grep -q grow_cache
ok "record --live: its report names grow_cache" $?

run "'$HEAPTAPE' live '$T/l.tape'; echo DONE-\$?"
wait_for 'tape closed'; ok "live FILE on a finished tape: closed" $?
keys Left Left Left Left Left Left Left Left Left Left
wait_for 'at [0-9.]+s of [0-9.]+s'; ok "left: the moment moves back (scrub)" $?
a=$(screen | sed -n 2p)
keys Left Left Left Left Left Left Left Left Left Left Left Left Left Left Left Left Left Left Left Left
sleep 0.5; b=$(screen | sed -n 2p)
[ "$a" != "$b" ]; ok "further back: another moment, other figures" $?
keys Right; sleep 0.3; ok "right: forward" "$(screen | grep -Eq 'of [0-9.]+s'; echo $?)"
keys n; wait_for '\(now\)'; ok "n: back to now" $?
keys q; sane 'DONE-0' "live FILE, q"

# live --pid: a program recorded elsewhere (plain LD_PRELOAD), its end noticed.
run "HEAPTAPE_OUTPUT='$T/p.tape' LD_PRELOAD='$LIB' '$GROW' 60 >/dev/null 2>&1 & echo \$! >'$T/p.pid'; '$HEAPTAPE' live --pid \$! '$T/p.tape'; echo DONE-\$?"
wait_for 'grow_cache .*live_grow.c'; ok "live --pid: a preloaded program's top site, named on the fly" $?
screen | head -n 1 | grep -q '\[running\]'; ok "live --pid: running" $?
kill -TERM "$(cat "$T/p.pid")"
wait_for 'program ended'; ok "live --pid: the process's end is shown" $?
keys q; sane 'DONE-0' "live --pid, q"

# attach --live: a running program's heap; quitting the view detaches. The
# program is attached once it runs (its first allocations made, libc loaded):
# $! right after `&` may still be the shell before exec.
run "'$GROW' 60 >'$T/a.out' 2>&1 & echo \$! >'$T/a.pid'; until grep -q OUTPUT-MARKER '$T/a.out'; do sleep 0.1; done; '$HEAPTAPE' attach --live -o '$T/a.tape' \$!; echo DONE-\$?"
wait_for 'grow_cache .*live_grow.c'; ok "attach --live: the attached program's top site" $?
keys q; sane 'DONE-0' "attach --live, q"
screen | grep -q 'detached from process'; ok "attach --live: q detached" $?
kill -0 "$(cat "$T/a.pid")"; ok "attach --live: the program runs on after the detach" $?
kill -TERM "$(cat "$T/a.pid")"
"$HEAPTAPE" report "$T/a.tape" >/dev/null 2>&1; ok "attach --live: its tape reads" $?
expect "attach --live --duration: refused" 2 "one at a time" "$HEAPTAPE" attach --live --duration 1 1

# heaptape's own crash: the handler restores the terminal (modes, screen).
run "'$HEAPTAPE' live '$T/l.tape'; echo DONE-\$?"
wait_for 'tape closed'; ok "live FILE again: on screen" $?
vpid=$(pgrep -f "heaptape live $T/l.tape" | head -n 1)
[ -n "$vpid" ] && kill -SEGV "$vpid"
sane 'DONE-139' "heaptape itself killed by SIGSEGV"

finish
