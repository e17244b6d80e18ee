-- axis_il_space.lua - experiment space (twelfth session, issue 16): axis_rows around the
-- [16 x 2^22] rows winners shipped before it (sum f32: B=128 L=128 V=2 U=4 CHUNK=65536), every
-- config with its rows' splits in contiguous parts (IL = 0) and in interleaved rounds (IL = 1),
-- so that the two walks are timed in pairs in one run:
--   build/redtune --axis --shapes 16,4194304,1 --op sum --type f32 --space tools/exp/axis_il_space.lua
local size = case.type_size
return {
  { family = "axis_rows",
    params = { B = { 128, 256, 512 }, L = { 128, 256 }, V = { 2, 4, 8 }, U = { 2, 4 },
               CHUNK = { 8192, 65536 }, IL = { 0, 1 } },
    constraint = function(c, dev, case)
      return c.L <= c.B and c.V * size <= 16
    end },
}
