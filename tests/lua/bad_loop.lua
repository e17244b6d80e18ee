-- never returns: stopped by the instruction limit
local n = 0
while true do n = n + 1 end
return {}
