-- mark_space.lua - seg_mark (templates/seg_mark.cu: a block's chunk in tiles, the segment
-- starts marked by position) beside the offsets winners it would replace: seg_stream's heavy
-- shape on the H200 (CH = 4) and seg_per's short-segment shapes (SEGS = 2, STAGE = 2). For
-- tools/exp/dev_session25.sh `mark`: each variant's best per case by tools/exp/stage2_sum.py.
local function vec(case) return case.type_size >= 8 and 2 or 4 end
return {
  { family = "seg_mark",
    params = { B = {128, 256}, R = {8, 16}, V = {2, 4}, CH = {8, 32}, J = {4, 8}, PF = {0, 1} },
    constraint = function(c, dev, case) return case.layout == "offsets" and c.V == vec(case) end },
  { family = "seg_stream",
    params = { B = 256, R = 32, V = {2, 4}, PF = 0, MINW = 24, WS = 0, CH = 4 },
    constraint = function(c, dev, case) return case.layout == "offsets" and c.V == vec(case) end },
  { family = "seg_per",
    params = { B = 128, LANES = 1, V = {2, 4}, SEGS = 2 },
    constraint = function(c, dev, case) return case.layout == "offsets" and c.V == vec(case) end },
  { family = "seg_per",
    params = { B = 256, LANES = 1, STAGE = 2, V = {2, 4} },
    constraint = function(c, dev, case) return case.layout == "offsets" and c.V == vec(case) end },
}
