-- segmented.lua - the default space of `redtune --segmented keys|offsets`: every segmented
-- family at a handful of points (docs/segmented.md, docs/templates.md). Families that cannot
-- run case.layout are left out by the tuner (seg_per: offsets only; the paper's tree and
-- matrix families: keys only), and the tuner sets LAYOUT and OFF64 itself. About 20 configs
-- per layout on a current GPU.

local function fits(c, dev)
  return c.B <= dev.max_threads_per_block
end

return {
  -- Load-balanced tiles (reduce-by-key for keys, merge path for offsets): block size and
  -- items per thread, with and without staging through shared memory; one persistent grid.
  { family = "seg_lb",
    params = { B = {256, 512}, R = {4, 8, 16}, STAGE = {0, 1}, PERSIST = 0 },
    constraint = fits },
  { family = "seg_lb",
    params = { B = 256, R = 8, STAGE = 1, PERSIST = 1 },
    constraint = fits },

  -- A group of LANES threads per segment (offsets): a thread, a quarter warp, a warp, or
  -- the whole block (LANES = B, CUB's DeviceSegmentedReduce scheme).
  { family = "seg_per",
    params = { B = 256, LANES = {1, 4, 32, 256}, V = {1, 4} },
    constraint = fits },
}
