-- segmented.lua - the default space of `redtune --segmented keys|offsets`: every segmented
-- family at a handful of points (docs/segmented.md, docs/templates.md). Families that cannot
-- run case.layout are left out by the tuner (seg_per: offsets only; the paper's tree and
-- matrix families: keys only), and the tuner sets LAYOUT and OFF64 itself. 85 configs
-- for keys and 303 for offsets (f32 min on sm_90; 137 before seg_pipe, 181 before seg_per's U,
-- 189 before NZ, 215 before seg_mark, 271 before seg_mark's NZ; operators without
-- rt_fold_nz have fewer).

local SMEM = 44 * 1024   -- what the templates allow themselves (static shared memory)

local function fits(c, dev)
  return c.B <= dev.max_threads_per_block
end

-- NZ = 1 (a segment folded from its first element by the glue's rt_fold_nz) where the glue
-- has one: float min and max; elsewhere it is NZ = 0's kernel under another key
local function nz_ok(c, case)
  return c.NZ == 0 or ((case.op == "min" or case.op == "max")
                       and (case.type == "f32" or case.type == "f64"))
end

-- seg_lb's shared memory: keys stage B*R elements and keys (STAGE = 1; STAGE = 0 keeps them
-- in registers); offsets with MP = 1 keep the tile's elements and segment ends in one array of
-- B*R (+1/32) slots of the larger of the element and the offset (8 bytes when 64-bit); MP = 0
-- stages only the tile's segment starts.
local function lb_fits(c, dev, case)
  local bytes
  if case.layout == "keys" then
    bytes = c.STAGE == 1 and c.B * c.R * (case.type_size + 4) or 0
  else
    if c.STAGE == 1 then return false end   -- STAGE is ignored for offsets: one copy only
    -- the space does not know OFF64: count 8-byte offsets
    if c.MP == 0 then   -- element tiles: up to min(B*R/2, 4096) segment starts staged
      bytes = math.min(math.floor(c.B * c.R / 2), 4096) * 8
    else
      bytes = (c.B * c.R + math.floor(c.B * c.R / 32) + 2) * math.max(case.type_size, 8)
    end
  end
  return fits(c, dev) and bytes <= SMEM and c.R % c.V == 0 and c.V * case.type_size <= 16
end

