-- affine.lua - composition of affine maps over 32-bit integers: an associative operator that
-- does not commute, so only the families that keep the order may reduce it.
--
-- An element is the map x -> a*x + b (mod 2^32), packed in a u64 as (a << 32) | b. The
-- reduction of f0, f1, ..., fn-1 is the map "f0, then f1, ..., then fn-1". Swapping two
-- elements changes the result, so a family that combines out of order shows at once.
--
--   redtune --op-file lua/ops/affine.lua --space lua/spaces/paper.lua --sizes 1M,16M

return {
  name = "affine",
  type = "u64",
  commutative = false,

  -- The identity map x -> 1*x + 0.
  identity = "0x100000000ULL",

  -- combine(f, g) = "f, then g": g(f(x)) = (ag*af) x + (ag*bf + bg); a holds the lower indices.
  combine = [[
    unsigned int af = (unsigned int)(a >> 32), bf = (unsigned int)a;
    unsigned int ag = (unsigned int)(b >> 32), bg = (unsigned int)b;
    return ((unsigned long long)(ag * af) << 32) | (unsigned int)(ag * bf + bg);
  ]],

  -- Test data: odd slopes (bit 32 set), so that long compositions never collapse to a
  -- constant map and every element keeps its weight in the result.
  sample = function(i, r)
    return r | (1 << 32)
  end,
}
