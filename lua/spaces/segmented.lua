-- segmented.lua - the default space of `redtune --segmented keys|offsets`: every segmented
-- family at a handful of points (docs/segmented.md, docs/templates.md). Families that cannot
-- run case.layout are left out by the tuner (seg_per: offsets only; the paper's tree and
-- matrix families: keys only), and the tuner sets LAYOUT and OFF64 itself. About 25 configs
-- per layout on a current GPU.

local SMEM = 44 * 1024   -- what the templates allow themselves (static shared memory)

local function fits(c, dev)
  return c.B <= dev.max_threads_per_block
end

-- seg_lb's shared memory: keys stage B*R elements and keys; offsets keep B*R segment ends
-- (8 bytes when the offsets are 64-bit) and, staged, the elements.
local function lb_fits(c, dev, case)
  local per = case.layout == "keys" and (c.STAGE == 1 and case.type_size + 4 or 0)
              or 8 + (c.STAGE == 1 and case.type_size or 0)
  return fits(c, dev) and c.B * c.R * per <= SMEM
end

return {
  -- Load-balanced tiles (reduce-by-key for keys, merge path for offsets): block size and
  -- items per thread, with and without staging through shared memory; persistent grids.
  { family = "seg_lb",
    params = { B = {256, 512}, R = {4, 8, 16}, STAGE = {0, 1}, PERSIST = 0 },
    constraint = lb_fits },
  { family = "seg_lb",
    params = { B = 256, R = {8, 16}, STAGE = {0, 1}, PERSIST = 1 },
    constraint = lb_fits },

  -- A group of LANES threads per segment (offsets): a thread, a quarter warp, a warp, or
  -- the whole block (LANES = B, CUB's DeviceSegmentedReduce scheme).
  { family = "seg_per",
    params = { B = 256, LANES = {1, 4, 32, 256}, V = {1, 4} },
    constraint = fits },

  -- The paper's families on owner arrays (keys): Matrix and Persistent Matrix, TB2 and
  -- TB4-warp at the paper's shapes and one larger data-block each.
  { family = "seg_matrix",
    params = { B = 256, H = {128, 256}, W = {16, 32}, PAD = 1, PERSIST = {0, 1} },
    constraint = function(c, dev, case)
      return fits(c, dev) and c.H * c.W * (case.type_size + 4) <= SMEM
    end },
  { family = "seg_tb2",
    params = { B = {256, 512}, R = 2, PAD = 1 },
    constraint = fits },
  { family = "seg_tb4warp",
    params = { B = 256, R = {4, 8} },
    constraint = fits },
}
