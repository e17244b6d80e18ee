-- axis_cols_il_space.lua - experiment space (twelfth session, issue 16): axis_cols around the
-- shipped column winners that split len ([32768 x 1024]: B=512 TX=32 CV=2 U=4 CHUNK=4096 IL=0),
-- every config with its rows in contiguous parts (IL = 0), interleaved inside the block
-- (IL = 1) and interleaved over the splits too (IL = 2), timed side by side in one run:
--   build/redtune --axis --shapes '1,32768,1024' --op sum --type f32 --space tools/exp/axis_cols_il_space.lua
local size, inner = case.type_size, case.inner or 1
return {
  { family = "axis_cols",
    params = { B = { 256, 512, 1024 }, TX = { 16, 32, 64 }, CV = { 2, 4 }, U = { 2, 4 },
               CHUNK = { 1024, 4096 }, IL = { 0, 1, 2 } },
    constraint = function(c, dev, case)
      return case.commutative and c.TX <= c.B and c.CV * size <= 16 and c.TX * c.CV <= inner
    end },
}
