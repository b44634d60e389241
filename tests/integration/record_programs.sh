#!/bin/sh
# heaptape tests -- real programs behave identically under the recorder:
# python3 (PYTHONMALLOC=malloc), sqlite3, lua5.4, perl, a threaded C++ program,
# and the embedded API through a writer callback.
. "$(dirname "$0")/record_common.inc"
# same NAME [VAR=VALUE] CMD...: identical stdout with and without the recorder, orderly tape.
same() {
  name=$1; shift
  prog=$1; case $prog in *=*) prog=$2 ;; esac
  if ! command -v "$prog" >/dev/null 2>&1; then echo "skip $name ($prog missing)"; return; fi
  want=$(env "$@" 2>&1); got=$(rec "$T/$name.tape" "$@" 2>&1)
  [ "$want" = "$got" ]; ok "$name: output identical" $?
  sum=$(check "$T/$name.tape"); r=$?
  [ $r = 0 ] && [ "$(field allocs "$sum")" -gt 0 ]; ok "$name: tape orderly ($sum)" $?
}
same python PYTHONMALLOC=malloc /usr/bin/python3 -c 'import json,collections; d=collections.Counter(str(i%97) for i in range(200000)); print(json.dumps(sorted(d.items())[:5]))'
same sqlite sqlite3 :memory: 'create table t(a,b); with recursive c(x) as (select 1 union all select x+1 from c where x<20000) insert into t select x, hex(zeroblob(2)||x) from c; select count(*), sum(a), max(b) from t;'
same lua lua5.4 -e 'local t={} for i=1,100000 do t[i]=tostring(i)..string.rep("x",i%50) end local s=0 for i=1,#t do s=s+#t[i] end print(s)'
same perl perl -e 'my %h; $h{$_ % 1000} .= "ab$_" for 1..100000; print scalar(keys %h), " ", length(join("",values %h)), "\n"'
same cxx "$PROGS/rec_cxx"
# heaptape record symbolises: C++ names come demangled (libstdc++'s
# demangler, loaded by the symboliser when it meets the first one).
"$HEAPTAPE" record -o "$T/cxxr.tape" -- "$PROGS/rec_cxx" >/dev/null 2>&1
"$HEAPTAPE" report "$T/cxxr.tape" >"$T/cxxr.txt" 2>&1
grep -q 'std::thread::_State_impl<.*>::_M_run()' "$T/cxxr.txt" && ! grep -q '_ZN' "$T/cxxr.txt"
ok "cxx: C++ names demangled" $?
out=$("$PROGS/rec_api" "$LIB" "$T/api.tape")
[ "$out" = "$(printf 'start 0 again 1 running 1\nstop 0 stops 1 running 0 again 1')" ]; ok "api: start/stop/on_stop once" $?
"$HEAPTAPE" dump "$T/api.tape" >"$T/api.txt"
[ "$(grep -c 'ALLOC rt:' "$T/api.txt")" = 3 ] && [ "$(grep -c 'FREE rt:' "$T/api.txt")" = 2 ]
ok "api: runtime alloc/free/realloc records" $?
grep -q 'loc=2 kind=1 name=helper file=script.lua line=20' "$T/api.txt"; ok "api: D_LOC dictionary and runtime frames" $?
grep -q 'MARK "phase 2"' "$T/api.txt" && grep -q 'THREAD "interpreter"' "$T/api.txt"; ok "api: mark and thread name" $?
grep -q 'frontend lua5.4' "$T/api.txt"; ok "api: frontend in header" $?
"$PROGS/rec_filter" "$LIB" "$T/filter.tape" >"$T/filter.out" 2>&1
rc=$?; grep FAIL "$T/filter.out"
ok "api: heaptape_rt_filter: none unless sampled, a sampled block in it until freed" $rc
finish
