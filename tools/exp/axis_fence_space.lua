-- axis_fence_space.lua - experiment space (fourteenth session, issue 16): split configs of both
-- axis families, to time the split finish with each thread's __threadfence() (the build
-- before) and without (the barrier and thread 0's acquire-release ticket alone), A B A B:
--   build/redtune --axis --shapes "16,4194304,1;1,32768,1024;1,65536,128;1,1048576,16" \
--     --op sum --type f32 --space tools/exp/axis_fence_space.lua
local size, outer, len, inner = case.type_size, case.outer or 1, case.len or 1, case.inner or 1
return {
  { family = "axis_rows",
    params = { B = { 128, 256, 512 }, L = { 128, 256 }, V = 16 // size, U = { 2, 4 },
               CHUNK = { 65536, 131072 }, IL = 1 },
    constraint = function(c, dev, case) return inner == 1 and c.L <= c.B end },
  { family = "axis_cols",
    params = { B = { 256, 512 }, TX = { 4, 32 }, CV = { 2, 4 }, U = { 2, 4 },
               CHUNK = { 1024, 2048 }, IL = { 0, 2 } },
    constraint = function(c, dev, case)
      return inner > 1 and c.TX * c.CV <= inner and (c.TX == 32 or inner < 64)
             and c.CV * size <= 16
    end },
}
