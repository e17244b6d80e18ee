-- paper.lua - the strategies of Martin et al., "Algorithmic Strategies for Optimizing the
-- Parallel Reduction Primitive in CUDA" (seed 001), at the paper's shapes and a few neighbours
-- of each, for the paper's experiment: min on f32, N = m * 2^20 with m = 16 .. 31
-- (redtune --op min --type f32 --space lua/spaces/paper.lua --sizes 16M,20M,24M,28M,31M).
--
--   tb2                Algorithm 1, TB2: B = 256, R = 2 (D = 2B), a padding slot every 32
--   tb4warp            Algorithm 2, TB4-warp: B = 256, R = 4 (D = 4B = 1024)
--   matrix             Algorithm 3, Matrix: H = W = 32 (D = 1024), B = 256, rows padded to W+1
--   persistent_matrix  Persistent Matrix: the same data-block, a resident grid
--   diffwarps          DiffWarps: P = 8 producers, C = 1 consumer (288 threads), two buffers
--   diffwarps_async    DiffWarps with cp.async / the sm_90 bulk copy engine (not in the paper)
--
-- Every family here keeps the order of the elements, so the space also serves non-commutative
-- operators. 65 configs for f32 on an sm_90 device (58 below, without the bulk copies; fewer
-- for 8-byte types and argmin, where some shapes pass the 48 KB of static shared memory);
-- legal on any device of compute capability 8.0 and up.

-- Static shared memory is at most 48 KB, whatever the device allows with opt-in.
local function smem_fits(bytes, dev)
  return bytes <= math.min(dev.smem_per_block, 48 * 1024)
end

-- Bytes of an accumulator (runtime/optype.c, optype_acc_size): the element's, at least 4
-- (halves and bytes widen), or a value and a 64-bit index for argmin/argmax (struct
-- __align__(8) { value; long long }), {sum, count} for mean, {count, mean, M2} for var/std_mean.
-- tb2 keeps accumulators in shared memory, and so does matrix's second pass (rt_next); the
-- others keep elements.
local function acc_size(case)
  if case.op == "argmin" or case.op == "argmax" or case.op == "mean" then return 16 end
  local o = case.op
  if o == "var_mean" or o == "var_mean_sample" or o == "std_mean" or o == "std_mean_sample" then
    return case.type_size == 8 and 24 or 16
  end
  return math.max(case.type_size, 4)
end

return {
  -- TB2: the paper's shape, without the padding (the bank conflicts it removes), and more
  -- elements per thread (the paper's "code optimization" it leaves aside; CUDPP uses R = 8).
  { family = "tb2",
    params = { B = {128, 256, 512}, R = {2, 4, 8}, PAD = 1, PAD_PERIOD = 32 },
    constraint = function(c, dev, case)
      return c.B <= dev.max_threads_per_block
        and smem_fits((c.B * c.R + c.B * c.R // c.PAD_PERIOD) * acc_size(case), dev)
    end },
  { family = "tb2",
    params = { B = 256, R = 2, PAD = 0, PAD_PERIOD = 32 } },

  -- TB4-warp: the paper's B = 256, R = 4, and R from 1 (one data-warp per warp) to 16.
  { family = "tb4warp",
    params = { B = {256, 512}, R = {1, 2, 4, 8, 16} },
    constraint = function(c, dev) return c.B <= dev.max_threads_per_block end },

  -- Matrix: H = W = 32 with B = 256, with and without the row padding, narrower and wider
  -- rows, and twice the rows (two row warps, their results in one more ordered tree).
  { family = "matrix",
    params = { B = 256, H = 32, W = {16, 32, 64}, PAD = {0, 1} },
    constraint = function(c, dev, case)
      return smem_fits(c.H * (c.W + c.PAD) * acc_size(case), dev)
    end },
  { family = "matrix",
    params = { B = {128, 512}, H = {32, 64}, W = 32, PAD = 1 },
    constraint = function(c, dev, case)
      return c.H <= c.B and c.B <= dev.max_threads_per_block
        and smem_fits(c.H * (c.W + c.PAD) * acc_size(case), dev)
    end },

  -- Persistent Matrix: the grid is SMs x the occupancy of the compiled kernel; the block size
  -- and the data-block size change both the occupancy and the number of barriers.
  { family = "persistent_matrix",
    params = { B = {128, 256, 512}, H = 32, W = {32, 64}, PAD = 1 },
    constraint = function(c, dev, case)
      return c.B <= dev.max_threads_per_block
        and c.H * c.W <= 64 * c.B
        and smem_fits(c.H * (c.W + c.PAD) * case.type_size, dev)
    end },

  -- DiffWarps: the paper's P = 8, C = 1 (B = 288), fewer and more producers, two consumer
  -- warps (64 rows per data-block).
  { family = "diffwarps",
    params = { P = {2, 4, 8, 15}, C = {1, 2}, W = 32, PAD = 1 },
    constraint = function(c, dev, case)
      local threads = 32 * (c.P + c.C)
      return threads <= dev.max_threads_per_block
        and 32 * c.C * c.W <= 32 * 32 * c.P                -- at most 32 loads per producer thread
        and smem_fits(2 * 32 * c.C * (c.W + c.PAD) * case.type_size, dev)
    end },

  -- DiffWarps with hardware copies: one or two producer warps of cp.async, or one producer
  -- warp driving the bulk copy engine (sm_90: BULK = 1; elsewhere it would duplicate BULK = 0),
  -- 2 or 4 stages in flight.
  { family = "diffwarps_async",
    params = { P = {1, 2}, C = {1, 2}, W = {32, 64}, STAGES = {2, 4}, BULK = {0, 1} },
    constraint = function(c, dev, case)
      local row = c.W * case.type_size
      return (c.BULK == 0 or (dev.cc >= 90 and c.P == 1))
        and row % 32 == 0
        and 32 * (c.P + c.C) <= dev.max_threads_per_block
        and smem_fits(c.STAGES * 32 * c.C * (row + 16), dev)
    end },
}
