-- heaptape test: cached frame locations stay right when a collected function's
-- prototype (and code) memory is reused by a new one on another line.
local hp = require "heaptape"
if jit then jit.off() end                -- interpreted frames: every event walks
function mk() return {} end              -- line 5: the chunks call it
assert(hp.start(arg[1]))
local keep = {}
for i = 0, 299 do
  local k = i % 6                        -- chunk "reuse<k>": the loop on line k + 1
  local src = string.rep("\n", k) .. "local t = {} for j = 1, 4 do t[j] = mk() end return t"
  local f = assert(load(src, "=reuse" .. k))
  keep[i % 10 + 1] = f()
  f = nil
  collectgarbage()                       -- f's prototype is freed, its memory reused
end
assert(hp.stop())
