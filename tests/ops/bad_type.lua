-- commutative must be a boolean
return {
  name = "maybe",
  type = "i32",
  identity = "0",
  combine = "return a + b;",
  commutative = "yes",
}
