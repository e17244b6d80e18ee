-- paper_space.lua - the space of the first run of the paper's unsegmented experiment (docs/paper.md):
-- the six paper families at a few shapes each, plus two of redtune's own for comparison.
return {
  { family = "tb2", params = { B = {128, 256, 512}, R = {2, 4}, PAD = {0, 1}, PAD_PERIOD = 32 } },
  { family = "tb4warp", params = { B = {128, 256, 512}, R = {4, 8} } },
  { family = "matrix", params = { B = 256, H = {32, 64}, W = {16, 32, 64}, PAD = {0, 1} } },
  { family = "persistent_matrix", params = { B = 256, H = {32, 64}, W = {16, 32, 64}, PAD = {0, 1} } },
  { family = "diffwarps", params = { P = {4, 8, 16}, C = {1, 2}, W = {16, 32}, PAD = 1 } },
  { family = "diffwarps_async", params = { P = {1, 2}, C = {1, 2}, W = {32, 64}, STAGES = {3, 4}, BULK = {0, 1} },
    constraint = function(c, dev, case) return c.STAGES * 32 * c.C * c.W * case.type_size <= 40000 end },
  { family = "tree_sequential", params = { B = 512, R = 4, LOAD_ADD = 1, WARP = 1, UNROLL = 1 } },
  { family = "gridstride", params = { B = 512, V = 4, U = 4, G = {4, 8} } },
}
