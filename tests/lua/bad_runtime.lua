-- error() at line 3
local B = redtune.pow2(128, 1024)
error("no space today")
return { { family = "gridstride", params = { B = B } } }
