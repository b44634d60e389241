#!/bin/sh
# heaptape tests -- processes: fork with and without follow, exec with and
# without follow (trailer before the image goes), exit status of _exit, exit()
# and main's return, abort, SIGKILL (bounded loss), allocating signal handler,
# thread destructors that run after the recorder's.
. "$(dirname "$0")/record_common.inc"
P=$PROGS/rec_procs

out=$(rec "$T/f.tape" "$P" fork)
ok "fork: program output" $([ "$out" = "$(printf 'child done\nparent done 0')" ]; echo $?)
[ "$(ls "$T" | grep -c '^f.tape')" = 1 ]; ok "fork: child not followed, one tape" $?
[ "$(count_size "$T/f.tape" 1111)" = 1010 ] && [ "$(count_size "$T/f.tape" 2222)" = 0 ]
ok "fork: parent tape has only the parent's blocks" $?
check "$T/f.tape" >/dev/null; ok "fork: parent tape orderly" $?

rec "$T/ff.tape" HEAPTAPE_FOLLOW_FORK=1 "$P" fork >/dev/null
child=$(ls "$T" | grep '^ff.tape\.[0-9]' | head -n 1)
[ -n "$child" ]; ok "fork follow: child tape $child" $?
[ "$(count_size "$T/$child" 2222)" = 1000 ] && [ "$(count_size "$T/$child" 1111)" = 0 ]
ok "fork follow: child tape has the child's 1000 blocks" $?
[ "$(count_size "$T/ff.tape" 1111)" = 1010 ]; ok "fork follow: parent tape intact" $?
"$HEAPTAPE" dump "$T/$child" | tail -n 1 | grep -q 'trailer yes'; ok "fork follow: child trailer" $?

out=$(rec "$T/e.tape" "$P" exec)
[ "$out" = "execd done" ]; ok "exec: program output" $?
[ "$(count_size "$T/e.tape" 3333)" = 100 ]; ok "exec: pre-exec events flushed" $?
# The same process goes on recording through exec, by default: the new
# image's tape is named after its program (e.rec_procs.tape).
[ "$(count_size "$T/e.rec_procs.tape" 4444)" = 100 ]; ok "exec: the exec'd image (same process) has its own tape" $?
[ "$(ls "$T" | grep -c '^e\.')" = 2 ]; ok "exec: two tapes, no more" $?
rec "$T/ef.tape" HEAPTAPE_FOLLOW_EXEC=1 "$P" exec >/dev/null
[ "$(count_size "$T/ef.rec_procs.tape" 4444)" = 100 ]; ok "exec follow: exec'd image has its own tape" $?

# stat_status TAPE: the trailer's exit status from `heaptape stats`.
stat_status() { "$HEAPTAPE" stats "$1" 2>/dev/null | sed -n 's/.*exit status \([0-9]*\).*/\1/p'; }

out=$(rec "$T/en.tape" "$P" execnow)
[ "$out" = "execd done" ]; ok "exec at once: program output" $?
[ "$(count_size "$T/en.tape" 3334)" = 100 ]; ok "exec at once (execvp): every pre-exec event" $?
"$HEAPTAPE" dump "$T/en.tape" | tail -n 1 | grep -q 'trailer yes'; ok "exec at once: trailer before the exec" $?
[ "$(count_size "$T/en.rec_procs.tape" 4444)" = 100 ]; ok "exec at once: the exec'd image recorded" $?
rec "$T/enf.tape" HEAPTAPE_FOLLOW_EXEC=1 "$P" execnow >/dev/null
ex=enf.rec_procs.tape
[ "$(count_size "$T/enf.tape" 3334)" = 100 ] && [ "$(count_size "$T/$ex" 4444)" = 100 ]
ok "exec at once, follow: both images complete ($ex)" $?
"$HEAPTAPE" dump "$T/enf.tape" | tail -n 1 | grep -q 'trailer yes'; ok "exec at once, follow: first trailer" $?
out=$(rec "$T/xf.tape" "$P" execfail)
[ "$out" = "exec failed" ]; ok "failed exec: program goes on" $?
# A failed exec takes the trailer written for it back: one tape goes on.
[ "$(count_size "$T/xf.tape" 3335)" = 100 ] && [ "$(count_size "$T/xf.tape" 3336)" = 100 ] &&
  [ "$(ls "$T" | grep -c '^xf\.')" = 1 ]
ok "failed exec: events before and after in the same tape" $?

rec "$T/xe.tape" "$P" exit; rc=$?
[ $rc = 5 ] && [ "$(stat_status "$T/xe.tape")" = 5 ]; ok "exit(5): status in the trailer" $?
[ "$(count_size "$T/xe.tape" 5151)" = 500 ]; ok "exit: all events" $?
rec "$T/xm.tape" "$P" main; rc=$?
[ $rc = 6 ] && [ "$(stat_status "$T/xm.tape")" = 6 ]; ok "return 6 from main: status in the trailer" $?
out=$(rec "$T/kd.tape" "$P" keydtor); rc=$?
[ $rc = 7 ] && [ "$out" = "keydtor done" ]; ok "late thread destructors, busy thread at exit: no crash" $?
[ "$(stat_status "$T/kd.tape")" = 7 ] && check "$T/kd.tape" >/dev/null; ok "late destructors: tape orderly, status 7" $?

rec "$T/x.tape" "$P" _exit; rc=$?
[ $rc = 3 ]; ok "_exit: status kept" $?
[ "$(count_size "$T/x.tape" 5555)" = 500 ]; ok "_exit: all events" $?
"$HEAPTAPE" dump "$T/x.tape" | tail -n 1 | grep -q 'trailer yes'; ok "_exit: trailer written" $?
[ "$(stat_status "$T/x.tape")" = 3 ]; ok "_exit: status 3 in the trailer" $?

rec "$T/a.tape" "$P" abort 2>/dev/null; rc=$?
[ $rc = 134 ]; ok "abort: dies of SIGABRT" $?
[ "$(count_size "$T/a.tape" 6666)" = 500 ]; ok "abort: tape readable, events before abort present" $?

env LD_PRELOAD="$LIB" HEAPTAPE_OUTPUT="$T/k.tape" "$P" kill >"$T/k.out" &
pid=$!   # env execs the program: $! is the program itself
i=0; while ! grep -q ready "$T/k.out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.3   # bound: 100 ms periodic flush + 1 ms writer tick
kill -9 $pid; wait $pid 2>/dev/null
[ "$(count_size "$T/k.tape" 48)" = 20000 ] && [ "$(count_size "$T/k.tape" 7777)" = 2000 ]
ok "SIGKILL: every event older than 300 ms is on the tape" $?
check "$T/k.tape" >/dev/null; ok "SIGKILL: tape orderly" $?

out=$(rec "$T/g.tape" "$P" signal)
[ "$out" = "signals handled" ]; ok "signal: handler that allocates runs" $?
sum=$(check "$T/g.tape"); ok "signal: no anomaly ($sum)" $?
[ "$(count_size "$T/g.tape" 777)" -ge 1 ]; ok "signal: handler allocations recorded" $?
finish
