-- derived parameters, computed from the device and the other parameters
return {
  { family = "gridstride", params = { B = {128, 256, dev.max_threads_per_block}, V = 4, U = 1 },
    derive = function(c, dev, case) c.G = dev.max_threads_per_sm // c.B end,
    constraint = function(c) return c.G <= 8 end },
  { family = "tree_sequential", params = { B = 256, R = {1, 2} },
    derive = function(c) c.LOAD_ADD = c.R > 1 and 1 or 0 end },
}
