-- axis_rows_unsplit_space.lua - experiment space (fourteenth session, issue 16): axis_rows
-- without splits (a block, or part of one, per row; no partials, no ticket), L = 64 .. B, to
-- time 256 MiB of f32 as many rows read unsplit against the same bytes as 16 split rows and as
-- a flat reduction (docs/results.md, fourteenth session):
--   build/redtune --axis --shapes "1024,65536,1;4096,16384,1" --op sum --type f32 --space tools/exp/axis_rows_unsplit_space.lua
local size = case.type_size
return {
  { family = "axis_rows",
    params = { B = { 128, 256, 512, 1024 }, L = { 64, 128, 256, 512, 1024 }, V = 16 // size,
               U = { 2, 4 }, CHUNK = 0, IL = 0 },
    constraint = function(c, dev, case)
      return c.L <= c.B and c.B // c.L <= 4
    end },
}
