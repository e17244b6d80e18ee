-- a length of 2^62: table.insert would shift elements in C for good
local t = setmetatable({}, { __len = function() return 1 << 62 end })
table.insert(t, 1, "x")
return {}
