-- axis_cols_fine_space.lua - experiment space (fortieth session, issue 16): axis_cols with
-- splits of fewer rows than the default space offers (CHUNK 32, 64, 128: the default's
-- smallest is 256), so that wide tiles (a whole row or a large part of it: long contiguous
-- reads) still get enough blocks to fill the GPU, beside the shipped winners of the three
-- column shapes that miss their goals, timed in one run:
--   build/redtune --axis --shapes '1,4096,4096;1,65536,128;64,2048,512' --op sum \
--       --type f32 --space tools/exp/axis_cols_fine_space.lua
-- The shipped winners (db/tuned/h100.sql): [4096 x 4096] f32 B=512 TX=32 CV=1 U=4 CHUNK=0,
-- bf16 B=1024 TX=32 CV=1 U=4 CHUNK=0; [65536 x 128] f32 B=512 TX=32 CV=2 U=4 CHUNK=1024 IL=2,
-- bf16 CV=1; [64 x 2048 x 512] f32 B=256 TX=64 CV=4 U=4 CHUNK=0, bf16 IL=1 unsplit.
local size, inner, len = case.type_size, case.inner or 1, case.len or 1
local shipped = {
  "512,32,1,4,0,0", "1024,32,1,4,0,0", "512,32,2,4,1024,2", "512,32,1,4,1024,2",
  "256,64,4,4,0,0", "1024,64,8,1,0,2",
}
local function key(c)
  return string.format("%d,%d,%d,%d,%d,%d", c.B, c.TX, c.CV, c.U, c.CHUNK, c.IL)
end
local is_shipped = {}
for _, k in ipairs(shipped) do is_shipped[k] = true end
return {
  { family = "axis_cols",
    params = { B = { 256, 512, 1024 }, TX = { 32, 64, 128, 256 }, CV = { 1, 2, 4, 8 },
               U = { 1, 2, 4 }, CHUNK = { 0, 32, 64, 128, 1024 }, IL = { 0, 2 } },
    constraint = function(c, dev, case)
      if not case.commutative or c.TX > c.B or c.CV * size > 16 then return false end
      if c.TX * c.CV > inner or inner % c.CV ~= 0 then return false end
      if is_shipped[key(c)] then return true end
      if c.CHUNK == 0 or c.CHUNK == 1024 then return false end   -- only the shipped ones
      if c.CV * size < 8 then return false end                    -- vectors of 8 or 16 bytes
      local ty = c.B // c.TX
      if ty * c.U * 2 > c.CHUNK then return false end             -- a split of 2 steps at least
      local tiles = (inner + c.TX * c.CV - 1) // (c.TX * c.CV) * (case.outer or 1)
      if tiles > 256 then return false end                        -- the narrow tiles: explored
      return len >= 2 * c.CHUNK
    end },
}
