-- a message handler that loops runs under the instruction limit like any other code
xpcall(function() while true do end end, function() while true do end end)
return { name = "x", type = "i32", identity = 0, combine = "return a + b;", commutative = true }
