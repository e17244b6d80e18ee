-- per_u_space.lua - seg_per's U (rounds a lane loads together, one shuffle tree a segment;
-- templates/seg_per.cu) beside the shipped space's medium-segment shapes (LANES 32 and B,
-- V one and two 16-byte vectors), for offsets len1000 and rand10_50 (the twenty-seventh
-- session: len1000 min f64 was 1.07x CUB on the H200). For tools/exp/dev_session27.sh `peru`:
-- each variant's best per case by tools/exp/stage2_sum.py.
local function vec(case) return 16 // case.type_size end
return {
  { family = "seg_per",
    params = { B = {128, 256}, LANES = {8, 16, 32, 128, 256}, V = {1, 2, 4, 8, 16}, U = {1, 2, 4} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and (c.LANES <= 32 or c.LANES == c.B)
             and (c.V == vec(case) or c.V == 2 * vec(case))
             and c.V * case.type_size * c.U <= 128
    end },
}