-- seg_lb's widest vector: 16 bytes, at most 4 elements (the template takes V = 1, 2, 4):
-- 4 for 4-byte types, 2 for 8-byte ones, 4 for halves and bytes.
local function lb_vec(case)
  return math.min(4, 16 // case.type_size)
end

-- MINB asks ptxas for 1536 threads an SM (42 registers a thread) where the keys path fits in
-- them without spilling: R = 8 (8-byte values), R = 12 (4-byte values; thirty-first session).
local function minb_ok(c, case)
  return c.MINB == 0 or (c.MINB * c.B == 1536
                         and (c.R == 8 or (c.R == 12 and case.type_size == 4)))
end

return {
  -- Load-balanced tiles (reduce-by-key for keys, merge path for offsets). Keys: the register
  -- path (STAGE = 0) with 16-byte vector loads (V = 4; V = 2 for 8-byte types) and long
  -- per-thread rows so the per-tile costs amortise (MINB: 1536 threads an SM asked of ptxas at
  -- R = 8); one staged point for comparison. Offsets:
  -- the staged merge path at a few tile sizes (MP = 1) and element tiles (MP = 0).
  { family = "seg_lb",
    params = { B = {256, 512}, R = {8, 12, 16, 32}, V = {2, 4}, STAGE = 0, PERSIST = 0,
               KW = {0, 1, 2}, MINB = {0, 3, 6} },
    constraint = function(c, dev, case)
      return lb_fits(c, dev, case) and case.layout == "keys" and c.B * c.R <= 8192
             and c.V == lb_vec(case) and minb_ok(c, case)
    end },
  -- Keys with the tile's outputs staged in shared memory and stored coalesced (OST = 1):
  -- many small segments; OST = 2 (KW = 2) with the stage prefilled: empty segments.
  { family = "seg_lb",
    params = { B = {256, 512}, R = {8, 12, 16}, V = {2, 4}, STAGE = 0, PERSIST = 0,
               OST = {1, 2}, KW = {0, 1, 2}, MINB = {0, 3, 6} },
    constraint = function(c, dev, case)
      return lb_fits(c, dev, case) and case.layout == "keys" and c.V == lb_vec(case)
             and not (c.B == 256 and c.R == 8) and minb_ok(c, case)
             and (c.OST == 1 or c.KW == 2)
    end },
  { family = "seg_lb",
    params = { B = 256, R = 16, V = 1, STAGE = 1, PERSIST = 0 },
    constraint = function(c, dev, case)
      return case.layout == "keys" and lb_fits(c, dev, case)
    end },
  -- FAST = 1 (offsets only): a tile inside one segment is reduced as a flat reduction does it
  -- (long segments); FAST = 0 is the general path for every tile.
  { family = "seg_lb",
    params = { B = {128, 256}, R = {8, 16, 32}, V = {2, 4}, STAGE = 0, PERSIST = 0, MP = 1,
               FAST = {0, 1} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and lb_fits(c, dev, case) and c.V == lb_vec(case)
    end },
  -- Offsets in element tiles (MP = 0): the keys path's register/vector loads, the tile's
  -- segment starts from two warp searches; for long segments (no scan when a tile lies in one).
  { family = "seg_lb",
    params = { B = {256, 512}, R = {8, 16, 32}, V = {2, 4}, STAGE = 0, PERSIST = 0, MP = 0,
               FAST = {0, 1} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and lb_fits(c, dev, case) and c.V == lb_vec(case)
             and c.B * c.R <= 8192
    end },
  { family = "seg_lb",
    params = { B = 256, R = 16, V = {2, 4}, STAGE = 0, PERSIST = 1, FAST = {0, 1} },
    constraint = function(c, dev, case)
      return lb_fits(c, dev, case) and c.V == lb_vec(case)
             and (c.FAST == 0 or case.layout == "offsets")
    end },

  -- Offsets streamed (seg_stream): a resident grid, each warp one contiguous chunk of the
  -- elements in tiles of 32*R; a tile's segment starts come from a window of the offsets that
  -- follows the previous tile's (no search per tile), its outputs are staged and stored
  -- coalesced. The template sizes the window to 44 KB itself (WS = 1 halves it: occupancy);
  -- MINW = 24 asks the register allocator for 24 warps per SM; PF = 1 loads the next tile
  -- while a tile is walked (long segments), PF = 0 keeps the registers (short ones); CH > 0
  -- launches a block per CH tiles a warp instead of the resident grid (heavy tails).
  { family = "seg_stream",
    params = { B = {256, 512}, R = {16, 32}, V = {2, 4}, WS = {0, 1}, MINW = {0, 24}, PF = {0, 1},
               CH = {0, 2, 4} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and fits(c, dev) and c.B * c.R <= 8192
             and c.V == lb_vec(case) and c.R % c.V == 0
    end },

  -- Offsets marked (seg_mark): a block per CH consecutive tiles of B*R elements, a tile's
  -- segment starts marked at their positions in shared memory from a window of the offsets
  -- loaded during the tile before (J*31*B/32 starts; more from global memory), a tile without
  -- a start reduced as a flat reduction would; PF = 1 loads the next tile during the walk;
  -- MINW = 32 (64 registers) won the heavy tail's sums on the H200; J = 8 (a window of 992
  -- starts: the heavy tail's 2048-element tiles hold up to 875), MP = 1 (the marks padded
  -- against bank conflicts) and NZ = 1 (float min and max) were timed in the thirty-fifth
  -- session (H100, heavy at 2^22 and 30M, min f32 and max f64): J = 8 0.83-0.98x J = 4 but
  -- for max f64 at 30M (1.03x), MP = 1 0.92-0.98x MP = 0, NZ = 1 0.93-0.99x NZ = 0.
  { family = "seg_mark",
    params = { B = 128, R = {8, 16}, V = {2, 4}, CH = {8, 32}, J = {4, 8}, PF = {0, 1},
               NZ = {0, 1}, MP = 1, MINW = {0, 32} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and fits(c, dev) and c.V == lb_vec(case) and c.R % c.V == 0
             and nz_ok(c, case)
    end },

  -- A thread per segment reading from shared memory that a resident block fills with each
  -- tile's span by cp.async a tile ahead (seg_pipe): short segments. Two stages of KB
  -- kilobytes and three slots of B*SEGS+1 32-bit offsets within 48 KB (with
  -- 64-bit offsets the template shrinks its stages to fit).
  -- NZ = 1 (H = 0): float min and max fold a segment from its first element (H200, 30M: min
  -- f32 len3 0.92x NZ = 0; docs/results.md, twenty-eighth session).
  { family = "seg_pipe",
    params = { B = {128, 256}, SEGS = {1, 2, 4, 8}, V = {1, 2, 4, 8}, RV = 1, KB = {8, 12, 16},
               H = {0, 4}, NZ = {0, 1} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and fits(c, dev) and c.V * case.type_size == 16
             and c.RV * case.type_size <= 16
             and 2 * c.KB * 1024 + 3 * (c.B * c.SEGS + 1) * 4 <= 48 * 1024
             and nz_ok(c, case) and (c.NZ == 0 or c.H == 0)
    end },

  -- A group of LANES threads per segment (offsets): a thread, a quarter warp, a warp, or
  -- the whole block (LANES = B, CUB's DeviceSegmentedReduce scheme).
  { family = "seg_per",
    params = { B = 256, LANES = {1, 4, 32, 256}, V = {1, 2, 4, 8, 16} },
    constraint = function(c, dev, case)
      -- V = 1, or whole 16-byte vectors (two of them: V = 8 on 4-byte types, 16 on halves)
      return fits(c, dev) and ((c.V == 1 and c.LANES <= 4) or c.V * case.type_size == 16
                               or (c.V * case.type_size == 32 and c.LANES >= 32))
    end },

  -- A warp or a block per segment, each lane with U = 2 or 4 rounds' loads in flight and one
  -- tree a segment (a commutative operator; offsets len1000 on the H200: 0.82-0.97x U = 1,
  -- docs/results.md, twenty-seventh session).
  { family = "seg_per",
    params = { B = 256, LANES = {32, 256}, V = {2, 4, 8, 16}, U = {2, 4} },
    constraint = function(c, dev, case)
      return fits(c, dev) and (c.V * case.type_size == 16 or c.V * case.type_size == 32)
    end },

  -- A thread per segment, two or four segments a lane with their loads in flight together.
  { family = "seg_per",
    params = { B = 256, LANES = 1, V = {1, 2, 4}, SEGS = {2, 4} },
    constraint = function(c, dev, case) return fits(c, dev) end },
  -- A thread per segment with the warp's span staged in shared memory (coalesced loads):
  -- short segments. The buffers hold B * V elements.
  { family = "seg_per",
    params = { B = 256, LANES = 1, STAGE = 1, V = {4, 8, 16} },
    constraint = function(c, dev, case)
      return fits(c, dev) and c.B * c.V * case.type_size <= SMEM
    end },
  -- A thread per segment with the warp's whole span copied into shared memory by cp.async
  -- (WIN KB a block), each lane reading its segment from there V elements at a time; NZ = 1
  -- for float min and max (H200, 30M: min f32 rand10_50 0.85x NZ = 0); GRID = 5: a grid of
  -- five blocks an SM looping over the tiles (H200, rand10_50: WIN = 24 0.97x WIN = 40 for
  -- f32 at 2^22, WIN = 36 0.96x for min f64 at 30M, GRID = 5 0.96x for min f64 at 2^22;
  -- docs/results.md, twenty-ninth session).
  { family = "seg_per",
    params = { B = {128, 256}, LANES = 1, STAGE = 2, V = {2, 4, 8}, NZ = {0, 1},
               WIN = {24, 36, 40}, GRID = {0, 5} },
    constraint = function(c, dev, case)
      return fits(c, dev) and (c.V * case.type_size == 16 or c.V * case.type_size == 8)
             and nz_ok(c, case)
    end },
  -- A thread per segment (direct or through the window) whose segments of more than LONG
  -- rounds go to the grid's second launch, a warp a chunk of SPLIT elements (heavy tails; on
  -- the H200 4.5x faster than LONG alone on the heavy profile at 30M, still 1.24x seg_stream:
  -- docs/results.md, twenty-third session).
  { family = "seg_per",
    params = { B = 256, LANES = 1, STAGE = {0, 2}, V = {1, 2, 4, 8}, SPLIT = {2048, 8192} },
    constraint = function(c, dev, case)
      return fits(c, dev) and (c.V * case.type_size == 16 or (c.V == 1 and c.STAGE == 0))
    end },

  -- The paper's families on owner arrays (keys): Matrix and Persistent Matrix, TB2 and
  -- TB4-warp at the paper's shapes and one larger data-block each, and DiffWarps.
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
  -- DiffWarps (P producer warps stage the next data-block and its owners while C consumer
  -- warps walk the rows of the previous one): the paper's DiffWarps (P = 8, C = 1, W = 32) and
  -- DiffWarps16 (W = 16), half the producers, and two consumer warps (H = 64).
  { family = "seg_diffwarps",
    params = { P = {4, 8}, C = {1, 2}, W = {16, 32}, PAD = 1 },
    constraint = function(c, dev, case)
      local H = 32 * c.C
      return 32 * (c.P + c.C) <= dev.max_threads_per_block
        and H * c.W <= 32 * 32 * c.P                                   -- 32 loads per producer thread
        and 2 * (H * (c.W + c.PAD) + 1) * (case.type_size + 4) <= SMEM  -- two buffers of values and owners
    end },
}
