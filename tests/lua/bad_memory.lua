-- 300 MiB in one string: past the memory limit
local s = string.rep("x", 300 * 1024 * 1024)
return {}
