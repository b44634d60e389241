#!/bin/sh
# heaptape tests -- heaptape attach and detach on running processes: the
# tape's count of a window equals the program's own, the program runs on
# unchanged (output, threads, descriptors), attach again, 8 threads in the
# middle of heavy allocation, python3 and sqlite3, and each refusal.
. "$(dirname "$0")/record_common.inc"
LOOP=$PROGS/attach_loop

# until_line FILE REGEX: wait (at most 20 s) for a line in FILE.
until_line() {
  i=0
  while ! grep -Eq "$2" "$1" 2>/dev/null; do
    i=$((i + 1)); [ $i -gt 400 ] && return 1; sleep 0.05
  done
}
# window TAPE: allocations on the tape between the 999001 and 999002 markers.
window() {
  "$HEAPTAPE" dump --no-stacks "$1" 2>/dev/null | awk '$4 == "ALLOC" && $7 == 999002 { on = 0 }
    on && $4 == "ALLOC" { n++ } $4 == "ALLOC" && $7 == 999001 { on = 1 } END { print n + 0 }'
}
# fds PID: the process's descriptors and what they name.
fds() { for f in /proc/$1/fd/*; do printf '%s %s\n' "${f##*/}" "$(readlink "$f")"; done | sort; }

# -- The window: attach, count, detach with heaptape detach --------------------
want=$("$LOOP" 2>/dev/null & p=$!; sleep 0.3; kill -USR2 $p; wait $p)
"$LOOP" >"$T/loop.out" 2>"$T/loop.err" & P=$!
until_line "$T/loop.err" '^ready'
fd0=$(fds $P)
"$HEAPTAPE" attach -o "$T/a.tape" $P 2>"$T/att.err" & A=$!
until_line "$T/att.err" 'recording process'; ok "attach: recording starts ($(head -n 1 "$T/att.err"))" $?
[ "$(ls /proc/$P/task | wc -l)" = 2 ]; ok "attach: the recorder's writer thread runs in the process" $?
kill -USR1 $P; sleep 2; kill -USR1 $P
until_line "$T/loop.err" '^window'
"$HEAPTAPE" detach $P 2>"$T/det.err"; rc=$?
ok "detach: exit 0 ($(cat "$T/det.err"))" $rc
wait $A; rc=$?
ok "attach: ends 0 after detach ($(tail -n 1 "$T/att.err"))" $rc
got=$(sed -n 's/^window //p' "$T/loop.err"); tw=$(window "$T/a.tape")
[ -n "$got" ] && [ "$got" -gt 0 ] && [ "$tw" = "$got" ]; ok "window: the tape's allocations equal the program's count ($tw vs $got)" $?
sum=$(check "$T/a.tape"); r=$?
ok "window: tape orderly, frees of earlier blocks apart ($sum)" $r
"$HEAPTAPE" dump --no-stacks "$T/a.tape" | tail -n 1 | grep -q 'trailer yes'; ok "window: trailer written" $?
for k in malloc calloc realloc aligned valloc; do
  "$HEAPTAPE" dump --no-stacks "$T/a.tape" | grep -q " ALLOC $k "; ok "window: $k recorded" $?
done
rep=$("$HEAPTAPE" report "$T/a.tape" 2>&1)
printf '%s\n' "$rep" | grep -q 'attached .* after the process started'; ok "report: says the recording started late" $?
printf '%s\n' "$rep" | grep -Eq 'freed, allocated before recording +[1-9]'; ok "report: frees of earlier blocks counted apart" $?
printf '%s\n' "$rep" | grep -q 'attach_loop.c'; ok "report: sites named" $?
[ "$(ls /proc/$P/task | wc -l)" = 1 ]; ok "after detach: no extra thread" $?
[ "$(fds $P)" = "$fd0" ]; ok "after detach: no extra descriptor" $?
"$HEAPTAPE" detach $P 2>"$T/det2.err"; rc=$?
[ $rc = 1 ] && grep -q 'not being recorded' "$T/det2.err"; ok "detach again: refused ($(cat "$T/det2.err"))" $?

