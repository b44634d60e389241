# heaptape tests -- the Lua module: coroutines, errors, GC, JIT on/off, dump,
# auto-stop after N seconds, a short stress loop, the fast frame walk against
# the debug API (HEAPTAPE_LUA_CHECK) with prototypes reused after GC; both VMs.
: "${HT_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${HT_BUILD:=$HT_ROOT/build}"
: "${HEAPTAPE:=$HT_BUILD/heaptape}"
T=$(mktemp -d /tmp/ht-lua.XXXXXX); trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "ok   $1"; else fail=$((fail + 1)); echo "FAIL $1"; fi; }
cp "$HT_ROOT"/tests/lua/*.lua "$T/"
for vm in 5.4:lua5.4 jit:luajit; do
  d=${vm%%:*} exe=${vm#*:}
  command -v "$exe" >/dev/null || { echo "skip $exe"; continue; }
  run() { (cd "$T" && LUA_CPATH="$HT_BUILD/lua/$d/?.so" "$exe" "$@"); }
  run coro.lua "$T/coro.$d.tape"; ok "$d: coroutine script" $?
  "$HEAPTAPE" report --memprof "$T/coro.$d.tape" > "$T/c.$d" 2>&1
  for l in 7 13 22; do
    grep -q "^@coro.lua:$l: \|TRACE \[[0-9]*\] started at coro.lua" "$T/c.$d"
    ok "$d: coroutine allocations charged to coro.lua:$l (or its trace)" $?
  done
  if [ "$d" = jit ]; then
    run -e 'jit.off()' coro.lua "$T/off.tape"; ok "jit off: coroutine script" $?
    "$HEAPTAPE" report --memprof "$T/off.tape" > "$T/off" 2>&1
    grep -q '^@coro.lua:7: 200 events' "$T/off"; ok "jit off: wrap body line 7 exact (200 events: LuaJIT colocates the array)" $?
    grep -q '^TRACE' "$T/c.jit"; ok "jit on: allocations on traces" $?
  else
    grep -q '^@coro.lua:7: 400 events' "$T/c.$d"; ok "5.4: wrap body line 7 exact (400 events)" $?
  fi
  # the fast frame walk and its (pc -> location) cache against the debug API
  for s in reuse coro; do
    out=$(HEAPTAPE_LUA_CHECK=1 run $s.lua "$T/chk.$s.$d.tape" 2>&1 | grep 'lua walk check')
    echo "$out" | grep -q 'check: [1-9][0-9]* events, 0 mismatches'
    ok "$d: $s.lua: fast walk equals lua_getinfo's ($out)" $?
  done
  "$HEAPTAPE" report --memprof "$T/chk.reuse.$d.tape" > "$T/ru.$d" 2>&1
  n=0; for k in 0 1 2 3 4 5; do grep -q "@reuse$k:$((k + 1))\b" "$T/ru.$d" || \
    { "$HEAPTAPE" report "$T/chk.reuse.$d.tape" 2>/dev/null | grep -q "@reuse$k:$((k + 1))\$"; } && n=$((n + 1)); done
  ok "$d: each reused chunk on its own line ($n of 6)" $([ "$n" = 6 ]; echo $?)
  run dump.lua "$T/dump.$d"; ok "$d: dump script" $?
  "$HEAPTAPE" report --dump "$T/dump.$d" > "$T/dr.$d" 2>&1; ok "$d: report --dump" $?
  n=$(grep -c '^O	LJ_TSTR	.*	dumpstr' "$T/dump.$d"); ok "$d: dump has the 1000 strings ($n)" $([ "$n" -ge 1000 ]; echo $?)
  grep -q '===== ARRAY PART' "$T/dr.$d" && grep -q '	\[1000\] => LJ_TSTR' "$T/dr.$d"
  ok "$d: the string table's array part" $?
  grep -q 'upvalue string' "$T/dump.$d" && grep -q '^R	LJ_TUPVAL' "$T/dump.$d"; ok "$d: closure upvalues" $?
  grep -q 'RETAINED' "$T/dr.$d" && grep -q 'LARGEST OBJECTS' "$T/dr.$d"; ok "$d: largest and retained" $?
  # start(fname, 1) on a 3-second script stops by itself
  run -e 'local h = require "heaptape"; assert(h.start("'"$T"'/dur.tape", 1))
    local t0, keep = os.time(), {}
    while os.time() - t0 < 3 do keep[#keep % 1000 + 1] = {} end
    assert(not h.is_running()); local r = h.stop(); assert(r == nil)'
  ok "$d: start(fname, 1) stops after a second" $?
  "$HEAPTAPE" report --memprof --heap-snap-interval 0.5 "$T/dur.tape" > "$T/dur" 2>&1
  n=$(grep -c 'HEAP SNAPSHOT' "$T/dur"); ok "$d: about one second of snapshots ($n)" $([ "$n" -ge 1 ] && [ "$n" -le 3 ]; echo $?)
  # stress, shortened for CI: churn, coroutines, errors, full collections
  run -e 'local h = require "heaptape"; assert(h.start("'"$T"'/stress.tape"))
    local n = tonumber(os.getenv("HT_LUA_STRESS") or 200000)
    local t = {}
    for i = 1, n do
      t[i % 997] = {i, tostring(i)}
      if i % 1000 == 0 then
        local co = coroutine.wrap(function(x) coroutine.yield(x .. "y") error("e") end)
        co("x"); pcall(co)
      end
      if i % 50000 == 0 then collectgarbage() end
    end
    assert(h.stop())'
  ok "$d: stress loop" $?
  "$HEAPTAPE" report "$T/stress.tape" > /dev/null 2>"$T/se"; ok "$d: stress tape reads cleanly" $([ ! -s "$T/se" ]; echo $?)
done
# A script that allocates nothing for 2.2 s still has time on its tape (the
# recorder's RSS records every 100 ms), so heap snapshots come every second.
printf 'local t = {}\nfor i = 1, 100 do t[i] = string.rep("x", i) end\nlocal c = os.clock()\nwhile os.clock() - c < 2.2 do end\nprint(#t)\n' > "$T/idle.lua"
(cd "$T" && "$HEAPTAPE" record --lua -o "$T/idle.tape" -- lua5.4 idle.lua >/dev/null 2>&1)
n=$("$HEAPTAPE" dump --no-stacks "$T/idle.tape" 2>/dev/null | awk '$2 >= 1000000000 && $2 < 2000000000' | wc -l)
ok "idle script: the tape has time in its idle second ($n records)" $([ "$n" -ge 5 ]; echo $?)
n=$("$HEAPTAPE" report --memprof --heap-snap-interval 1 "$T/idle.tape" 2>/dev/null | grep -c '===== HEAP SNAPSHOT')
ok "idle script: a heap snapshot for each second ($n)" $([ "$n" -ge 2 ]; echo $?)

# --frames N keeps the N innermost Lua frames: a 12-deep recursion is cut
# to 2 (and 1), and the innermost frames (what --memprof shows) stay.
printf 'local function rec(n)\n  if n == 0 then\n    local t = {}\n    for i = 1, 100 do t[i] = string.rep("x", i) end\n    return t\n  end\n  local t = rec(n - 1)\n  return t\nend\nfor _ = 1, 20 do rec(10) end\n' > "$T/deep.lua"
# depth TAPE: frames of the deepest stack in its stack table.
depth() { "$HEAPTAPE" dump "$1" 2>/dev/null | awk '$1 == "STACK" {p = $3; sub("parent=", "", p); d[$2] = d[p] + 1; if (d[$2] > m) m = d[$2]} END {print m + 0}'; }
for exe in lua5.4 luajit; do
  (cd "$T" && "$HEAPTAPE" record --lua -o "$T/d0.tape" -- "$exe" deep.lua >/dev/null 2>&1)
  for f in 2 1; do
    (cd "$T" && "$HEAPTAPE" record --lua --frames $f -o "$T/d$f.tape" -- "$exe" deep.lua >/dev/null 2>&1)
  done
  [ "$(depth "$T/d0.tape")" -ge 12 ] && [ "$(depth "$T/d2.tape")" = 2 ] && [ "$(depth "$T/d1.tape")" = 1 ]
  ok "$exe: --frames 2 / 1 cut a $(depth "$T/d0.tape")-frame stack to $(depth "$T/d2.tape") / $(depth "$T/d1.tape")" $?
  l0=$("$HEAPTAPE" report --memprof "$T/d0.tape" 2>/dev/null | grep -m1 '^@deep.lua:4: ')
  l1=$("$HEAPTAPE" report --memprof "$T/d1.tape" 2>/dev/null | grep -m1 '^@deep.lua:4: ')
  [ -n "$l0" ] && [ "$l0" = "$l1" ]
  ok "$exe: --frames 1 charges the strings to deep.lua:4 as whole stacks do ($l1)" $?
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
