-- 'commutes' is not a field ('commutative' is)
return {
  name = "typo",
  type = "u32",
  identity = 0,
  combine = "return a + b;",
  commutes = true,
}
