-- heaptape bench: a binary-trees-like allocation loop (written for heaptape).
local depth = tonumber(arg and arg[1]) or 14
local function make(d) if d == 0 then return {} end return {make(d - 1), make(d - 1)} end
local function check(t) if not t[1] then return 1 end return 1 + check(t[1]) + check(t[2]) end
local sum = 0
for i = 1, 8 do sum = sum + check(make(depth)) end
local strs = {}
for i = 1, 200000 do strs[i % 5000 + 1] = "s" .. i end
print(sum)
