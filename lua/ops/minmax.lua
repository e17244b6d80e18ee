-- minmax.lua - the least and the greatest element in one pass: a pair accumulator over f16
-- elements (stored as their bits; the map widens them with rt_h2f). The result is the pair
-- itself, {lo, hi} as two f32 (exact: each is one of the elements).
--
--   redtune --op-file lua/ops/minmax.lua --sizes 1M,16M

return {
  name = "minmax",
  type = "f16",
  commutative = true,

  acc = "struct { float lo; float hi; }",

  map = [[
    const float v = rt_h2f(x);
    rt_acc_t r = {v, v};
    return r;
  ]],

  -- {+inf, -inf}: nothing is below +inf or above -inf.
  identity = "{__int_as_float(0x7f800000), __int_as_float(0xff800000)}",

  combine = [[
    rt_acc_t r = {fminf(a.lo, b.lo), fmaxf(a.hi, b.hi)};
    return r;
  ]],

  -- Test data: multiples of 1/16 in [-625, 625], exact in f16.
  sample = function(i, r)
    return ((r % 20001) - 10000) / 16
  end,
}
