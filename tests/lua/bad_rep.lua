-- empty copies cost nothing; a result over the memory limit is refused before it is made
assert(string.rep("", 1 << 62) == "" and ("x"):rep(3, ",") == "x,x,x")
local s = string.rep("ab", 1 << 28)
return {}
