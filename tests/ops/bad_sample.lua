-- a sample function that fails at element 100, and one that returns a string
return {
  name = "badsample",
  type = "i64",
  identity = 0,
  combine = "return a + b;",
  commutative = true,
  sample = function(i, r)
    if i == 100 then error("no sample for " .. i) end
    if i == 200 then return "two hundred" end
    return r
  end,
}
