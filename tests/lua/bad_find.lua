-- pattern matching backtracks in C with no limit: not in the sandbox
local s = string.rep("a", 3000)
return s:find(string.rep("a-", 12) .. "b")
