#!/bin/sh
# heaptape bench -- overhead of the Lua module on both VMs, JIT on and off.
# usage: [B=build] [RUNS=5] [ONLY="names"] bench/bench_lua.sh [LJTC_BENCH_DIR]
# LJTC_BENCH_DIR is the bench/ directory of a checkout of
# the public LuaJIT-test-cleanup repository (or the checkout itself); its
# scripts (binary-trees, life, fasta, md5, ray, scimark-lu) stay out of this
# repository. Without it, only bench/lua/*.lua run. Each benchmark runs RUNS
# times bare and RUNS times recorded (the module started by LUA_INIT exactly
# as `heaptape record --lua` does in its child, whole Lua stacks, tape to a
# temporary file); medians of CPU time (user + sys, all threads) and wall
# time. Bytes per event = tape size / events (`heaptape stats`). Prints a
# markdown table. Lua 5.4 gets bench/lua/compat (LuaJIT's `bit`, loadstring,
# unpack), in the bare runs too.
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
B=${B:-build}
RUNS=${RUNS:-5}
HT=$ROOT/$B/heaptape
[ -x "$HT" ] || { echo "bench_lua: $HT not built (make B=$B)"; exit 1; }
T=$(mktemp -d /tmp/ht-bench-lua.XXXXXX); trap 'rm -rf "$T"' EXIT
dir=""
if [ -n "$1" ]; then
  if [ -f "$1/binary-trees.lua" ]; then dir=$1
  elif [ -f "$1/bench/binary-trees.lua" ]; then dir=$1/bench
  else echo "bench_lua: $1 is not a LuaJIT-test-cleanup bench directory; skipping its benchmarks"; fi
fi
dir=${dir:+$(cd "$dir" && pwd)}
PRELUDE='loadstring = loadstring or load; unpack = unpack or table.unpack'
# Arguments per benchmark and mode (5.4 | jit on | jit off): bare runs of
# 0.5-3 s on a 2-core x86-64 (life takes none; it runs 0.4-0.6 s).
args() {
  case "$1:$2" in
  binary-trees:5.4) echo 14 ;;  binary-trees:on) echo 15 ;;  binary-trees:off) echo 15 ;;
  fasta:5.4) echo 1000000 ;;    fasta:on) echo 3000000 ;;    fasta:off) echo 2000000 ;;
  md5:5.4) echo 200 ;;          md5:on) echo 20000 ;;        md5:off) echo 1000 ;;
  ray:5.4) echo 3 128 ;;        ray:on) echo 5 256 ;;        ray:off) echo 3 128 ;;
  scimark-lu:5.4) echo 200 ;;   scimark-lu:on) echo 2000 ;;  scimark-lu:off) echo 200 ;;
  trees:*) echo 14 ;;
  *) echo "" ;;
  esac
}
# median of the numbers on stdin
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print 0 }'; }
# run1 OUT CMD...: append "cpu wall" of one run to OUT; non-zero on failure
run1() {
  out=$1; shift
  /usr/bin/time -f '%U %S %e' -o "$T/time" "$@" >/dev/null 2>"$T/err" </dev/null || return 1
  awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$T/time" >> "$out"
}
list=""
if [ -n "$dir" ]; then
  for b in binary-trees life fasta md5 ray scimark-lu; do list="$list $dir/$b.lua"; done
fi
for f in bench/lua/*.lua; do list="$list $ROOT/$f"; done
echo "| bench | args | vm | jit | bare CPU s | recorded CPU s | CPU ratio | bare wall s | recorded wall s | wall ratio | events | bytes/event |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for b in $list; do
  name=$(basename "$b" .lua)
  case " ${ONLY:-$name} " in *" $name "*) ;; *) continue ;; esac  # ONLY="life md5"
  for mode in 5.4 on off; do
    if [ "$mode" = 5.4 ]; then
      exe=lua5.4; vm=5.4; jit=-; opt="-e"; cpath=LUA_CPATH_5_4; init=LUA_INIT_5_4
    else
      exe=luajit; vm=LuaJIT; jit=$mode; opt=""; [ "$mode" = off ] && opt="-joff"
      cpath=LUA_CPATH; init=LUA_INIT
    fi
    command -v $exe >/dev/null || continue
    a=$(args "$name" "$mode")
    rm -f "$T/bare" "$T/rec"
    ok=1
    for i in $(seq "$RUNS"); do
      # shellcheck disable=SC2086
      (cd "$(dirname "$b")" && if [ "$mode" = 5.4 ]; then
         LUA_PATH_5_4="$ROOT/bench/lua/compat/?.lua;;" run1 "$T/bare" $exe -e "$PRELUDE" "$b" $a
       else run1 "$T/bare" $exe $opt "$b" $a; fi) || { ok=0; break; }
      # shellcheck disable=SC2086
      (cd "$(dirname "$b")" && export "$cpath=$ROOT/$B/lua/$([ "$mode" = 5.4 ] && echo 5.4 || echo jit)/?.so" \
         "$init=require'heaptape'._record()" HEAPTAPE_LUA_OUTPUT="$T/t.tape" &&
       if [ "$mode" = 5.4 ]; then
         LUA_PATH_5_4="$ROOT/bench/lua/compat/?.lua;;" run1 "$T/rec" $exe -e "$PRELUDE" "$b" $a
       else run1 "$T/rec" $exe $opt "$b" $a; fi) || { ok=0; break; }
    done
    if [ "$ok" = 0 ]; then
      echo "| $name | $a | $vm | $jit | failed: $(head -c 120 "$T/err" | tr '\n|' '  ') |"
      continue
    fi
    bc=$(cut -d' ' -f1 "$T/bare" | median); bw=$(cut -d' ' -f2 "$T/bare" | median)
    rc=$(cut -d' ' -f1 "$T/rec" | median); rw=$(cut -d' ' -f2 "$T/rec" | median)
    ev=$("$HT" stats "$T/t.tape" 2>/dev/null | awk '$1 == "events" { print $2; exit }')
    sz=$(stat -c %s "$T/t.tape")
    awk -v n="$name" -v a="$a" -v vm="$vm" -v j="$jit" -v bc="$bc" -v bw="$bw" \
        -v rc="$rc" -v rw="$rw" -v ev="${ev:-0}" -v sz="$sz" 'BEGIN {
      cr = (bc > 0) ? sprintf("%.2f", rc / bc) : "-"
      wr = (bw > 0) ? sprintf("%.2f", rw / bw) : "-"
      be = (ev > 0) ? sprintf("%.2f", sz / ev) : "-"
      printf "| %s | %s | %s | %s | %.2f | %.2f | %s | %.2f | %.2f | %s | %d | %s |\n",
        n, a, vm, j, bc, rc, cr, bw, rw, wr, ev, be }'
  done
done
