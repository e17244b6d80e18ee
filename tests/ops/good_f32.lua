-- the largest magnitude of f32 values, with a number for the identity and a tolerance
return {
  name = "maxabs",
  type = "f32",
  identity = 0,
  commutative = true,
  combine = "return fmaxf(fabsf(a), fabsf(b));",
  tolerance = 0,
  sample = function(i, r) return (r % 2001 - 1000) / 8 end,
}