# -- Attach again to the same process, --duration ---------------------------------
kill -USR1 $P
"$HEAPTAPE" attach --duration 1.5 -o "$T/b.tape" $P 2>"$T/att2.err"; rc=$?
ok "attach again: exit 0 ($(tail -n 1 "$T/att2.err"))" $rc
sum=$(check "$T/b.tape"); r=$?
[ $r = 0 ] && [ "$(field allocs "$sum")" -gt 1000 ]; ok "attach again: tape orderly ($sum)" $?
[ "$(ls /proc/$P/task | wc -l)" = 1 ] && [ "$(fds $P)" = "$fd0" ]; ok "attach again: no extra thread or descriptor after" $?
kill -USR1 $P; until_line "$T/loop.err" '^window.*' ; kill -USR2 $P; wait $P; rc=$?
ok "program: exits 0 after two attaches" $rc
[ "$(cat "$T/loop.out")" = "$want" ]; ok "program: output identical to a run without attach" $?

# -- 8 threads in the middle of heavy allocation ---------------------------------------
"$LOOP" 8 >"$T/m.out" 2>"$T/m.err" & P=$!
until_line "$T/m.err" '^ready'; sleep 0.3
"$HEAPTAPE" attach --duration 1 -o "$T/m.tape" $P 2>"$T/attm.err"; rc=$?
ok "8 threads: attach exits 0" $rc
sum=$(check "$T/m.tape"); r=$?
ok "8 threads: zero ordering anomalies ($sum)" $r
[ "$(field lost "$sum")" = 0 ]; ok "8 threads: nothing lost" $?
[ "$(ls /proc/$P/task | wc -l)" = 8 ]; ok "8 threads: no extra thread after" $?
kill -USR2 $P; wait $P; ok "8 threads: program exits 0" $?

# -- python3 and sqlite3 -------------------------------------------------------------------------
PY='import sys, time
d = {}
t = time.time()
while time.time() - t < 4:
    for i in range(300): d[i % 500] = [str(i)] * (100 + i % 7)
    time.sleep(0.001)
s = {}
for i in range(100000): s[i % 1000] = s.get(i % 1000, "") + "x"
print(sum(len(v) for v in s.values()))'
pwant=$(/usr/bin/python3 -c "$PY")
/usr/bin/python3 -c "$PY" >"$T/py.out" & P=$!
sleep 0.5
"$HEAPTAPE" attach --duration 1.5 -o "$T/py.tape" $P 2>"$T/attpy.err"; rc=$?
ok "python3: attach exits 0 ($(tail -n 1 "$T/attpy.err"))" $rc
wait $P; ok "python3: exits 0" $?
[ "$(cat "$T/py.out")" = "$pwant" ]; ok "python3: output unchanged" $?
sum=$(check "$T/py.tape"); r=$?
[ $r = 0 ] && [ "$(field allocs "$sum")" -gt 100 ]; ok "python3: tape orderly ($sum)" $?
"$HEAPTAPE" report "$T/py.tape" 2>&1 | grep -q '_PyEval_EvalFrameDefault'; ok "python3: sites in the interpreter" $?

mkfifo "$T/sq.in"
sq() { echo "create table t$1(a,b); with recursive c(x) as (select 1 union all select x+1 from c where x<30000) insert into t$1 select x, hex(zeroblob(2)||x) from c; select count(*), sum(a), max(b) from t$1;"; }
swant=$( (sq 1; sq 2) | sqlite3 :memory:)
sqlite3 :memory: <"$T/sq.in" >"$T/sq.out" & P=$!
exec 7>"$T/sq.in"
sq 1 >&7; sleep 0.3
"$HEAPTAPE" attach -o "$T/sq.tape" $P 2>"$T/attsq.err" & A=$!
until_line "$T/attsq.err" 'recording process'
sq 2 >&7; sleep 1
kill -INT $A; wait $A; rc=$?
ok "sqlite3: attach ends 0 on SIGINT ($(tail -n 1 "$T/attsq.err"))" $rc
exec 7>&-
wait $P; ok "sqlite3: exits 0" $?
[ "$(cat "$T/sq.out")" = "$swant" ]; ok "sqlite3: output unchanged" $?
sum=$(check "$T/sq.tape"); r=$?
[ $r = 0 ] && [ "$(field allocs "$sum")" -gt 1000 ]; ok "sqlite3: tape orderly ($sum)" $?
"$HEAPTAPE" report "$T/sq.tape" 2>&1 | grep -q 'sqlite3'; ok "sqlite3: sites in libsqlite3" $?

