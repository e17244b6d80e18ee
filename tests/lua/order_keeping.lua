-- one small config of every family that keeps the order (non-commutative operators):
-- the GPU tests of operator files tune it end to end
return {
  { family = "tree_interleaved", params = { B = 128, DIVERGENT = 0 } },
  { family = "tb2", params = { B = 128, R = 2, PAD = 1, PAD_PERIOD = 32 } },
  { family = "tb4warp", params = { B = 128, R = 2 } },
  { family = "matrix", params = { B = 128, H = 32, W = 16, PAD = 1 } },
  { family = "persistent_matrix", params = { B = 128, H = 32, W = 16, PAD = 1 } },
  { family = "diffwarps", params = { P = 2, C = 1, W = 16, PAD = 1 } },
  { family = "diffwarps_async", params = { P = 1, C = 1, W = 32, STAGES = 2, BULK = 0 },
    constraint = function(c, dev) return dev.cc >= 80 end },
}
