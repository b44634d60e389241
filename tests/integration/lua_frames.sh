#!/bin/sh
# heaptape tests -- the Lua module takes its stack depth from the recording
# (heaptape_frames), not from HEAPTAPE_FRAMES read by itself: start(fname,
# {frames = N}) cuts stacks to N, a bad N is refused, and with no frames the
# recorder's default applies (HEAPTAPE_FRAMES, which it checks: a bad value
# warns and keeps 64). Both VMs.
: "${HT_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${HT_BUILD:=$HT_ROOT/build}"
: "${HEAPTAPE:=$HT_BUILD/heaptape}"
T=$(mktemp -d /tmp/ht-luaf.XXXXXX); trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "ok   $1"; else fail=$((fail + 1)); echo "FAIL $1"; fi; }
# depth TAPE: frames of the deepest stack in its stack table.
depth() { "$HEAPTAPE" dump "$1" 2>/dev/null | awk '$1 == "STACK" {p = $3; sub("parent=", "", p); d[$2] = d[p] + 1; if (d[$2] > m) m = d[$2]} END {print m + 0}'; }
cat > "$T/deep.lua" <<'L'
local ht = require "heaptape"
local out, frames = arg[1], tonumber(arg[2])
local function rec(n)
  if n == 0 then local t = {} for i = 1, 100 do t[i] = string.rep("x", i) end return t end
  local t = rec(n - 1)
  return t
end
local ok, msg = ht.start(out, frames and {frames = frames} or nil)
if not ok then print("refused: " .. msg) os.exit(0) end
for _ = 1, 20 do rec(10) end
assert(ht.stop())
L
for vm in 5.4:lua5.4 jit:luajit; do
  d=${vm%%:*} exe=${vm#*:}
  command -v "$exe" >/dev/null || { echo "skip $exe"; continue; }
  cp=LUA_CPATH; [ "$d" = 5.4 ] && cp=LUA_CPATH_5_4
  run() { (cd "$T" && env "$cp=$HT_BUILD/lua/$d/?.so" "$@") }
  run "$exe" deep.lua "$T/a.tape" >/dev/null 2>&1
  run "$exe" deep.lua "$T/b.tape" 3 >/dev/null 2>&1
  run HEAPTAPE_FRAMES=2 "$exe" deep.lua "$T/c.tape" >/dev/null 2>&1
  run HEAPTAPE_FRAMES=2x "$exe" deep.lua "$T/e.tape" >/dev/null 2>"$T/e.err"
  [ "$(depth "$T/a.tape")" -ge 12 ] && [ "$(depth "$T/b.tape")" = 3 ] && [ "$(depth "$T/c.tape")" = 2 ]
  ok "$exe: whole stacks $(depth "$T/a.tape"), {frames = 3} $(depth "$T/b.tape"), HEAPTAPE_FRAMES=2 $(depth "$T/c.tape")" $?
  [ "$(depth "$T/e.tape")" -ge 12 ] && grep -q HEAPTAPE_FRAMES "$T/e.err"
  ok "$exe: HEAPTAPE_FRAMES=2x warns and keeps the default ($(depth "$T/e.tape") frames)" $?
  out=$(run "$exe" deep.lua "$T/f.tape" 999 2>&1)
  [ "$out" = "refused: frames must be from 1 to 256" ]; ok "$exe: {frames = 999} refused ($out)" $?
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
