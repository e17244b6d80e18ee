-- kw2_space.lua - seg_lb over keys at the shipped keys shapes (B=512, R 8 or 16, STAGE=0, OST 0
-- or 1) and B=256 beside them, the walk of KW = 1 against KW = 2 (written in the twenty-ninth
-- session after Nsight Compute found the H200's keys winners issue-bound: len3 at 30M, 87.6
-- million warp instructions, about 89 a thread an element, issue slots 71% busy, DRAM 46%;
-- docs/results.md). For tools/exp/dev_session30.sh `kw2`: each variant's best per case by
-- tools/exp/stage2_sum.py (seg_lb over keys by KW, OST and PF).
local function lb_vec(case) return math.min(4, 16 // case.type_size) end
return {
  { family = "seg_lb",
    params = { LAYOUT = 1, B = {256, 512}, R = {8, 16}, V = {2, 4}, STAGE = 0, PERSIST = 0,
               OST = {0, 1}, KW = {1, 2} },
    constraint = function(c, dev, case)
      return case.layout == "keys" and c.V == lb_vec(case)
    end },
}
