-- axis_il_unsplit_space.lua - experiment space (thirteenth session, written for the next: issues
-- 16 and 12): axis_cols unsplit (CHUNK = 0) with whole-row tiles, IL = 1 against IL = 2, timed
-- in pairs in one run. Without splits IL = 2 walks IL = 1's rows (its index arithmetic takes
-- the split count, 1, at run time); if the pairs are equal, the default space can offer one
-- interleaved value, which lets the local search step from unsplit to split configs
-- (docs/results.md, thirteenth session):
--   build/redtune --axis --shapes 64,2048,512 --op sum --type f32 --space tools/exp/axis_il_unsplit_space.lua
local size, inner = case.type_size, case.inner or 1
return {
  { family = "axis_cols",
    params = { B = { 256, 512, 1024 }, TX = { 32, 64, 128, 256 }, CV = { 1, 2, 4, 8 },
               U = { 1, 2, 4 }, CHUNK = 0, IL = { 1, 2 } },
    constraint = function(c, dev, case)
      return case.commutative and c.TX < c.B and c.CV * size <= 16
             and c.TX * c.CV >= inner and c.TX * c.CV <= 2 * inner
    end },
}
