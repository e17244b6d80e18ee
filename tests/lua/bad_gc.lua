-- finalizers run with hooks off, out of reach of the instruction limit
local t = {}
setmetatable(t, { __gc = function() while true do end end })
return {}
