-- seg_paper_space.lua - the paper's segmented experiment (001_cc281ea25c4a6d8d.txt, Fig. 5;
-- docs/paper.md) as a tuner space, for
--   build/redtune --segmented keys --profiles one,rand10_50,len3 --op min --type f32 \
--                 --space bench/seg_paper_space.lua --sizes 16777216,...,32505856
-- The first config of each family is the paper's own shape, the one `redtune_bench --paper-seg`
-- times at fixed configs without a database (bench/paper_seg.cu, paper_default_configs): TB2 with
-- R = 2 (D = 2B: 61440 blocks at 30*2^20 means B = 256), TB4-warp with R = 4 (D = 4B),
-- Matrix and Persistent Matrix with H = W = 32 (D = 1024), DiffWarps with P = 8 producer
-- warps and C = 1 consumer warp (288 threads, H = W = 32) and DiffWarps16 (the same with
-- W = 16, Table II); seg_lb is redtune's own load-balanced family, for comparison. The other shapes show how far each family moves
-- with its parameters on today's hardware. The tuner sets LAYOUT (keys) and OFF64 itself.

local function fits(c, dev)
  return c.B <= dev.max_threads_per_block
end

return {
  -- TB2 (Zhou et al.'s left-storing tree over (data, owner) pairs): the paper's R = 2.
  { family = "seg_tb2", params = { B = 256, R = 2, PAD = 1 }, constraint = fits },
  { family = "seg_tb2", params = { B = {128, 512}, R = {2, 4}, PAD = {0, 1} }, constraint = fits },

  -- TB4-warp (intra-warp trees with shuffles): the paper's R = 4.
  { family = "seg_tb4warp", params = { B = 256, R = 4 }, constraint = fits },
  { family = "seg_tb4warp", params = { B = {128, 512}, R = {4, 8} }, constraint = fits },

  -- Matrix (PERSIST = 0) and Persistent Matrix (PERSIST = 1): the paper's H = W = 32.
  { family = "seg_matrix", params = { B = 256, H = 32, W = 32, PAD = 1, PERSIST = {0, 1} },
    constraint = fits },
  { family = "seg_matrix", params = { B = 256, H = {32, 64}, W = {16, 64}, PAD = {0, 1}, PERSIST = {0, 1} },
    constraint = function(c, dev) return c.H <= c.B and fits(c, dev) end },

  -- DiffWarps (producer warps stage data-blocks and owners into two buffers, consumer warps
  -- walk the rows): the paper's DiffWarps (W = 32) and DiffWarps16 (W = 16), P = 8, C = 1.
  { family = "seg_diffwarps", params = { P = 8, C = 1, W = {32, 16}, PAD = 1 } },
  { family = "seg_diffwarps", params = { P = {4, 16}, C = {1, 2}, W = {16, 32}, PAD = {0, 1} },
    constraint = function(c, dev, case)   -- 32 loads per producer thread; two buffers in 44 KB
      return 32 * (c.P + c.C) <= dev.max_threads_per_block and c.C * c.W <= 32 * c.P
        and 2 * (32 * c.C * (c.W + c.PAD) + 1) * (case.type_size + 4) <= 44 * 1024
    end },

  -- redtune's load-balanced tiles, for comparison.
  { family = "seg_lb", params = { B = 256, R = 8, STAGE = 1, PERSIST = 0 }, constraint = fits },
  { family = "seg_lb", params = { B = {256, 512}, R = {4, 16}, STAGE = {0, 1}, PERSIST = {0, 1} },
    constraint = function(c, dev, case)   -- a staged tile (values and keys) within 44 KB
      return fits(c, dev) and (c.STAGE == 0 or c.B * c.R * (case.type_size + 4) <= 44 * 1024)
    end },
}
