-- few instructions, long comparisons in C: stopped by the time limit
local s = string.rep("a", 1 << 20)   -- 1 MiB: made well inside the limit, even under ASan
local t = {}
for i = 1, 1 << 12 do t[i] = s end
table.sort(t)
return {}
