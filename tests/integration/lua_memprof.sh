# heaptape tests -- the Lua module: the seed example (tests/lua/test.lua) on
# Lua 5.4 and LuaJIT, directly and through `heaptape record --lua`.
: "${HT_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${HT_BUILD:=$HT_ROOT/build}"
: "${HEAPTAPE:=$HT_BUILD/heaptape}"
T=$(mktemp -d /tmp/ht-lua.XXXXXX); trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "ok   $1"; else fail=$((fail + 1)); echo "FAIL $1"; fi; }
# line REPORT SECTION LOC: the "LOC: N events +xB -yB" line of a memprof section.
line() { sed -n "/^$2\$/,/^\(DEALLOCATIONS\|HEAP SUMMARY:\)\$/p" "$1" | grep "^$3: " | head -n 1; }
events() { line "$@" | sed 's/.*: \([0-9]*\) events.*/\1/'; }
plus() { line "$@" | sed 's/.*+\([0-9]*\)B.*/\1/'; }
cp "$HT_ROOT/tests/lua/test.lua" "$T/"
for vm in 5.4:lua5.4 jit:luajit; do
  d=${vm%%:*} exe=${vm#*:}
  command -v "$exe" >/dev/null || { echo "skip $exe (not installed)"; continue; }
  (cd "$T" && rm -f memprof_new.bin && LUA_CPATH="$HT_BUILD/lua/$d/?.so" "$exe" -lheaptape test.lua)
  ok "$d: test.lua runs and writes memprof_new.bin" $([ -s "$T/memprof_new.bin" ]; echo $?)
  "$HEAPTAPE" report --memprof "$T/memprof_new.bin" > "$T/r.$d" 2>"$T/err.$d"
  ok "$d: report reads the tape without warnings" $([ ! -s "$T/err.$d" ]; echo $?)
  n=$(events "$T/r.$d" ALLOCATIONS @test.lua:10); b=$(plus "$T/r.$d" ALLOCATIONS @test.lua:10)
  ok "$d: strings on line 10 ($n events, $b bytes)" $([ "${n:-0}" -ge 10000 ] && [ "${b:-0}" -ge 50000000 ]; echo $?)
  n=$(events "$T/r.$d" REALLOCATIONS @test.lua:9)
  ok "$d: table growth as reallocations on line 9 ($n)" $([ "${n:-0}" -ge 10 ]; echo $?)
  # Lua 5.4 allocates the table of line 7 before OP_NEWTABLE saves its pc:
  # it is charged to line 5, the CLOSURE before it (docs/LUA.md).
  tl=7; [ "$d" = 5.4 ] && tl=5
  n=$(events "$T/r.$d" ALLOCATIONS @test.lua:$tl)
  ok "$d: the table on line $tl" $([ "${n:-0}" -ge 1 ]; echo $?)
  h=$(grep '^@test.lua:10 holds' "$T/r.$d" | sed 's/.*holds \([0-9]*\)B.*/\1/')
  ok "$d: heap summary: line 10 holds the strings ($h)" $([ "${h:-0}" -ge 50000000 ]; echo $?)
  grep -q '^@test.lua:4' "$T/r.$d"; ok "$d: nothing charged to string.rep's caller line 4" $([ $? != 0 ]; echo $?)
  # through heaptape record --lua (the script's own start then fails: running)
  (cd "$T" && "$HEAPTAPE" record --lua -o "$T/rec.$d.tape" -- "$exe" test.lua 2>/dev/null)
  ok "$d: record --lua exit status" $?
  "$HEAPTAPE" report --memprof "$T/rec.$d.tape" > "$T/rr.$d" 2>&1
  n=$(events "$T/rr.$d" ALLOCATIONS @test.lua:10)
  ok "$d: record --lua attributes line 10 ($n)" $([ "${n:-0}" -ge 10000 ]; echo $?)
  "$HEAPTAPE" report "$T/rec.$d.tape" 2>/dev/null | grep -q "^  program  .* test\.lua (pid "
  ok "$d: record --lua: the summary names the script" $?
  # the user's LUA_INIT still runs
  (cd "$T" && LUA_INIT='USER_INIT_RAN = 1' "$HEAPTAPE" record --lua -o "$T/init.tape" -- \
     "$exe" -e 'assert(USER_INIT_RAN == 1); assert(require"heaptape".is_running())' 2>/dev/null)
  ok "$d: record --lua keeps the user's LUA_INIT" $?
  # errors of start
  out=$(cd "$T" && LUA_CPATH="$HT_BUILD/lua/$d/?.so" "$exe" -e '
    local h = require "heaptape"
    local r, m, e = h.start("/nonexistent/dir/t")
    assert(r == nil and m:match("nonexistent") and e == 2, m)
    assert(h.start("'"$T"'/x.tape"))
    r, m, e = h.start("'"$T"'/y.tape"); assert(r == nil and m:match("running"))
    assert(misc.memprof.is_running() == true)
    assert(h.stop()); r, m = h.stop(); assert(r == nil and m:match("not running"))
    print("ok")' 2>&1)
  ok "$d: start/stop error returns ($out)" $([ "$out" = ok ]; echo $?)
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
