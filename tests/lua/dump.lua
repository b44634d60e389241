-- heaptape test: dump of known objects (1000 strings, a closure, a cycle).
local hp = require "heaptape"
strings1000 = {}
for i = 1, 1000 do strings1000[i] = "dumpstr" .. i end
local up1, up2 = {name = "upvalue table"}, "upvalue string"
function closure_with_upvalues() return up1, up2 end
cycle_a = {}
cycle_b = {peer = cycle_a}
cycle_a.peer = cycle_b
setmetatable(cycle_a, {__index = cycle_b})
local co = coroutine.create(function(x) local held = {"in coroutine"}; coroutine.yield(held) end)
coroutine.resume(co)
suspended = co
assert(hp.dump(arg[1]))
local ok, msg, e = hp.dump("/nonexistent/dir/x")
assert(ok == nil and msg:match("nonexistent") and e > 0)
