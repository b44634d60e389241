if jit then jit.off() end
misc.memprof.start("memprof_new.bin")
local function append(str, rep)
  return string.rep(str, rep)
end

local t = {}
for _ = 1, 1e4 do
  table.insert(t,
    append('q', _)
  )
end
misc.memprof.stop()
