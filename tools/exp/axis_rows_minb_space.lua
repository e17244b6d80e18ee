-- axis_rows_minb_space.lua - experiment space (fourteenth session, issue 16): axis_rows with
-- its register cap set by MINB (blocks an SM must hold: __launch_bounds__' second argument)
-- against ax_min_blocks' estimate (MINB = 0: 72-128 registers for f32 sums, so 512-1024
-- threads an SM; gridstride's sum takes 32). Split rows interleaved in chunks of 65536 and
-- 131072, whole rows unsplit. MINB is not a parameter of the template: apply
-- bench/results/session14-2026-11-27/axis_rows_minb.patch first (measured on the H100,
-- 2026-11-27: within 0.2% of MINB = 0 on the goal shapes, so not kept; docs/results.md):
--   build/redtune --axis --shapes "16,4194304,1;4096,4096,1" --op sum --type f32 --space tools/exp/axis_rows_minb_space.lua
local size, len = case.type_size, case.len or 1
return {
  { family = "axis_rows",
    params = { B = { 128, 256, 512 }, L = { 128, 256 }, V = 16 // size, U = { 2, 4 },
               CHUNK = { 0, 65536, 131072 }, IL = { 0, 1 },
               MINB = { 0, 2, 3, 4, 5, 6, 8, 12, 16 } },
    constraint = function(c, dev, case)
      if c.L > c.B or c.MINB * c.B > 2048 then return false end
      if (c.CHUNK > 0) ~= (c.IL == 1) then return false end
      if c.CHUNK > 0 and len < 2 * c.CHUNK then return false end
      if c.CHUNK == 0 and len > 65536 then return false end
      return true
    end },
}
