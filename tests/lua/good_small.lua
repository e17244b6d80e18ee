-- a small space: order, defaults, duplicates, the commutative filter, the helpers
return {
  { family = "tree_interleaved", params = { B = {64, 128}, DIVERGENT = {0, 1} } },
  { family = "tree_interleaved", params = { DIVERGENT = 1, B = 64 } },  -- duplicate: dropped
  { family = "gridstride",
    params = { G = redtune.range(1, 3), B = redtune.pow2(128, 256), V = {1, 4}, U = 2 },
    constraint = function(c, dev, case) return c.V * case.type_size <= 16 end },
}
