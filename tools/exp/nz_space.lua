-- nz_space.lua - NZ (a segment folded from its first element by the glue's rt_fold_nz: float
-- min and max, fmin alone an element) at the H200's shipped short-segment shapes, NZ 0 and 1
-- side by side: seg_pipe (len3, len1) and seg_per STAGE = 2 (rand10_50). For
-- tools/exp/dev_session27.sh `nz` (written after the session's last GPU run): each config's
-- time by NZ from the run's CSV (tools/exp/nz_sum.py).
local function vec(case) return 16 // case.type_size end
local function vec4(case) return case.type_size >= 8 and 2 or 4 end
return {
  { family = "seg_pipe",
    params = { B = {128, 256}, SEGS = {4, 8}, V = {2, 4}, KB = {8, 12}, NZ = {0, 1} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == vec(case)
             and 2 * c.KB * 1024 + 3 * (c.B * c.SEGS + 1) * 4 <= 48 * 1024
    end },
  { family = "seg_per",
    params = { B = {128, 256}, LANES = 1, STAGE = 2, V = {2, 4}, NZ = {0, 1} },
    constraint = function(c, dev, case) return case.layout == "offsets" and c.V == vec4(case) end },
}
