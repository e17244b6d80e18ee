-- kahan.lua - a compensated sum of f32 elements: the accumulator carries the sum and the
-- rounding error it has lost so far (Kahan, Babuska and Neumaier; partial sums merged with
-- Knuth's TwoSum, which is exact, so the merge commutes). The finalize adds the compensation
-- back: the result is an f32, compared with a tolerance.
--
--   redtune --op-file lua/ops/kahan.lua --sizes 1M,16M

return {
  name = "kahan",
  type = "f32",
  commutative = true,

  acc = "struct { float s; float c; }",   -- the sum, and what rounding took from it
  result = "f32",

  map = [[
    rt_acc_t r = {x, 0.0f};
    return r;
  ]],

  identity = "{0.0f, 0.0f}",

  -- TwoSum: s + e == a.s + b.s exactly.
  combine = [[
    const float s = a.s + b.s;
    const float bv = s - a.s, av = s - bv;
    const float e = (a.s - av) + (b.s - bv);
    rt_acc_t r = {s, (a.c + b.c) + e};
    return r;
  ]],

  finalize = [[
    return a.s + a.c;
  ]],

  -- Test data: large and small magnitudes mixed, where a plain f32 sum loses digits.
  sample = function(i, r)
    if i % 4 == 0 then
      return ((r % 2001) - 1000) * 4096.0
    end
    return ((r % 2001) - 1000) / 1024.0
  end,
  tolerance = 1e-5,
}
