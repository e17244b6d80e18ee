-- the f32 element of largest magnitude (the greater one on a tie of magnitudes, so that it
-- commutes), with a number for the identity and a tolerance
return {
  name = "maxmag",
  type = "f32",
  identity = 0,
  commutative = true,
  combine = "float ma = fabsf(a), mb = fabsf(b); return mb > ma || (mb == ma && b > a) ? b : a;",
  tolerance = 0,
  sample = function(i, r) return (r % 2001 - 1000) / 8 end,
}
