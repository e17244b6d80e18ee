-- few instructions, long comparisons in C: stopped by the time limit
local s = string.rep("a", 1 << 24)
local t = {}
for i = 1, 1 << 12 do t[i] = s end
table.sort(t)
return {}
