-- heaptape bench: LuaJIT's `bit` module for Lua 5.4 (32-bit signed results),
-- enough for the LuaJIT-test-cleanup benchmarks (md5). Not a benchmark itself.
local M = {}
-- Wrap an integer to a signed 32-bit value.
local function tobit(x)
  x = math.tointeger(x) or math.floor(x)
  x = x & 0xffffffff
  if x >= 0x80000000 then x = x - 0x100000000 end
  return x
end
M.tobit = tobit
function M.bnot(a) return tobit(~a) end
function M.band(a, b, c, ...)
  local r = a & b
  if c then return M.band(r, c, ...) end
  return tobit(r)
end
function M.bor(a, b, c, ...)
  local r = a | b
  if c then return M.bor(r, c, ...) end
  return tobit(r)
end
function M.bxor(a, b, c, ...)
  local r = a ~ b
  if c then return M.bxor(r, c, ...) end
  return tobit(r)
end
function M.lshift(a, n) return tobit((a & 0xffffffff) << (n & 31)) end
function M.rshift(a, n) return tobit((a & 0xffffffff) >> (n & 31)) end
function M.arshift(a, n) return tobit(tobit(a) >> (n & 31) | (a & 0x80000000 ~= 0 and ~(0xffffffff >> (n & 31)) or 0)) end
function M.rol(a, n)
  a = a & 0xffffffff; n = n & 31
  return tobit((a << n) | (a >> (32 - n)))
end
function M.ror(a, n) return M.rol(a, 32 - (n & 31)) end
function M.bswap(a)
  a = a & 0xffffffff
  return tobit(((a & 0xff) << 24) | ((a & 0xff00) << 8) | ((a >> 8) & 0xff00) | (a >> 24))
end
function M.tohex(a, n)
  n = n or 8
  return string.format("%0" .. n .. "x", a & ((1 << (4 * n)) - 1))
end
return M
