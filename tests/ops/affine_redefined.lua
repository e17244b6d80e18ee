-- another operator under the name 'affine' (an exclusive or, conservatively declared
-- non-commutative): a database that holds lua/ops/affine.lua's measurements must refuse it
return {
  name = "affine",
  type = "u64",
  commutative = false,
  identity = 0,
  combine = "return a ^ b;",
}
