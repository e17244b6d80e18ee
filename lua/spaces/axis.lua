-- axis.lua - the default space of `redtune --axis`: reductions of an [outer, len, inner]
-- tensor along len (docs/axis.md). The tuner expands it once per shape (case.outer, case.len,
-- case.inner), so each shape gets the configs that matter for its kind:
--   axis_rows (inner == 1 only; it needs a commutative operator): L lanes per row from 1 to
--     B, never more lanes than the row has elements (L * V up to len rounded up to a power
--     of two), never a block of more rows than there are, enough lanes for long rows; split
--     rows in contiguous parts (IL = 0) or in interleaved rounds (IL = 1);
--   axis_cols (any shape, any operator: it keeps the order): TX columns x TY = B / TX row
--     groups, tiles of TX * CV columns no wider than inner and at least a warp wide where
--     inner allows, never more row groups than len has rows (B = 64 aside: the fallback of
--     short rows for operators that do not commute, a block walking each row); rows
--     interleaved (commutative operators only) by one value, IL = 2: over the splits and the
--     row groups (a grid-stride walk of the rows), for tiles narrower than a row too where
--     U >= 2 and CHUNK >= 1024; unsplit (CHUNK = 0) it is IL = 1's walk, the same code, where
--     the tile is a whole row, so that the block reads one stream (the thirteenth session's
--     pairs: IL = 2 as fast as IL = 1 and the best of either 1.3-3.8% faster than the best of
--     IL = 0 on three split column shapes; one value, so that a local search steps from an
--     unsplit config to a split one by CHUNK alone, docs/axis.md). IL = 1 stays a legal
--     parameter (split too: a block's own part interleaved) that this space leaves out.
-- CHUNK 512 and 2048 (one split a block of the GPU's width for 65536 rows, and half that)
-- come with rows interleaved only, to keep the space's size; so do rows' 131072 (fewer splits
-- of very long rows: [16 x 2^22] f32 0.5% faster than with 65536 on the H100, fourteenth
-- session, docs/axis.md).
-- CHUNK (splits of len) is offered only where a split can happen: len of at least two chunks
-- and too few tiles to fill the GPU (plan.c splits only then). Vector widths are those the shape
-- can use (len % V == 0 for rows, inner % CV == 0 for columns: else the kernel loads scalars).
-- A few hundred configs per shape at most (about 100 to 800 on an H100 for the default shapes).

local outer, len, inner = case.outer or 1, case.len or 1, case.inner or 1
local size = case.type_size

-- The smallest power of two >= x.
local function cp2(x)
  local p = 1
  while p < x do p = p * 2 end
  return p
end

-- 1, and the widest vector of at most 16 bytes that divides m (and half of it when >= 4).
local function vectors(m, most)
  local v = math.min(16 // size, most)
  while v > 1 and m % v ~= 0 do v = v // 2 end
  local t = { 1 }
  if v >= 4 then t[#t + 1] = v // 2 end
  if v > 1 then t[#t + 1] = v end
  return t
end

-- Blocks of B threads the GPU holds at once, about: splits pay only below that many tiles.
local function fill(B)
  return dev.sm_count * (dev.max_threads_per_sm // B)
end

local function chunk_ok(c, tiles, work)
  if c.CHUNK == 0 then return true end
  return len >= 2 * c.CHUNK and tiles <= 4096 and tiles < fill(c.B) and c.CHUNK >= 4 * work
end

-- A split's fewest elements of len: for rows an element is one value, for columns a whole
-- row of the tile (TX * CV values), so columns split finer (1x65536x128 has 2 tiles of 128
-- columns: with 8192 rows a split it got only 16 blocks, 37% of the read bandwidth).
local CHUNKS = { 0, 8192, 65536, 131072 }
local COL_CHUNKS = { 0, 256, 512, 1024, 2048, 4096 }
local LANES = redtune.pow2(1, 1024)

return {
  { family = "axis_rows",
    params = { B = { 128, 256, 512, 1024 }, L = LANES, V = vectors(len, 16), U = { 1, 2, 4 },
               CHUNK = CHUNKS, IL = { 0, 1 } },
    constraint = function(c, dev, case)
      if inner ~= 1 or c.L > c.B or c.B > dev.max_threads_per_block then return false end
      if c.IL == 1 and c.CHUNK == 0 then return false end        -- interleaving splits only
      if c.CHUNK == 131072 and c.IL == 0 then return false end    -- the longest: interleaved
      if c.L * c.V > cp2(len) then return false end            -- idle lanes
      if c.L < c.B and c.B // c.L > outer then return false end  -- idle rows in the block
      local step = c.L * c.V * c.U
      local tiles = (outer + c.B // c.L - 1) // (c.B // c.L)
      if not chunk_ok(c, tiles, step) then return false end
      local part = c.CHUNK > 0 and math.min(len, c.CHUNK) or len
      if step * 64 < part and c.L < c.B then return false end  -- too few lanes per row
      return c.U == 1 or part >= step
    end },
  { family = "axis_cols",
    params = { B = { 64, 128, 256, 512, 1024 }, TX = redtune.pow2(1, 256),
               CV = vectors(inner, 8), U = { 1, 2, 4 }, CHUNK = COL_CHUNKS, IL = { 0, 2 } },
    constraint = function(c, dev, case)
      if c.TX > c.B or c.B > dev.max_threads_per_block then return false end
      local ty = c.B // c.TX
      if c.IL > 0 then                                          -- rows interleaved
        if not case.commutative or inner == 1 or ty == 1 then return false end
        if c.TX * c.CV < inner and (c.U == 1 or c.CHUNK < 1024) then
          return false                    -- narrower tiles: split with U >= 2 (unsplit: whole rows)
        end
      elseif c.CHUNK == 512 or c.CHUNK == 2048 then
        return false                                            -- the finer splits: IL only
      end
      if c.B == 64 then
        if ty <= cp2(len) and inner ~= 1 then return false end
      elseif ty > cp2(len) then
        return false                                            -- idle row groups
      end
      if c.TX * c.CV > cp2(inner) then return false end         -- idle columns
      if c.TX < math.min(32, cp2(inner) // c.CV) then return false end
      local tiles = outer * ((inner + c.TX * c.CV - 1) // (c.TX * c.CV))
      if not chunk_ok(c, tiles, ty * c.U) then return false end
      local part = c.CHUNK > 0 and math.min(len, c.CHUNK) or len
      return c.U == 1 or part >= ty * c.U
    end },
}