# -- The process ends while attached ---------------------------------------------------------------
"$LOOP" >/dev/null 2>"$T/e.err" & P=$!
until_line "$T/e.err" '^ready'
"$HEAPTAPE" attach -o "$T/e.tape" $P 2>"$T/atte.err" & A=$!
until_line "$T/atte.err" 'recording process'
sleep 0.5; kill -USR2 $P; wait $P
wait $A; rc=$?
[ $rc = 0 ] && grep -q 'exited' "$T/atte.err"; ok "process exits while attached: attach says so, exit 0 ($rc: $(sed -n 2p "$T/atte.err"))" $?
"$HEAPTAPE" dump --no-stacks "$T/e.tape" | tail -n 1 | grep -q 'trailer yes'; ok "process exits while attached: the tape has its trailer" $?

# -- heaptape attach killed: heaptape detach finishes alone -----------------------------------------
"$LOOP" >/dev/null 2>"$T/k.err" & P=$!
until_line "$T/k.err" '^ready'
"$HEAPTAPE" attach -o "$T/k.tape" $P 2>"$T/attk.err" & A=$!
until_line "$T/attk.err" 'recording process'
kill -9 $A; wait $A 2>/dev/null
[ "$(ls /proc/$P/task | wc -l)" = 2 ]; ok "attach killed: the process goes on recording" $?
"$HEAPTAPE" detach $P 2>"$T/detk.err"; rc=$?
ok "attach killed: heaptape detach ends it alone (exit $rc: $(tail -n 1 "$T/detk.err"))" $rc
"$HEAPTAPE" dump --no-stacks "$T/k.tape" | tail -n 1 | grep -q 'trailer yes'; ok "attach killed: the tape has its trailer" $?
"$HEAPTAPE" report "$T/k.tape" 2>&1 | grep -q 'attach_loop.c'; ok "attach killed: the tape is symbolised" $?
[ "$(ls /proc/$P/task | wc -l)" = 1 ]; ok "attach killed: no extra thread after detach" $?
kill -USR2 $P; wait $P; ok "attach killed: program exits 0" $?

