-- what the sandbox leaves and removes
for _, name in ipairs { "io", "os", "package", "debug", "dofile", "loadfile", "load", "require" } do
  assert(_G[name] == nil, name .. " is reachable")
end
assert(type(math.floor) == "function" and type(string.format) == "function")
assert(type(table.concat) == "function" and type(pcall) == "function")
assert(dev.cc == 90 and dev.max_threads == dev.max_threads_per_block)
assert(case.type == "f32" and case.type_size == 4 and case.commutative == true)
local p = redtune.pow2(32, 1024)
assert(#p == 6 and p[1] == 32 and p[6] == 1024 and math.type(p[6]) == "integer")
assert(#redtune.pow2(5, 4) == 0 and #redtune.pow2(3, 12) == 3)
assert(table.concat(redtune.range(1, 8, 3), ",") == "1,4,7")
assert(table.concat(redtune.range(3, 1, -1), ",") == "3,2,1")
assert(table.concat(redtune.range(2, 4), ",") == "2,3,4")
return {}
