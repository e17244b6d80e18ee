-- a result type without a finalize to make it
return {
  name = "half_done",
  type = "i32",
  commutative = true,
  acc = "i64",
  identity = "0",
  combine = "return a + b;",
  result = "i32",
}
