-- tiny_space.lua - experiment (twentieth session, run 5): lua/spaces/default.lua with
-- tree_sequential at 32 and 64 threads and oneblock at 64 and 128 too, for n <= 1024, where
-- the fewer warps a block has, the sooner it is done (H200, min f32 at 16: tree_sequential
-- B=128 3.74 us, B=256 3.85, oneblock B=256 4.00, B=1024 4.22).

local pow2 = redtune.pow2

-- The block fits the device, and so does the tree's shared array of B elements.
local function fits(c, dev, case)
  return c.B <= dev.max_threads_per_block and c.B * case.type_size <= dev.smem_per_block
end

return {
  -- Interleaved addressing, divergent branches (Harris' reduce1) and strided indices (reduce2).
  { family = "tree_interleaved",
    params = { B = 256, DIVERGENT = {1, 0} },
    constraint = fits },

  -- Sequential addressing and the cumulative ladder on top of it: plain (000), first add
  -- during load (100), unrolled last warp (110), complete unrolling by block size (111).
  { family = "tree_sequential",
    params = { B = 256, R = 1, LOAD_ADD = {0, 1}, WARP = {0, 1}, UNROLL = {0, 1} },
    constraint = function(c, dev, case)
      return c.WARP <= c.LOAD_ADD and c.UNROLL <= c.WARP and fits(c, dev, case)
    end },

  -- The whole ladder on, across block sizes and elements per thread.
  { family = "tree_sequential",
    params = { B = pow2(32, 1024), R = {1, 4, 16}, LOAD_ADD = 1, WARP = 1, UNROLL = 1 },
    constraint = fits },

  -- One block for all of n (small n: no partials, no ticket, no second launch); the widest
  -- vector or scalar loads, 1..4 loads in flight. The tuner times it up to its @max_n (2^18
  -- elements): one SM reads about 100 GB/s, so past that a grid of many blocks is far faster.
  { family = "oneblock",
    params = { B = pow2(64, 1024), V = {1, 2, 4, 8, 16}, U = {1, 2, 4} },
    constraint = function(c, dev, case)
      local bytes = c.V * case.type_size
      local scalar = case.type_size == 1 and 2 or 1
      return c.B <= dev.max_threads_per_block
        and (c.V == scalar or bytes == 16) and bytes <= 16
    end },

  -- Grid-stride loads: the widest vector (16 bytes: 8 halves, 16 bytes of i8/u8) against
  -- scalar loads, 1..8 loads in flight per thread, and grids of G blocks per SM.
  { family = "gridstride",
    params = { B = pow2(128, 1024), V = {1, 2, 4, 8, 16}, U = {1, 2, 4, 8}, G = pow2(1, 8) },
    constraint = function(c, dev, case)
      local bytes = c.V * case.type_size
      -- the template has no 1-byte load (co_load_vec): i8/u8 load at least two elements
      local scalar = case.type_size == 1 and 2 or 1
      local threads = c.B * c.G                  -- threads the grid puts on each SM
      return c.B <= dev.max_threads_per_block
        and (c.V == scalar or bytes == 16)       -- scalar, or the widest legal vector
        and bytes <= 16
        and bytes * c.U <= 64                    -- at most 64 bytes in flight per thread
        and threads >= dev.max_threads_per_sm // 2   -- at least half the SM's threads busy
        and threads <= 2 * dev.max_threads_per_sm    -- at most two waves of blocks
    end },
}
