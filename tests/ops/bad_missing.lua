-- no combine
return {
  name = "nothing",
  type = "i32",
  identity = "0",
  commutative = true,
}
