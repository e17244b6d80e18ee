-- each comparison of two long strings is one instruction: stopped by the time limit
local a, b = string.rep("a", 1 << 25), string.rep("a", 1 << 25)
local n = 0
while true do
  if a == b then n = n + 1 end
end