# -- fork and exec while attached ---------------------------------------------------------------------
# A forked child runs with the hooks put back (and the parent goes on
# recording); an exec ends the recording at the exec (a tape without
# trailer, readable up to the last flush).
cat >"$T/fe.py" <<'PY'
import os, signal, time
def on_fork(*a):
    pid = os.fork()
    if pid == 0:
        s = [str(i) * 100 for i in range(20000)]
        print("child", len("".join(s)), flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
    print("parent waited", flush=True)
signal.signal(signal.SIGUSR1, on_fork)
# the new program waits for fe.go: attach sees the exec however slow it is
signal.signal(signal.SIGHUP, lambda *a: os.execv("/bin/sh", ["sh", "-c",
    'while [ ! -e "$0" ]; do sleep 0.05; done', os.environ["FE_GO"]]))
d = {}
print("ready", flush=True)
while True:
    for i in range(300): d[i % 500] = [str(i)] * (100 + i % 7)
    time.sleep(0.001)
PY
FE_GO="$T/fe.go" /usr/bin/python3 "$T/fe.py" >"$T/fe.out" 2>&1 & P=$!
until_line "$T/fe.out" '^ready'
"$HEAPTAPE" attach -o "$T/fe.tape" $P 2>"$T/attfe.err" & A=$!
until_line "$T/attfe.err" 'recording process'
kill -USR1 $P
until_line "$T/fe.out" '^parent waited'; ok "fork while attached: the child runs and ends ($(grep child "$T/fe.out"))" $?
[ "$(ls /proc/$P/task | wc -l)" = 2 ]; ok "fork while attached: the parent still records" $?
kill -HUP $P
(sleep 30; touch "$T/fe.go") >/dev/null 2>&1 & G=$!  # no hang if attach waits for an exit
wait $A; rc=$?
touch "$T/fe.go"; kill $G 2>/dev/null
[ $rc = 0 ] && grep -q 'replaced its program (exec)' "$T/attfe.err"; ok "exec while attached: attach says so, exit 0 ($(sed -n 2p "$T/attfe.err"))" $?
wait $P; ok "exec while attached: the new program runs to its end" $?
sum=$(check "$T/fe.tape"); r=$?
[ $r = 0 ] && [ "$(field allocs "$sum")" -gt 100 ]; ok "exec while attached: the tape reads, orderly ($sum)" $?

# -- Refusals: one line, exit 1, nothing done ------------------------------------------------------
tmp=$T
. "$(dirname "$0")/expect.inc"
expect "no such process" 1 '^heaptape: attach: no such process: 999999$' "$HEAPTAPE" attach 999999
expect "not a pid" 2 'PID takes a process id' "$HEAPTAPE" attach abc
"$PROGS/attach_static" & S=$!
sleep 0.1
expect "statically linked" 1 'statically linked' "$HEAPTAPE" attach -o "$T/s.tape" $S
[ ! -e "$T/s.tape" ]; ok "statically linked: no tape" $?
kill $S
"$LOOP" >/dev/null 2>"$T/r.err" & P=$!
until_line "$T/r.err" '^ready'
kill -STOP $P; sleep 0.1
expect "stopped by SIGSTOP" 1 "process $P is stopped .*kill -CONT $P" "$HEAPTAPE" attach -o "$T/st.tape" $P
kill -CONT $P
"$HEAPTAPE" attach -o "$T/r.tape" $P 2>"$T/attr.err" & A=$!
until_line "$T/attr.err" 'recording process'
expect "attached twice" 1 "already being recorded \\(heaptape attach, pid $A" "$HEAPTAPE" attach -o "$T/r2.tape" $P
kill -TERM $A; wait $A; ok "attached twice: the first recording ends 0 on SIGTERM" $?
kill -USR2 $P; wait $P
env LD_PRELOAD="$LIB" HEAPTAPE_OUTPUT="$T/pre.tape" "$LOOP" >/dev/null 2>"$T/pre.err" & P=$!
until_line "$T/pre.err" '^ready'
expect "preloaded" 1 'already being recorded \(libheaptape.so preloaded\)' "$HEAPTAPE" attach $P
kill -USR2 $P; wait $P
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
  setpriv --reuid=65534 --regid=65534 --clear-groups sleep 30 & S=$!
  sleep 0.2
  expect "no CAP_SYS_PTRACE, another user's process" 1 \
    "ptrace not permitted \\(it is another user's process \\(uid 65534\\) and heaptape lacks CAP_SYS_PTRACE\\)" \
    setpriv --bounding-set=-sys_ptrace --inh-caps=-sys_ptrace "$HEAPTAPE" attach $S
  kill $S
  "$LOOP" >/dev/null 2>"$T/u.err" & P=$!
  until_line "$T/u.err" '^ready'
  expect "unprivileged user, root's process" 1 "ptrace not permitted \\(it is another user's process \\(uid 0\\)" \
    setpriv --reuid=65534 --regid=65534 --clear-groups "$HEAPTAPE" attach $P
  kill -USR2 $P; wait $P
else
  echo "skip ptrace permission cases (not root or no setpriv)"
fi
pass=$((pass + passed)); fail=$((fail + failed))
finish
