-- minb_space.lua - seg_lb's keys register path with KW = 2 at the shipped shapes (B=512, R 8 or
-- 16, OST 0 or 1) and B=256 beside them: tuned by the committed build and by one whose keys
-- kernel asks ptxas for 1536 threads an SM (tools/exp/minb.patch; Nsight Compute found KW = 2's
-- len3 winner at 48% achieved occupancy, 2 blocks of 512 an SM by its registers, issue slots
-- 56% and DRAM 54% busy: latency-bound). For tools/exp/dev_session30.sh `minb`.
local function lb_vec(case) return math.min(4, 16 // case.type_size) end
return {
  { family = "seg_lb",
    params = { LAYOUT = 1, B = {256, 512}, R = {8, 16}, V = {2, 4}, STAGE = 0, PERSIST = 0,
               OST = {0, 1}, KW = 2 },
    constraint = function(c, dev, case)
      return case.layout == "keys" and c.V == lb_vec(case)
    end },
}
