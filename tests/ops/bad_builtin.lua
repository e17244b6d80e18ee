-- a user operator may not take a built-in operator's name
return {
  name = "sum",
  type = "u32",
  identity = 0,
  combine = "return a + b;",
  commutative = true,
}
