-- segmented_ship.lua - the small segmented space tools/tune_shipped_seg.sh tunes every shipped
-- operator and type with (db/tuned/): the configs that won some profile of f32 min in the full
-- space (lua/spaces/segmented.lua, docs/results.md "segmented reductions") and their
-- neighbours, with the vector width scaled to the element size. 28 configs for keys (21 for
-- 2-byte types) and 137 for offsets (f32 min; 109 for sum and the integers, which have no
-- NZ; with KW and seg_stream's CH, twenty-fourth session, seg_mark, twenty-fifth, seg_pipe,
-- twenty-sixth: 32 of them, seg_per's U, twenty-seventh, NZ, twenty-eighth, WIN and GRID,
-- twenty-ninth, KW = 2 and MINB, thirtieth, R = 12 and OST = 2, thirty-first; about 4 and 25
-- when the 18 cases min, max, sum x f32, f64, i32 x keys, offsets were first tuned in three
-- device calls; f32 min was also tuned in the full space, on another lent H100: a device row
-- of its own in db/tuned/h100.sql).

local function vec(case) return 16 // case.type_size end   -- one 16-byte load
-- seg_lb takes V = 1, 2, 4: its widest vector is 16 bytes of at most 4 elements
local function lb_vec(case) return math.min(4, vec(case)) end
-- NZ = 1 (a segment folded from its first element by the glue's rt_fold_nz) where the glue
-- has one: float min and max; elsewhere it is NZ = 0's kernel under another key
local function nz_ok(c, case)
  return c.NZ == 0 or ((case.op == "min" or case.op == "max")
                       and (case.type == "f32" or case.type == "f64"))
end

return {
  -- Keys: load-balanced tiles, register path, 16-byte loads; OST = 1 stores the outputs of
  -- tiles with many segments coalesced (won len3 at 30M); KW = 1 walks without a branch at
  -- a key change (H200: heavy and len3 0.93-0.98x, rand10_50 1.04-1.09x); KW = 2 walks a
  -- thread's elements after its first in 32-bit keys (H200, 30M, f32: 0.84-0.90x KW = 1's
  -- best on heavy, len3 and rand10_50, min and sum; thirtieth session). MINB = 3 (three blocks
  -- an SM asked of ptxas) for 8-byte values at R = 8 (H200, min f64 30M: 0.83-0.93x) and for
  -- 4-byte ones at R = 12 (40 registers, no spill: f32 30M len3 min 99.4 us against R = 16's
  -- 117.8, sum heavy 100.0 against 104.7; 8-byte values spill there, 1.3-2.3x slower;
  -- thirty-first session). OST = 2 (with KW = 2) prefills the stage so that the walk stores
  -- no empty key inside it: H200 30M heavy (an empty segment in ten) 0.958x OST = 1 (min and
  -- sum f32, R = 12 MINB = 3), len3 (none) 1.04-1.06x.
  { family = "seg_lb",
    params = { B = 512, R = {8, 12, 16}, V = {2, 4}, STAGE = 0, PERSIST = 0, OST = {0, 1, 2},
               MP = 1, KW = {0, 1, 2}, MINB = {0, 3} },
    constraint = function(c, dev, case)
      return case.layout == "keys" and c.V == lb_vec(case) and c.B <= dev.max_threads_per_block
             and (c.OST < 2 or c.KW == 2)
             and (c.MINB == 0 or (case.type_size == 8 and c.R == 8)
                  or (case.type_size == 4 and c.R == 12))
    end },
  -- Offsets: element tiles (MP = 0) for long segments and the heavy mix; FAST = 1 reduces a
  -- tile inside one segment as a flat reduction does.
  { family = "seg_lb",
    params = { B = 512, R = {8, 16}, V = {2, 4}, STAGE = 0, PERSIST = 0, MP = 0, FAST = {0, 1} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == lb_vec(case) and c.B <= dev.max_threads_per_block
    end },
  -- Offsets streamed by warps of a resident grid, the window of starts following the tiles
  -- (f32 min, one run on an H100: ties seg_lb on one segment, 0.89x it on the heavy mix);
  -- CH = 4: a block per four tiles a warp instead of the resident grid (the H200's heavy tail).
  { family = "seg_stream",
    params = { B = {256, 512}, R = {16, 32}, V = {2, 4}, WS = 0, MINW = {0, 24}, PF = {0, 1},
               CH = {0, 4} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == lb_vec(case) and c.B * c.R <= 8192
             and c.B <= dev.max_threads_per_block
    end },
  -- Offsets: a block's chunk in tiles, each segment start marked at its position (seg_mark):
  -- no search per tile, a tile without a start reduced as a flat reduction would (H200, 30M,
  -- heavy tail: min f32 0.91x seg_stream, sum f64 0.71x with MINW = 32; docs/results.md,
  -- twenty-fifth session).
  -- J = 8 (thirty-fourth session): a 2048-element tile of the heavy tail holds
  -- up to 875 starts, and 42-53% of them more than J = 4's 496-entry window, whose rest comes
  -- from global memory two barriers a round (tools/exp/heavy_tiles.c); J = 8 adds 2 registers
  -- (min f32: 96, the same 5 blocks of 128 an SM).
  -- MP = 1 (the marks padded) and NZ = 1 (float min and max; thirty-fifth session, H100,
  -- heavy at 2^22 and 30M, min f32 and max f64: MP = 1 0.92-0.98x MP = 0, NZ = 1 0.93-0.99x
  -- NZ = 0, J = 8 0.83-0.98x J = 4 but for max f64 at 30M, 1.03x).
  { family = "seg_mark",
    params = { B = 128, R = {8, 16}, V = {2, 4}, CH = {8, 32}, J = {4, 8}, PF = 1,
               NZ = {0, 1}, MP = 1, MINW = {0, 32} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == lb_vec(case) and c.R % c.V == 0
             and nz_ok(c, case)
    end },
  -- Offsets: a thread per segment reading from shared memory that a resident block fills
  -- with each tile's span by cp.async a tile ahead (short segments). Two stages of KB
  -- kilobytes and three slots of B*SEGS+1 32-bit offsets within 48 KB (with
  -- 64-bit offsets the template shrinks its stages to fit). NZ = 1 with H = 0 (H200, 30M:
  -- min f32 len3 0.92x NZ = 0, len1 0.89x; docs/results.md, twenty-eighth session).
  { family = "seg_pipe",
    params = { B = {128, 256}, SEGS = {2, 4, 8}, V = {1, 2, 4, 8}, RV = 1, KB = {8, 12, 16},
               H = {0, 4}, NZ = {0, 1} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == vec(case)
             and 2 * c.KB * 1024 + 3 * (c.B * c.SEGS + 1) * 4 <= 48 * 1024
             and nz_ok(c, case) and (c.NZ == 0 or c.H == 0)
    end },
  -- Offsets: a group of LANES threads per segment, for short and medium segments; a warp or
  -- a block a segment also with U = 2 and 4 (rounds a lane loads together, one tree a
  -- segment; twenty-seventh session).
  { family = "seg_per",
    params = { B = 256, LANES = {1, 4, 32, 256}, V = {1, 2, 4, 8, 16}, U = {1, 2, 4} },
    constraint = function(c, dev, case)
      return (c.LANES == 1 and c.U == 1 and (c.V == 1 or c.V == vec(case)))
             or (c.LANES == 4 and c.U == 1 and c.V == vec(case))
             or (c.LANES >= 32 and (c.V == vec(case) or c.V == 2 * vec(case)))
    end },
  -- Offsets: a thread per segment, two or four segments a lane with their loads in flight
  -- together (segments of a few elements).
  { family = "seg_per",
    params = { B = {128, 256}, LANES = 1, V = {1, 2, 4}, SEGS = {2, 4} } },
  -- Offsets: a thread per segment, the warp's span staged in shared memory (short segments).
  { family = "seg_per",
    params = { B = 256, LANES = 1, STAGE = 1, V = {8, 16} },
    constraint = function(c, dev, case)
      return c.B * c.V * case.type_size <= 44 * 1024
    end },
  -- Offsets: a thread per segment, the warp's whole span copied into shared memory by
  -- cp.async (short segments of unequal length); NZ = 1 (H200, 30M: min f32 rand10_50 0.85x
  -- NZ = 0); WIN kilobytes of windows a block and GRID = 5 blocks an SM looping over the
  -- tiles (H200, rand10_50: 0.96-0.97x WIN = 40, GRID = 0 at 2^22 and for min f64 at 30M;
  -- twenty-ninth session).
  { family = "seg_per",
    params = { B = {128, 256}, LANES = 1, STAGE = 2, V = {2, 4, 8}, NZ = {0, 1},
               WIN = {24, 36, 40}, GRID = {0, 5} },
    constraint = function(c, dev, case)
      return c.V * case.type_size == 16 and nz_ok(c, case)
    end },
}
