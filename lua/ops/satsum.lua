-- satsum.lua - saturating sum of u32: sums that stop at 2^32 - 1 instead of wrapping. It
-- commutes, so every family may reduce it.
--
--   redtune --op-file lua/ops/satsum.lua --sizes 1M,64M

return {
  name = "satsum",
  type = "u32",
  commutative = true,
  identity = 0,
  combine = [[
    unsigned int s = a + b;
    return s < a ? 0xffffffffu : s;
  ]],

  -- Test data: values below 4096, so that sizes up to 2^20 stay below the ceiling and
  -- larger ones reach it.
  sample = function(i, r)
    return r & 4095
  end,
}
