-- axis_unsplit_space.lua - experiment space (fifteenth session, issue 16): unsplit configs
-- (CHUNK = 0) of both axis families near the shipped winners of the unsplit shapes, to time
-- the kernels with the split code compiled in (the build of the commit before) and without
-- it (CHUNK = 0: `RT_CHUNK == 0 ||` before gridDim.y == 1), A B A B:
--   build/redtune --axis --shapes "4096,4096,1;1048576,16,1;32768,1024,1;1,4096,4096;64,2048,512" \
--     --op sum --type f32 --space tools/exp/axis_unsplit_space.lua
local size, outer, len, inner = case.type_size, case.outer or 1, case.len or 1, case.inner or 1
local vmax = 16 // size
return {
  { family = "axis_rows",
    params = { B = { 128, 256 }, L = { 1, 8, 16, 64, 128, 256 }, V = { vmax // 2, vmax },
               U = { 2, 4 }, CHUNK = 0 },
    constraint = function(c, dev, case)
      return inner == 1 and c.L <= c.B and c.L * c.V <= len and c.L * c.V * 64 >= len
    end },
  { family = "axis_cols",
    params = { B = { 256, 512, 1024 }, TX = { 32, 64, 128 }, CV = { 1, 4 }, U = { 2, 4 },
               CHUNK = 0, IL = 0 },
    constraint = function(c, dev, case)
      return inner > 1 and c.TX * c.CV <= inner and c.CV * size <= 16
    end },
}
