-- pipe_space.lua - seg_pipe (templates/seg_pipe.cu: a thread per segment from a stage that a
-- resident block fills a tile ahead) beside the short-segment winners it would replace:
-- seg_per SEGS = 2 (len3, len1) and STAGE = 2 (rand10_50). For tools/exp/dev_session26.sh
-- `pipe`: each variant's best per case by tools/exp/stage2_sum.py.
local function vec(case) return 16 // case.type_size end
local function vec4(case) return case.type_size >= 8 and 2 or 4 end
return {
  { family = "seg_pipe",
    params = { B = {128, 256, 512}, SEGS = {1, 2, 4, 8}, V = {2, 4, 8}, RV = 1, KB = {8, 12, 16, 20} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == vec(case) and c.RV * case.type_size <= 16
             and 2 * c.KB * 1024 + 3 * (c.B * c.SEGS + 1) * 4 <= 48 * 1024
             and c.B * c.SEGS <= 2048
    end },
  { family = "seg_per",
    params = { B = 128, LANES = 1, V = {2, 4}, SEGS = 2 },
    constraint = function(c, dev, case) return case.layout == "offsets" and c.V == vec4(case) end },
  { family = "seg_per",
    params = { B = 256, LANES = 1, STAGE = 2, V = {2, 4} },
    constraint = function(c, dev, case) return case.layout == "offsets" and c.V == vec4(case) end },
  -- LANES (not run on a GPU yet): a group of 2, 4 or 8 threads a segment, for rand10_50.
  { family = "seg_pipe",
    params = { B = {128, 256}, SEGS = {1, 2}, V = {2, 4}, LANES = {2, 4, 8}, KB = 16 },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == vec(case)
             and 2 * c.KB * 1024 + 3 * (c.B // c.LANES * c.SEGS + 1) * 4 <= 48 * 1024
    end },
}
