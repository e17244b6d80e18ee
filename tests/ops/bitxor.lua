-- exclusive or of u64, with no sample function: the tuner's own data for the type
return {
  name = "bitxor",
  type = "u64",
  identity = 0,
  commutative = true,
  combine = "return a ^ b;",
}
