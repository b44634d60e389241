-- heaptape test: coroutines (nested resume and wrap, errors), GC mid-run.
local hp = require "heaptape"
assert(hp.start(arg[1]))
local keep = {}
local inner = coroutine.wrap(function()
  for i = 1, 200 do
    keep[#keep + 1] = {i, i}                     -- line 7: wrap body
    coroutine.yield()
  end
end)
local outer = coroutine.create(function()
  for i = 1, 200 do
    keep[#keep + 1] = string.rep("o", 100 + i)   -- line 13: resume body
    inner()
    coroutine.yield()
  end
end)
for _ = 1, 200 do assert(coroutine.resume(outer)) end
collectgarbage()
local bad = coroutine.create(function()
  local t = {}
  for i = 1, 50 do t[i] = ("x"):rep(i) end      -- line 22
  error("inside")
end)
local ok, err = coroutine.resume(bad)
assert(not ok and err:match("inside"))
local esc = coroutine.wrap(function() local s = {} ; error({}) end)  -- line 27
assert(not pcall(esc))
for _ = 1, 100 do
  pcall(function() local s = string.rep("e", 300); error(s) end)  -- line 30
end
collectgarbage()
assert(hp.is_running())
assert(hp.stop())
assert(not hp.is_running())
local r, msg = hp.stop()
assert(r == nil and msg)
