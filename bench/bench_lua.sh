#!/bin/sh
# heaptape bench -- overhead of the Lua module on both VMs, JIT on and off.
# usage: bench/bench_lua.sh [LUAJIT-TEST-CLEANUP-CHECKOUT]
# The LuaJIT-test-cleanup benchmarks (binary-trees, life, fasta, md5, ray,
# scimark-lu) stay out of this repository: pass the path of a checkout of
# https://github.com/LuaJIT/LuaJIT-test-cleanup; without it, the script runs
# bench/lua/*.lua only. Prints: bench vm mode base_s traced_s ratio bytes/event.
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
HT=$PWD/$B/heaptape
T=$(mktemp -d /tmp/ht-bench-lua.XXXXXX); trap 'rm -rf "$T"' EXIT
set --  "$1"
benches=""
if [ -n "$1" ] && [ -d "$1/bench" ]; then
  for b in binary-trees life fasta md5 ray scimark-lu; do benches="$benches $1/bench/$b.lua"; done
else
  [ -n "$1" ] && echo "bench_lua: $1 is not a LuaJIT-test-cleanup checkout; skipping its benchmarks"
fi
benches="$benches $(ls bench/lua/*.lua)"
secs() { /usr/bin/time -f %e "$@" >/dev/null 2>"$T/time" </dev/null; tail -n 1 "$T/time"; }
printf '%-14s %-6s %-4s %8s %8s %6s %8s\n' bench vm jit base_s traced_s ratio B/event
for b in $benches; do
  for vm in 5.4:lua5.4 jit:luajit; do
    d=${vm%%:*} exe=${vm#*:}
    for mode in on off; do
      [ "$d" = 5.4 ] && [ "$mode" = off ] && continue
      pre=""; [ "$mode" = off ] && pre="-joff"
      base=$(cd "$(dirname "$b")" && secs $exe $pre "$(basename "$b")")
      traced=$(cd "$(dirname "$b")" && LUA_CPATH="$PWD/$B/lua/$d/?.so" \
        secs "$HT" record --lua -o "$T/t.tape" -- $exe $pre "$(basename "$b")")
      ev=$(grep -o 'heaptape: [0-9]* events' "$T/time" | awk '{print $2}')
      sz=$(stat -c %s "$T/t.tape")
      bpe=$(awk -v s="$sz" -v e="$ev" 'BEGIN { if (e > 0) printf "%.2f", s / e; else print "-" }')
      ratio=$(awk -v a="$base" -v b="$traced" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "-" }')
      printf '%-14s %-6s %-4s %8s %8s %6s %8s\n' "$(basename "$b" .lua)" "$d" "$mode" "$base" "$traced" "$ratio" "$bpe"
    done
  done
done
