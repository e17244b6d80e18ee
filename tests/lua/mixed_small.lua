-- two families that need a commutative operator and two that keep the order, one small config
-- each: the GPU tests of operator files tune it end to end
return {
  { family = "gridstride", params = { B = 256, V = 1, U = 2, G = 2 } },
  { family = "tree_sequential", params = { B = 256, R = 2, LOAD_ADD = 1, WARP = 1, UNROLL = 0 } },
  { family = "tb2", params = { B = 256, R = 2, PAD = 1, PAD_PERIOD = 32 } },
  { family = "tb4warp", params = { B = 256, R = 4 } },
}
